/* Element types. */
#ifndef DFG_DTYPE_H
#define DFG_DTYPE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dfg_dtype {
    DFG_F32 = 0,
    DFG_F16,
    DFG_BF16,
    DFG_I32,
    DFG_I64,
    DFG_U8,
    DFG_BOOL, /* one byte, 0 or 1 */
    /* appended: the enum value is the dtype code of the program file */
    DFG_I8,
    DFG_I16,
    DFG_U16,
    DFG_F64, /* stored, moved and cast; no arithmetic (it would round) */
    DFG_DTYPE_COUNT
} dfg_dtype;

/* Bytes per element, 0 for an invalid dtype. */
size_t dfg_dtype_size(dfg_dtype dtype);
/* "f32", "f16", "bf16", "i32", "i64", "u8", "bool", "i8", "i16", "u16",
 * "f64"; "?" if invalid. */
const char *dfg_dtype_name(dfg_dtype dtype);
/* Parses a name as above; returns 0 on success, -1 if unknown. */
int dfg_dtype_from_name(const char *name, dfg_dtype *out);
/* 1 for f32, f16, bf16: the dtypes computed in f32 (not f64). */
int dfg_dtype_is_float(dfg_dtype dtype);

#ifdef __cplusplus
}
#endif
#endif
