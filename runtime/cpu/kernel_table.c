/* The CPU kernel of every op in src/ir/ops.def. Ops without an entry map to
 * NULL, which the backend reports as unsupported. */
#include "runtime/cpu/elementwise/binary_blocked.h"
#include "runtime/cpu_layout_rule.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/kernels_extra.h"
#include "runtime/cpu/reduce/pool_blocked.h"

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
    [DFG_OP_ATTENTION] = dfg_cpu_attention,
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
    [DFG_OP_SOFTMAX_CROSS_ENTROPY] = dfg_cpu_softmax_cross_entropy,
    [DFG_OP_SOFTMAX_CROSS_ENTROPY_GRAD] = dfg_cpu_softmax_cross_entropy_grad,
    [DFG_OP_CONV2D_GRAD_INPUT] = dfg_cpu_conv2d_grad_input,
    [DFG_OP_CONV2D_GRAD_WEIGHT] = dfg_cpu_conv2d_grad_weight,
    [DFG_OP_MAX_POOL_GRAD] = dfg_cpu_pool_grad,
    [DFG_OP_AVERAGE_POOL_GRAD] = dfg_cpu_pool_grad,
    [DFG_OP_GELU_GRAD] = dfg_cpu_gelu_grad,
    [DFG_OP_RELU_GRAD] = dfg_cpu_relu_grad,
    [DFG_OP_SLICE_GRAD] = dfg_cpu_slice_grad,
    [DFG_OP_GATHER_GRAD] = dfg_cpu_gather_grad,
    [DFG_OP_OPTIMIZER_TICK] = dfg_cpu_optimizer_tick,
    [DFG_OP_SGD_UPDATE] = dfg_cpu_optimizer_update,
    [DFG_OP_ADAM_UPDATE] = dfg_cpu_optimizer_update,
    [DFG_OP_ADAMW_UPDATE] = dfg_cpu_optimizer_update,
    [DFG_OP_FLOOR] = dfg_cpu_unary_math,
    [DFG_OP_CEIL] = dfg_cpu_unary_math,
    [DFG_OP_ROUND] = dfg_cpu_unary_math,
    [DFG_OP_SIN] = dfg_cpu_unary_math,
    [DFG_OP_COS] = dfg_cpu_unary_math,
    [DFG_OP_TAN] = dfg_cpu_unary_math,
    [DFG_OP_ASIN] = dfg_cpu_unary_math,
    [DFG_OP_ACOS] = dfg_cpu_unary_math,
    [DFG_OP_ATAN] = dfg_cpu_unary_math,
    [DFG_OP_SINH] = dfg_cpu_unary_math,
    [DFG_OP_COSH] = dfg_cpu_unary_math,
    [DFG_OP_ASINH] = dfg_cpu_unary_math,
    [DFG_OP_ACOSH] = dfg_cpu_unary_math,
    [DFG_OP_ATANH] = dfg_cpu_unary_math,
    [DFG_OP_MOD] = dfg_cpu_mod,
    [DFG_OP_FMOD] = dfg_cpu_mod,
    [DFG_OP_ARG_MAX] = dfg_cpu_arg_reduce,
    [DFG_OP_ARG_MIN] = dfg_cpu_arg_reduce,
    [DFG_OP_GATHER_ELEMENTS] = dfg_cpu_gather_elements,
    [DFG_OP_SCATTER_ND] = dfg_cpu_scatter_nd,
    [DFG_OP_RESIZE] = dfg_cpu_resize,
    [DFG_OP_TOP_K] = dfg_cpu_top_k,
    [DFG_OP_ALL_REDUCE_START] = dfg_cpu_all_reduce_start,
    [DFG_OP_ALL_REDUCE_WAIT] = dfg_cpu_all_reduce_wait,
    [DFG_OP_SHARD_WEIGHTS] = dfg_cpu_shard_weights,
    [DFG_OP_ALL_GATHER_WEIGHTS] = dfg_cpu_all_gather_weights,
    [DFG_OP_BATCH_NORM_TRAIN] = dfg_cpu_batch_norm_train,
    [DFG_OP_BATCH_NORM_TRAIN_GRAD] = dfg_cpu_batch_norm_train_grad,
    [DFG_OP_DROPOUT] = dfg_cpu_copy,
    [DFG_OP_DROPOUT_TRAIN] = dfg_cpu_dropout_train,
    [DFG_OP_SILU] = dfg_cpu_fused_activation,
    [DFG_OP_HARDSWISH] = dfg_cpu_fused_activation,
    [DFG_OP_CONV2D_WEIGHT_SGD_UPDATE] = dfg_cpu_conv2d_weight_update,
    [DFG_OP_CONV2D_WEIGHT_ADAM_UPDATE] = dfg_cpu_conv2d_weight_update,
    [DFG_OP_CONV2D_WEIGHT_ADAMW_UPDATE] = dfg_cpu_conv2d_weight_update,
    [DFG_OP_REORDER] = dfg_cpu_reorder,
    [DFG_OP_PUT_ROWS] = dfg_cpu_put_rows,
};

dfg_cpu_kernel dfg_cpu_kernel_for(dfg_op op)
{
    if ((unsigned)op >= DFG_OP_COUNT)
        return NULL;
    return kernels[op];
}

dfg_cpu_kernel dfg_cpu_kernel_for_step(const dfg_kernel_args *step)
{
    dfg_cpu_kernel kernel = dfg_cpu_kernel_for(step->op);
    if (step->n_inputs < 1 || step->in_types[0].layout == DFG_LAYOUT_PLAIN)
        return kernel;
    if (kernel == dfg_cpu_pool)
        return dfg_cpu_max_pool_blocked;
    if (kernel == dfg_cpu_reduce)
        return dfg_cpu_global_average_pool_blocked;
    if (kernel == dfg_cpu_batch_norm)
        return dfg_cpu_batch_norm_blocked;
    if (kernel == dfg_cpu_binary && step->n_inputs == 2 &&
        dfg_cpu_binary_takes_blocked(step->op, step->in_types,
                                     &step->out_types[0],
                                     step->out_types[0].layout))
        return dfg_cpu_channel_binary_blocked;
    return kernel;
}
