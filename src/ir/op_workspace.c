/* Workspace rules of the op table: the bytes of per-step scratch an op
 * needs, planned as a tensor living for that one step. */
#include "ir/geometry/backward_geometry.h"
#include "ir/op_table.h"
#include "math/partial_sums.h"

/* -1 when the operands do not describe a valid conv (the shape rule has
 * rejected them already; the message is set). */
int64_t dfg_workspace_conv2d(const dfg_attrs *attrs, const dfg_type *in,
                             int32_t n_in, const dfg_type *out, int32_t n_out)
{
    if (n_in < 2 || n_out < 1)
        return -1;
    dfg_conv_geometry g;
    if (dfg_conv_geometry_make(attrs, &in[0], &in[1], &out[0], &g) != DFG_OK)
        return -1;
    /* Blocked operands: only the CPU backend's oneDNN runs the conv, in
     * the scratch its rule plans (passes/layout_assign.c); no im2col. An
     * nhwc one (cuDNN's) keeps the im2col bytes as cuDNN's workspace. */
    if ((in[0].layout != DFG_LAYOUT_PLAIN &&
         in[0].layout != DFG_LAYOUT_NHWC) ||
        (out[0].layout != DFG_LAYOUT_PLAIN &&
         out[0].layout != DFG_LAYOUT_NHWC))
        return 0;
    return dfg_conv_forward_workspace_bytes(&g);
}

/* reduce_sum and reduce_mean of float data reduced to few outputs: each
 * output's sum spread over blocks (math/partial_sums.h), their partial
 * sums planned here. */
int64_t dfg_workspace_reduce(const dfg_attrs *attrs, const dfg_type *in,
                             int32_t n_in, const dfg_type *out, int32_t n_out)
{
    (void)attrs;
    if (n_in < 1 || n_out < 1)
        return -1;
    dfg_dtype dtype = in[0].dtype;
    int64_t outputs = dfg_type_numel(&out[0]);
    if ((dtype != DFG_F32 && dtype != DFG_F16 && dtype != DFG_BF16) ||
        outputs <= 0)
        return 0;
    int32_t split =
        dfg_partial_sum_split(outputs, dfg_type_numel(&in[0]) / outputs);
    return split > 1 ? outputs * split * (int64_t)sizeof(float) : 0;
}

/* batch_norm_train and its gradient over f32 x [N, C, ...]: each
 * channel's two sums (the mean and the squared deviations; dy and
 * dy * xhat) spread over blocks (dfg_partial_sum_channel_split), their
 * partial sums planned here. The least is 0: without them the kernels
 * run a block per channel (program files written before keep loading). */
int64_t dfg_workspace_batch_norm_train(const dfg_attrs *attrs,
                                       const dfg_type *in, int32_t n_in,
                                       const dfg_type *out, int32_t n_out)
{
    (void)attrs, (void)out, (void)n_out;
    if (n_in < 1 || in[0].rank < 2)
        return -1;
    int64_t channels = in[0].shape[1];
    if (in[0].dtype != DFG_F32 || channels <= 0)
        return 0;
    int32_t split = dfg_partial_sum_channel_split(
        channels, dfg_type_numel(&in[0]) / channels);
    return split > 1 ? 2 * channels * split * (int64_t)sizeof(float) : 0;
}

/* The partial sums of a sum spread over blocks (math/partial_sums.h) over
 * input 0's elements: the loss of softmax_cross_entropy, the squared
 * update of sgd/adam/adamw_update. */
int64_t dfg_workspace_partial_sums(const dfg_attrs *attrs, const dfg_type *in,
                                   int32_t n_in, const dfg_type *out,
                                   int32_t n_out)
{
    (void)attrs, (void)out, (void)n_out;
    if (n_in < 1)
        return -1;
    return dfg_partial_sum_blocks(dfg_type_numel(&in[0])) *
           (int64_t)sizeof(float);
}

/* The forward conv of a conv2d or conv2d gradient step: 0 and *g, or -1
 * when the operands do not describe one. */
static int conv_of_step(dfg_op op, const dfg_attrs *attrs, const dfg_type *in,
                        int32_t n_in, const dfg_type *out, int32_t n_out,
                        dfg_conv_geometry *g)
{
    if (n_in < 2 || n_out < 1)
        return -1;
    dfg_status st = DFG_ERR_INVALID_ARGUMENT;
    if (op == DFG_OP_CONV2D)
        st = dfg_conv_geometry_make(attrs, &in[0], &in[1], &out[0], g);
    else if (op == DFG_OP_CONV2D_GRAD_INPUT)
        st = dfg_conv_grad_geometry(attrs, &out[0], &in[1], &in[0], g);
    else if (op == DFG_OP_CONV2D_GRAD_WEIGHT)
        st = dfg_conv_grad_geometry(attrs, &in[1], &out[0], &in[0], g);
    return st == DFG_OK ? 0 : -1;
}

int64_t dfg_op_least_workspace(dfg_op op, const dfg_attrs *attrs,
                               const dfg_type *in, int32_t n_in,
                               const dfg_type *out, int32_t n_out)
{
    const dfg_op_info *info = dfg_op_get(op);
    if (!info || !info->workspace)
        return 0;
    if (op == DFG_OP_BATCH_NORM_TRAIN || op == DFG_OP_BATCH_NORM_TRAIN_GRAD)
        return 0;
    int64_t full = info->workspace(attrs, in, n_in, out, n_out);
    dfg_conv_geometry g;
    if (full <= 0 || conv_of_step(op, attrs, in, n_in, out, n_out, &g) != 0)
        return full;
    if (op == DFG_OP_CONV2D)
        return dfg_conv_forward_least_workspace_bytes(&g);
    int64_t saved = op == DFG_OP_CONV2D_GRAD_INPUT
                        ? dfg_conv_grad_input_saved_bytes(&g, &in[0], &out[0])
                        : 0;
    return saved + dfg_conv_grad_least_workspace_bytes(&g);
}
