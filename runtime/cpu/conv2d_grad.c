/* The conv2d backward ops, f32 (the shape rules check), on the forward's
 * geometry, over column chunks of the whole batch (backward_geometry.h):
 *   conv2d_grad_input(dy, w) -> dx: per group and chunk, the chunk's dy
 *     columns gathered, col[k, chunk] = w^T dy (one product), then col2im
 *     adds each entry back to the input element it was read from;
 *   conv2d_grad_weight(dy, x) -> dw: per group and chunk, dy's columns and
 *     x's im2col gathered, then dw += dy col^T (one product).
 * Chunks are as large as the planned workspace holds, from one output row
 * up to the full ones (conv_geometry.h).
 * A 1x1 conv with stride 1 and no padding needs no im2col: the products
 * run per image on x and dx directly, as the forward does. The products
 * go through dfg_cpu_gemm_mixed, which shares large ones among threads. */
#include <string.h>

#include "backward_geometry.h"
#include "conv_columns.h"
#include "error.h"
#include "gemm_mixed.h"
#include "kernels.h"

/* The op's part of the step's workspace: at least its least chunk. */
static dfg_status check_workspace(const dfg_kernel_args *args,
                                  const dfg_conv_geometry *g)
{
    int64_t least = dfg_conv_grad_least_workspace_bytes(g);
    if (args->workspace_bytes < least || (least > 0 && !args->workspace))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "%s: the step has %lld bytes of workspace, its "
                         "column chunk needs at least %lld",
                         dfg_op_get(args->op)->name,
                         (long long)args->workspace_bytes, (long long)least);
    return DFG_OK;
}

/* An f32 matrix operand; trans: stored transposed (gemm_mixed.h). */
static dfg_cpu_matrix matrix(const float *data, int64_t ld, int trans)
{
    return (dfg_cpu_matrix){DFG_F32, data, ld, trans};
}

/* The chunks of one group: dy's columns then the im2col columns, both in
 * the workspace. */
typedef struct chunk_buffers {
    float *dy; /* [M/group, chunk] */
    float *col; /* [k, chunk] */
    int64_t chunk;
} chunk_buffers;

/* Chunks as large as the step's workspace holds, up to the full ones. */
static chunk_buffers buffers_of(const dfg_conv_geometry *g,
                                const dfg_kernel_args *args)
{
    int64_t chunk = dfg_conv_grad_chunk_within(g, args->workspace_bytes);
    return (chunk_buffers){args->workspace,
                           (float *)args->workspace +
                               g->filters_per_group * chunk,
                           chunk};
}

/* dx_n += w^T dy_n for every image and group: a direct (1x1) conv. */
static dfg_status grad_input_direct(const dfg_conv_geometry *g,
                                    const float *dy, const float *w, float *dx)
{
    dfg_status st = DFG_OK;
    for (int64_t n = 0; n < g->batch && st == DFG_OK; n++)
        for (int64_t grp = 0; grp < g->group && st == DFG_OK; grp++) {
            dfg_cpu_matrix a = matrix(w + grp * g->filters_per_group * g->k,
                                      g->k, 1);
            dfg_cpu_matrix b = matrix(
                dy + (n * g->out_channels + grp * g->filters_per_group) *
                         g->pixels, g->pixels, 0);
            st = dfg_cpu_gemm_mixed(
                g->k, g->pixels, g->filters_per_group, 1.0f, &a, &b, 0.0f,
                DFG_F32,
                dx + (n * g->in_channels + grp * g->channels_per_group) *
                         g->pixels, g->pixels);
        }
    return st;
}

dfg_status dfg_cpu_conv2d_grad_input(const dfg_kernel_args *args)
{
    dfg_conv_geometry g;
    dfg_status st = dfg_conv_grad_geometry(args->attrs, &args->out_types[0],
                                           &args->in_types[1],
                                           &args->in_types[0], &g);
    if (st == DFG_OK)
        st = check_workspace(args, &g);
    if (st != DFG_OK)
        return st;
    const float *dy = args->in[0], *w = args->in[1];
    float *dx = args->out[0];
    if (g.direct)
        return grad_input_direct(&g, dy, w, dx);
    memset(dx, 0, (size_t)dfg_type_bytes(&args->out_types[0]));
    chunk_buffers b = buffers_of(&g, args);
    int64_t columns = g.batch * g.pixels;
    for (int64_t grp = 0; grp < g.group && st == DFG_OK; grp++) {
        dfg_cpu_matrix wt = matrix(w + grp * g.filters_per_group * g.k, g.k, 1);
        for (int64_t c0 = 0; c0 < columns && st == DFG_OK; c0 += b.chunk) {
            int64_t cols = columns - c0 < b.chunk ? columns - c0 : b.chunk;
            dfg_cpu_conv_gather_dy(&g, dy, grp, c0, cols, b.dy);
            dfg_cpu_matrix dyc = matrix(b.dy, cols, 0);
            st = dfg_cpu_gemm_mixed(g.k, cols, g.filters_per_group, 1.0f, &wt,
                                    &dyc, 0.0f, DFG_F32, b.col, cols);
            if (st == DFG_OK)
                dfg_cpu_conv_col2im_add(&g, b.col, grp, c0, cols, dx);
        }
    }
    return st;
}

/* dw += dy_n x_n^T for every image and group: a direct (1x1) conv. */
static dfg_status grad_weight_direct(const dfg_conv_geometry *g,
                                     const float *dy, const float *x,
                                     float *dw)
{
    dfg_status st = DFG_OK;
    for (int64_t n = 0; n < g->batch && st == DFG_OK; n++)
        for (int64_t grp = 0; grp < g->group && st == DFG_OK; grp++) {
            dfg_cpu_matrix a = matrix(
                dy + (n * g->out_channels + grp * g->filters_per_group) *
                         g->pixels, g->pixels, 0);
            dfg_cpu_matrix b = matrix(
                x + (n * g->in_channels + grp * g->channels_per_group) *
                        g->pixels, g->pixels, 1);
            st = dfg_cpu_gemm_mixed(g->filters_per_group, g->k, g->pixels,
                                    1.0f, &a, &b, n > 0 ? 1.0f : 0.0f, DFG_F32,
                                    dw + grp * g->filters_per_group * g->k,
                                    g->k);
        }
    return st;
}

dfg_status dfg_cpu_conv2d_grad_weight(const dfg_kernel_args *args)
{
    dfg_conv_geometry g;
    dfg_status st = dfg_conv_grad_geometry(args->attrs, &args->in_types[1],
                                           &args->out_types[0],
                                           &args->in_types[0], &g);
    if (st == DFG_OK)
        st = check_workspace(args, &g);
    if (st != DFG_OK)
        return st;
    const float *dy = args->in[0], *x = args->in[1];
    float *dw = args->out[0];
    if (g.direct)
        return grad_weight_direct(&g, dy, x, dw);
    chunk_buffers b = buffers_of(&g, args);
    int64_t columns = g.batch * g.pixels;
    for (int64_t grp = 0; grp < g.group && st == DFG_OK; grp++)
        for (int64_t c0 = 0; c0 < columns && st == DFG_OK; c0 += b.chunk) {
            int64_t cols = columns - c0 < b.chunk ? columns - c0 : b.chunk;
            dfg_cpu_conv_gather_dy(&g, dy, grp, c0, cols, b.dy);
            dfg_cpu_conv_im2col(&g, x, grp, c0, cols, b.col);
            dfg_cpu_matrix dyc = matrix(b.dy, cols, 0);
            dfg_cpu_matrix colt = matrix(b.col, cols, 1);
            st = dfg_cpu_gemm_mixed(g.filters_per_group, g.k, cols, 1.0f, &dyc,
                                    &colt, c0 > 0 ? 1.0f : 0.0f, DFG_F32,
                                    dw + grp * g.filters_per_group * g.k, g.k);
        }
    return st;
}
