#include "op_table.h"

#include <string.h>

static const dfg_op_info op_table[DFG_OP_COUNT] = {
#define DFG_OP(id, nm, onnx, min_in, max_in, n_out, types, shp, flp, als, ws) \
    [DFG_OP_##id] = {.name = nm,                                              \
                     .onnx_name = onnx,                                       \
                     .min_inputs = min_in,                                    \
                     .max_inputs = max_in,                                    \
                     .outputs = n_out,                                        \
                     .input0_types = DFG_TYPES_##types,                       \
                     .shape = dfg_shape_##shp,                                \
                     .flops = dfg_flops_##flp,                                \
                     .alias = DFG_ALIAS_##als,                                \
                     .workspace = ws},
#include "ops.def"
#undef DFG_OP
};

const dfg_op_info *dfg_op_get(dfg_op op)
{
    if ((unsigned)op >= DFG_OP_COUNT)
        return NULL;
    return &op_table[op];
}

int dfg_op_from_name(const char *name, dfg_op *out)
{
    for (int i = 0; name && i < DFG_OP_COUNT; i++) {
        if (strcmp(op_table[i].name, name) == 0) {
            *out = (dfg_op)i;
            return 0;
        }
    }
    return -1;
}
