/* The conv2d backward ops, f32 (the shape rules check), on the forward's
 * geometry and bounded im2col chunks (src/backward_geometry.h):
 *   conv2d_grad_input(dy, w) -> dx: per image and group, for each chunk of
 *     output pixels, col[k, chunk] = w^T dy[:, chunk] (one sgemm), then
 *     col2im adds each entry back to the input element it was read from;
 *   conv2d_grad_weight(dy, x) -> dw: per image and group, for each chunk,
 *     im2col of x, then dw += dy[:, chunk] col^T (one sgemm).
 * A 1x1 conv with stride 1 and no padding needs no im2col: the products
 * run on x and dx directly, as the forward does. */
#include <cblas.h>
#include <string.h>

#include "backward_geometry.h"
#include "error.h"
#include "kernels.h"
#include "math/im2col.h"

static dfg_im2col_dims im2col_dims(const dfg_conv_geometry *g)
{
    return (dfg_im2col_dims){g->in_h, g->in_w, g->kernel_h, g->kernel_w,
                             g->out_h, g->out_w, g->stride[0], g->stride[1],
                             g->dilation[0], g->dilation[1], g->pad_top,
                             g->pad_left};
}

static dfg_status check_workspace(const dfg_kernel_args *args,
                                  const dfg_conv_geometry *g)
{
    int64_t needed = dfg_conv_workspace_bytes(g);
    if (args->workspace_bytes < needed || (needed > 0 && !args->workspace))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "%s: the step has %lld bytes of workspace, its "
                         "im2col chunk needs %lld", dfg_op_get(args->op)->name,
                         (long long)args->workspace_bytes, (long long)needed);
    return DFG_OK;
}

/* Offsets of image n, group grp in x/dx, dy and w/dw (elements). */
typedef struct group_offsets {
    int64_t x, y, w;
} group_offsets;

static group_offsets offsets_of(const dfg_conv_geometry *g, int64_t n,
                                int64_t grp)
{
    return (group_offsets){
        (n * g->in_channels + grp * g->channels_per_group) * g->in_h * g->in_w,
        (n * g->out_channels + grp * g->filters_per_group) * g->pixels,
        grp * g->filters_per_group * g->k};
}

static void grad_input_group(const dfg_conv_geometry *g,
                             const dfg_im2col_dims *d, const float *dy,
                             const float *w, float *col, float *dx)
{
    int m = (int)g->filters_per_group, k = (int)g->k, pixels = (int)g->pixels;
    if (g->direct) {
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, k, pixels, m,
                    1.0f, w, k, dy, pixels, 1.0f, dx, pixels);
        return;
    }
    for (int64_t p0 = 0; p0 < g->pixels; p0 += g->chunk) {
        int cols = (int)(g->pixels - p0 < g->chunk ? g->pixels - p0 : g->chunk);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, k, cols, m, 1.0f,
                    w, k, dy + p0, pixels, 0.0f, col, cols);
        for (int64_t row = 0; row < g->k; row++)
            for (int64_t j = 0; j < cols; j++) {
                int64_t src = dfg_im2col_source(d, row, p0 + j);
                if (src >= 0)
                    dx[src] += col[row * cols + j];
            }
    }
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
    dfg_im2col_dims d = im2col_dims(&g);
    float *dx = args->out[0];
    memset(dx, 0, (size_t)dfg_type_bytes(&args->out_types[0]));
    for (int64_t n = 0; n < g.batch; n++)
        for (int64_t grp = 0; grp < g.group; grp++) {
            group_offsets at = offsets_of(&g, n, grp);
            grad_input_group(&g, &d, (const float *)args->in[0] + at.y,
                             (const float *)args->in[1] + at.w,
                             args->workspace, dx + at.x);
        }
    return DFG_OK;
}

static void grad_weight_group(const dfg_conv_geometry *g,
                              const dfg_im2col_dims *d, const float *dy,
                              const float *x, float *col, float *dw)
{
    int m = (int)g->filters_per_group, k = (int)g->k, pixels = (int)g->pixels;
    if (g->direct) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, k, pixels,
                    1.0f, dy, pixels, x, pixels, 1.0f, dw, k);
        return;
    }
    for (int64_t p0 = 0; p0 < g->pixels; p0 += g->chunk) {
        int cols = (int)(g->pixels - p0 < g->chunk ? g->pixels - p0 : g->chunk);
        for (int64_t row = 0; row < g->k; row++)
            for (int64_t j = 0; j < cols; j++) {
                int64_t src = dfg_im2col_source(d, row, p0 + j);
                col[row * cols + j] = src >= 0 ? x[src] : 0.0f;
            }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, k, cols, 1.0f,
                    dy + p0, pixels, col, cols, 1.0f, dw, k);
    }
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
    dfg_im2col_dims d = im2col_dims(&g);
    float *dw = args->out[0];
    memset(dw, 0, (size_t)dfg_type_bytes(&args->out_types[0]));
    for (int64_t n = 0; n < g.batch; n++)
        for (int64_t grp = 0; grp < g.group; grp++) {
            group_offsets at = offsets_of(&g, n, grp);
            grad_weight_group(&g, &d, (const float *)args->in[0] + at.y,
                              (const float *)args->in[1] + at.x,
                              args->workspace, dw + at.w);
        }
    return DFG_OK;
}
