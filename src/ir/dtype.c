#include "dfg/dtype.h"

#include <string.h>

static const struct {
    const char *name;
    size_t size;
} dtype_table[DFG_DTYPE_COUNT] = {
    [DFG_F32] = {"f32", 4}, [DFG_F16] = {"f16", 2}, [DFG_BF16] = {"bf16", 2},
    [DFG_I32] = {"i32", 4}, [DFG_I64] = {"i64", 8}, [DFG_U8] = {"u8", 1},
    [DFG_BOOL] = {"bool", 1}, [DFG_I8] = {"i8", 1}, [DFG_I16] = {"i16", 2},
    [DFG_U16] = {"u16", 2}, [DFG_F64] = {"f64", 8},
};

size_t dfg_dtype_size(dfg_dtype dtype)
{
    if ((unsigned)dtype >= DFG_DTYPE_COUNT)
        return 0;
    return dtype_table[dtype].size;
}

const char *dfg_dtype_name(dfg_dtype dtype)
{
    if ((unsigned)dtype >= DFG_DTYPE_COUNT)
        return "?";
    return dtype_table[dtype].name;
}

int dfg_dtype_from_name(const char *name, dfg_dtype *out)
{
    for (int i = 0; name && i < DFG_DTYPE_COUNT; i++) {
        if (strcmp(name, dtype_table[i].name) == 0) {
            *out = (dfg_dtype)i;
            return 0;
        }
    }
    return -1;
}

int dfg_dtype_is_float(dfg_dtype dtype)
{
    return dtype == DFG_F32 || dtype == DFG_F16 || dtype == DFG_BF16;
}
