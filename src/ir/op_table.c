#include "ir/op_table.h"

#include <string.h>
#include "ir/geometry/conv_geometry.h"

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
#include "ir/ops.def"
#undef DFG_OP
};

const dfg_op_info *dfg_op_get(dfg_op op)
{
    if ((unsigned)op >= DFG_OP_COUNT)
        return NULL;
    return &op_table[op];
}

int dfg_op_uses_blas(dfg_op op)
{
    return op == DFG_OP_MATMUL || op == DFG_OP_GEMM || op == DFG_OP_CONV2D ||
           op == DFG_OP_CONV2D_GRAD_INPUT || op == DFG_OP_CONV2D_GRAD_WEIGHT ||
           op == DFG_OP_ATTENTION;
}

int dfg_op_writes_inputs(dfg_op op)
{
    return dfg_op_updated_weight_input(op) >= 0 ||
           op == DFG_OP_ALL_GATHER_WEIGHTS || op == DFG_OP_DROPOUT_TRAIN;
}

int32_t dfg_op_updated_weight_input(dfg_op op)
{
    if (op == DFG_OP_SGD_UPDATE || op == DFG_OP_ADAM_UPDATE ||
        op == DFG_OP_ADAMW_UPDATE)
        return 0;
    if (op == DFG_OP_CONV2D_WEIGHT_SGD_UPDATE ||
        op == DFG_OP_CONV2D_WEIGHT_ADAM_UPDATE ||
        op == DFG_OP_CONV2D_WEIGHT_ADAMW_UPDATE)
        return 2;
    return -1;
}

int dfg_op_may_write_over_input(dfg_op op, const dfg_attrs *attrs,
                                const dfg_type *in, int32_t n_in,
                                const dfg_type *out, int32_t n_out,
                                int32_t input)
{
    const dfg_op_info *info = dfg_op_get(op);
    if (op == DFG_OP_CONV2D && input == 0)
        return dfg_conv_may_write_over_x(attrs, in, n_in, out, n_out);
    return (info && info->alias == DFG_ALIAS_INPLACE) ||
           ((op == DFG_OP_CONV2D || op == DFG_OP_MATMUL) && input == 3) ||
           (op == DFG_OP_CONV2D_GRAD_INPUT && input == 0) ||
           (op == DFG_OP_PUT_ROWS && input == 0 && n_in == 2);
}

int64_t dfg_op_in_place_workspace(dfg_op op, const dfg_attrs *attrs,
                                  const dfg_type *in, int32_t n_in,
                                  const dfg_type *out, int32_t n_out,
                                  int32_t input)
{
    dfg_conv_geometry g;
    if (op != DFG_OP_CONV2D || input != 0 ||
        !dfg_conv_may_write_over_x(attrs, in, n_in, out, n_out) ||
        dfg_conv_geometry_make(attrs, &in[0], &in[1], &out[0], &g) != DFG_OK)
        return -1;
    return dfg_conv_in_place_workspace_bytes(&g);
}

int64_t dfg_step_workspace_bytes(dfg_op op, int64_t op_bytes,
                                 int64_t blas_bytes)
{
    if (blas_bytes <= 0 || !dfg_op_uses_blas(op))
        return op_bytes;
    return dfg_align_up(op_bytes, 256) + blas_bytes;
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
