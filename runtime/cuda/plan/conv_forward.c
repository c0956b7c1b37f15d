/* The conv2d loop of the CUDA backend (see conv_forward.h). */
#include "runtime/cuda/plan/conv_forward.h"

dfg_cuda_conv_batching dfg_cuda_conv_batching_make(const dfg_conv_geometry *g,
                                                   int64_t area_bytes,
                                                   int64_t element_size)
{
    int64_t columns = area_bytes / element_size / (g->k > 0 ? g->k : 1);
    int64_t image_columns = g->pixels * g->group;
    dfg_cuda_conv_batching b = {1, 1, g->pixels, 0};
    if (columns >= image_columns && image_columns > 0) {
        b.images = columns / image_columns < g->batch ? columns / image_columns
                                                      : g->batch;
        b.groups = g->group;
    } else if (columns >= g->pixels) {
        b.groups = columns / g->pixels;
    } else {
        b.cols = columns > 0 ? columns : 1;
    }
    b.index32 = dfg_index_fits_narrow(b.images * b.groups * g->k * b.cols) &&
                dfg_index_fits_narrow(g->pixels);
    return b;
}

static const char *at(const void *base, int64_t elements, int64_t size)
{
    return (const char *)base + elements * size;
}

static int64_t least(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* One product per group, batched over the images, on the input itself. */
static dfg_status run_direct(const dfg_cuda_step_plan *p, float beta,
                             const dfg_cuda_conv_ops *ops)
{
    const dfg_step_args *s = p->args;
    const dfg_conv_geometry *g = &p->u.conv.g;
    dfg_dtype dtype = s->in_types[0].dtype;
    int64_t size = dfg_cuda_dtype_size(dtype);
    dfg_status st = DFG_OK;
    for (int64_t grp = 0; grp < g->group && st == DFG_OK; grp++) {
        int64_t w_at, x_at, y_at;
        dfg_cuda_row_gemm row = dfg_cuda_conv_direct_gemm(g, grp, beta, &w_at,
                                                          &x_at, &y_at);
        st = ops->product(ops->ctx, &row, dtype, at(s->in[1], w_at, size),
                          at(s->in[0], x_at, size),
                          (char *)s->out[0] + y_at * size);
    }
    return st;
}

/* The products of one batch: its chunks [units][k][cols] in col, unit u
 * being image n0 + u / groups, group g0 + u % groups. */
static dfg_status batch_products(const dfg_cuda_step_plan *p,
                                 const dfg_cuda_im2col *chunks, int64_t n0,
                                 int64_t g0, float beta,
                                 const dfg_cuda_conv_ops *ops)
{
    const dfg_step_args *s = p->args;
    const dfg_conv_geometry *g = &p->u.conv.g;
    dfg_dtype dtype = s->in_types[0].dtype;
    int64_t size = chunks->element_size, matrix = g->k * chunks->cols;
    int64_t images = chunks->units / chunks->groups;
    dfg_cuda_row_gemm row = dfg_cuda_conv_chunk_gemm(g, chunks->cols, beta);
    /* Images of one group, or (one image) its groups side by side. */
    int64_t calls = images > 1 ? chunks->groups : 1;
    row.batch = images > 1 ? images : chunks->groups;
    row.stride_a = images > 1 ? 0 : g->filters_per_group * g->k;
    row.stride_b = images > 1 ? chunks->groups * matrix : matrix;
    row.stride_c = images > 1 ? g->out_channels * g->pixels
                              : g->filters_per_group * g->pixels;
    dfg_status st = DFG_OK;
    for (int64_t c = 0; c < calls && st == DFG_OK; c++) {
        int64_t grp = g0 + c;
        int64_t y_at = (n0 * g->out_channels + grp * g->filters_per_group) *
                           g->pixels + chunks->first_pixel;
        st = ops->product(ops->ctx, &row, dtype,
                          at(s->in[1], grp * g->filters_per_group * g->k, size),
                          at(s->workspace, c * matrix, size),
                          (char *)s->out[0] + y_at * size);
    }
    return st;
}

dfg_status dfg_cuda_conv_forward_run(const dfg_cuda_step_plan *p,
                                     const dfg_cuda_conv_ops *ops)
{
    const dfg_step_args *s = p->args;
    const dfg_conv_geometry *g = &p->u.conv.g;
    const dfg_cuda_conv_batching *b = &p->u.conv.batching;
    dfg_status st = DFG_OK;
    /* A fused residual is in the output already (the epilogue adds the
     * bias then); else the bias is broadcast there. */
    int bias_first = p->u.conv.has_bias && !p->residual;
    if (bias_first)
        st = ops->copy(ops->ctx, &p->u.conv.bias, s->in[2], s->out[0]);
    float beta = bias_first || p->residual ? 1.0f : 0.0f;
    if (st != DFG_OK || g->direct)
        return st == DFG_OK ? run_direct(p, beta, ops) : st;
    int64_t size = dfg_cuda_dtype_size(s->in_types[0].dtype);
    int64_t in_plane = g->in_h * g->in_w;
    for (int64_t n0 = 0; n0 < g->batch; n0 += b->images)
        for (int64_t g0 = 0; g0 < g->group; g0 += b->groups)
            for (int64_t p0 = 0; p0 < g->pixels && st == DFG_OK;
                 p0 += b->cols) {
                int64_t images = least(b->images, g->batch - n0);
                int64_t groups = least(b->groups, g->group - g0);
                dfg_cuda_im2col chunks = {
                    p->u.conv.dims, g->k, least(b->cols, g->pixels - p0), p0,
                    size, images * groups, groups, g->in_channels * in_plane,
                    g->channels_per_group * in_plane, b->index32};
                int64_t x_at = (n0 * g->in_channels +
                                g0 * g->channels_per_group) * in_plane;
                st = ops->im2col(ops->ctx, &chunks, at(s->in[0], x_at, size),
                                 s->workspace);
                if (st == DFG_OK)
                    st = batch_products(p, &chunks, n0, g0, beta, ops);
            }
    return st;
}
