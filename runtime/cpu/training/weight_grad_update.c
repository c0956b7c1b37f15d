/* conv2d_weight_{sgd,adam,adamw}_update(dy, x, w, control, state) -> the
 * update's squared norm (ops.def): the conv's weight gradient, a slice
 * of output channels at a time (src/ir/geometry/weight_update_geometry.h), each
 * slice applied by the optimizer as soon as it is made, so that only a
 * slice of the gradient ever exists. The slice is computed as
 * conv2d_grad_weight computes those rows (same column chunks, so the same
 * sums) and stored in the gradient's dtype, and the update is the one of
 * sgd/adam/adamw_update (optimizer_step.h), element by element in the
 * same order: the weights, the state and the norm are those of the
 * unfused pair, bit for bit. */
#include "ir/geometry/backward_geometry.h"
#include "runtime/cpu/linalg/conv_grad_rows.h"
#include "util/error.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/training/optimizer_step.h"
#include "ir/geometry/weight_update_geometry.h"
#include "math/training_layout.h"

static dfg_op update_op(dfg_op fused)
{
    return fused == DFG_OP_CONV2D_WEIGHT_SGD_UPDATE    ? DFG_OP_SGD_UPDATE
           : fused == DFG_OP_CONV2D_WEIGHT_ADAM_UPDATE ? DFG_OP_ADAM_UPDATE
                                                       : DFG_OP_ADAMW_UPDATE;
}

dfg_status dfg_cpu_conv2d_weight_update(const dfg_kernel_args *args)
{
    dfg_conv_geometry g;
    dfg_status st = dfg_conv_grad_geometry(args->attrs, &args->in_types[1],
                                           &args->in_types[2],
                                           &args->in_types[0], &g);
    dfg_dtype dtype = args->in_types[0].dtype;
    int64_t size = (int64_t)dfg_dtype_size(dtype);
    if (st == DFG_OK && g.group != 1)
        st = dfg_error(DFG_ERR_UNSUPPORTED, "%s: a conv of %lld groups",
                       dfg_op_get(args->op)->name, (long long)g.group);
    if (st == DFG_OK && (args->workspace_bytes <
                             dfg_weight_update_workspace_bytes(&g, size) ||
                         !args->workspace))
        st = dfg_error(DFG_ERR_INVALID_ARGUMENT,
                       "%s: the step has %lld bytes of workspace, its slices "
                       "need %lld", dfg_op_get(args->op)->name,
                       (long long)args->workspace_bytes,
                       (long long)dfg_weight_update_workspace_bytes(&g, size));
    *(float *)args->out[0] = 0.0f;
    const float *control = args->in[3];
    if (st != DFG_OK || control[DFG_CONTROL_APPLY] == 0.0f)
        return st;
    int64_t rows = dfg_weight_slice_rows(&g, size), n = g.out_channels * g.k;
    void *slice = args->workspace;
    float *chunks = (float *)((char *)args->workspace +
                              dfg_weight_slice_bytes(&g, size));
    float *w = (float *)args->in[2], *state = (float *)args->in[4];
    /* With the batch's columns in one chunk, or all in the workspace
     * (weight_update_geometry.h), the im2col is made once and read by
     * every slice. */
    int64_t chunk = dfg_conv_grad_chunk(&g);
    int whole = dfg_weight_update_whole_columns(&g, size);
    int one_chunk = g.batch * g.pixels <= chunk;
    double squares = 0.0;
    for (int64_t m0 = 0; m0 < g.out_channels && st == DFG_OK; m0 += rows) {
        int64_t r = g.out_channels - m0 < rows ? g.out_channels - m0 : rows;
        st = whole ? dfg_cpu_conv_grad_weight_rows_whole(
                         &g, m0, r, args->in[0], args->in[1], dtype, chunks,
                         chunk, m0 > 0, slice, dtype)
                   : dfg_cpu_conv_grad_weight_rows(
                         &g, m0, r, r, args->in[0], args->in[1], dtype,
                         chunks, chunk, one_chunk && m0 > 0, slice, dtype);
        dfg_cpu_gradient gradient = {.grad = slice, .grad_dtype = dtype,
                                     .first = m0 * g.k};
        if (st == DFG_OK)
            dfg_cpu_optimizer_apply(update_op(args->op), control, &gradient,
                                    m0 * g.k, (m0 + r) * g.k, w, state, n,
                                    &squares);
    }
    *(float *)args->out[0] = (float)squares;
    return st;
}
