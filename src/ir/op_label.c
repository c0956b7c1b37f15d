/* The label of a step in reports: its op's name, then its fused post-ops
 * (op_table.h). */
#include <stdio.h>

#include "ir/op_table.h"

const char *dfg_post_op_name(int32_t kind)
{
    static const char *const names[DFG_POST_OP_COUNT] = {
        [DFG_POST_RELU] = "relu",
        [DFG_POST_CLIP] = "clip",
        [DFG_POST_SIGMOID] = "sigmoid",
        [DFG_POST_HARDSIGMOID] = "hardsigmoid",
        [DFG_POST_HARDSWISH] = "hardswish",
        [DFG_POST_SILU] = "silu",
        [DFG_POST_GELU_ERF] = "gelu",
        [DFG_POST_GELU_TANH] = "gelu_tanh",
        [DFG_POST_SUM] = "add",
        [DFG_POST_TANH] = "tanh",
    };
    return kind >= 0 && kind < DFG_POST_OP_COUNT ? names[kind] : "?";
}

const char *dfg_op_label(dfg_op op, const dfg_attrs *attrs, char *buf,
                         size_t size)
{
    const dfg_op_info *info = dfg_op_get(op);
    const char *name = info ? info->name : "?";
    if ((op != DFG_OP_CONV2D && op != DFG_OP_MATMUL && op != DFG_OP_GEMM &&
         op != DFG_OP_BATCH_NORM) ||
        attrs->n_post_ops <= 0)
        return name;
    int used = snprintf(buf, size, "%s", name);
    for (int32_t i = 0; i < attrs->n_post_ops && used >= 0 &&
                        (size_t)used < size; i++)
        used += snprintf(buf + used, size - (size_t)used, "+%s",
                         dfg_post_op_name(attrs->post_ops[i]));
    return buf;
}
