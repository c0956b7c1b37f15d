/* The CPU kernel of every op in src/ops.def. Ops without an entry map to
 * NULL, which the backend reports as unsupported. */
#include "kernels.h"

static const dfg_cpu_kernel kernels[DFG_OP_COUNT] = {
    [DFG_OP_ADD] = dfg_cpu_binary,
    [DFG_OP_SUB] = dfg_cpu_binary,
    [DFG_OP_MUL] = dfg_cpu_binary,
    [DFG_OP_DIV] = dfg_cpu_binary,
    [DFG_OP_POW] = dfg_cpu_binary,
    [DFG_OP_MAX] = dfg_cpu_binary,
    [DFG_OP_MIN] = dfg_cpu_binary,
    [DFG_OP_NEG] = dfg_cpu_unary,
    [DFG_OP_ABS] = dfg_cpu_unary,
    [DFG_OP_EXP] = dfg_cpu_unary,
    [DFG_OP_LOG] = dfg_cpu_unary,
    [DFG_OP_SQRT] = dfg_cpu_unary,
    [DFG_OP_RECIPROCAL] = dfg_cpu_unary,
    [DFG_OP_RELU] = dfg_cpu_unary,
    [DFG_OP_LEAKY_RELU] = dfg_cpu_unary,
    [DFG_OP_SIGMOID] = dfg_cpu_unary,
    [DFG_OP_TANH] = dfg_cpu_unary,
    [DFG_OP_GELU] = dfg_cpu_unary,
    [DFG_OP_ERF] = dfg_cpu_unary,
    [DFG_OP_CLIP] = dfg_cpu_unary,
    [DFG_OP_WHERE] = dfg_cpu_where,
    [DFG_OP_EQUAL] = dfg_cpu_compare,
    [DFG_OP_LESS] = dfg_cpu_compare,
    [DFG_OP_GREATER] = dfg_cpu_compare,
    [DFG_OP_CAST] = dfg_cpu_cast,
    [DFG_OP_MATMUL] = dfg_cpu_matmul,
    [DFG_OP_GEMM] = dfg_cpu_gemm,
    [DFG_OP_CONV2D] = dfg_cpu_conv2d,
    [DFG_OP_MAX_POOL] = dfg_cpu_pool,
    [DFG_OP_AVERAGE_POOL] = dfg_cpu_pool,
    [DFG_OP_GLOBAL_AVERAGE_POOL] = dfg_cpu_reduce,
    [DFG_OP_BATCH_NORM] = dfg_cpu_batch_norm,
    [DFG_OP_SOFTMAX] = dfg_cpu_softmax,
    [DFG_OP_LOG_SOFTMAX] = dfg_cpu_softmax,
    [DFG_OP_LAYER_NORM] = dfg_cpu_layer_norm,
    [DFG_OP_REDUCE_SUM] = dfg_cpu_reduce,
    [DFG_OP_REDUCE_MEAN] = dfg_cpu_reduce,
    [DFG_OP_REDUCE_MAX] = dfg_cpu_reduce,
    [DFG_OP_RESHAPE] = dfg_cpu_copy,
    [DFG_OP_FLATTEN] = dfg_cpu_copy,
    [DFG_OP_TRANSPOSE] = dfg_cpu_transpose,
    [DFG_OP_CONCAT] = dfg_cpu_concat,
    [DFG_OP_SPLIT] = dfg_cpu_split,
    [DFG_OP_SLICE] = dfg_cpu_slice,
    [DFG_OP_SQUEEZE] = dfg_cpu_copy,
    [DFG_OP_UNSQUEEZE] = dfg_cpu_copy,
    [DFG_OP_EXPAND] = dfg_cpu_expand,
    [DFG_OP_GATHER] = dfg_cpu_gather,
    [DFG_OP_PAD] = dfg_cpu_pad,
    [DFG_OP_IDENTITY] = dfg_cpu_copy,
};

dfg_cpu_kernel dfg_cpu_kernel_for(dfg_op op)
{
    if ((unsigned)op >= DFG_OP_COUNT)
        return NULL;
    return kernels[op];
}
