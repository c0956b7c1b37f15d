/* Workspace rules of the op table: the bytes of per-step scratch an op
 * needs, planned as a tensor living for that one step. */
#include "conv_geometry.h"
#include "math/partial_sums.h"
#include "op_table.h"

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
