/* The conv2d gradient loops of the CUDA backend (see conv_grad.h). */
#include "runtime/cuda/plan/conv_grad.h"

/* Element offsets of image n, group grp in x/dx, dy and w/dw. */
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

static int64_t chunk_columns(const dfg_conv_geometry *g, int64_t first)
{
    return g->pixels - first < g->chunk ? g->pixels - first : g->chunk;
}

/* dx = w^T dy of a direct (1x1) conv: one batched product per group, or
 * over dy (dx == dy) per image from its kept copy. */
static dfg_status grad_input_direct(const dfg_cuda_step_plan *p,
                                    const dfg_cuda_conv_ops *ops)
{
    const dfg_step_args *s = p->args;
    const dfg_conv_geometry *g = &p->u.conv.g;
    const float *dy = s->in[0], *w = s->in[1];
    float *dx = s->out[0], *kept = s->workspace;
    int in_place = (const float *)dx == dy;
    dfg_status st = DFG_OK;
    for (int64_t grp = 0; grp < g->group && st == DFG_OK; grp++) {
        int64_t w_at, dy_at, dx_at;
        dfg_cuda_row_gemm row = dfg_cuda_conv_grad_input_direct_gemm(
            g, grp, &w_at, &dy_at, &dx_at);
        if (!in_place) {
            st = ops->product(ops->ctx, &row, DFG_F32, w + w_at, dy + dy_at,
                              dx + dx_at);
            continue;
        }
        row.batch = 1;
        for (int64_t n = 0; n < g->batch && st == DFG_OK; n++) {
            group_offsets at = offsets_of(g, n, grp);
            st = ops->copy(ops->ctx, &p->u.conv.keep, dy + at.y, kept);
            if (st == DFG_OK)
                st = ops->product(ops->ctx, &row, DFG_F32, w + w_at, kept,
                                  dx + at.x);
        }
    }
    return st;
}

/* Per image and group: col = w^T dy over chunks of its pixels, added into
 * dx by col2im; dx zeroed first, whole, or, over dy (dx == dy), image by
 * image after that image's dy was kept at the workspace's start. */
static dfg_status grad_input(const dfg_cuda_step_plan *p,
                             const dfg_cuda_conv_ops *ops)
{
    const dfg_step_args *s = p->args;
    const dfg_conv_geometry *g = &p->u.conv.g;
    if (g->direct)
        return grad_input_direct(p, ops);
    const float *dy = s->in[0], *w = s->in[1];
    float *dx = s->out[0], *kept = s->workspace;
    float *col = (float *)((char *)s->workspace + p->u.conv.kept_bytes);
    int in_place = (const float *)dx == dy;
    int64_t image_bytes =
        g->channels_per_group * g->in_h * g->in_w * (int64_t)sizeof(float);
    dfg_status st = in_place ? DFG_OK
                             : ops->zero(ops->ctx, dx,
                                         dfg_type_bytes(&s->out_types[0]));
    dfg_cuda_col2im chunk = {p->u.conv.dims,
                             g->channels_per_group * g->in_h * g->in_w, 0, 0};
    for (int64_t n = 0; n < g->batch; n++)
        for (int64_t grp = 0; grp < g->group && st == DFG_OK; grp++) {
            group_offsets at = offsets_of(g, n, grp);
            const float *dy_image = dy + at.y;
            if (in_place) {
                st = ops->copy(ops->ctx, &p->u.conv.keep, dy_image, kept);
                if (st == DFG_OK)
                    st = ops->zero(ops->ctx, dx + at.x, image_bytes);
                dy_image = kept;
            }
            for (int64_t p0 = 0; p0 < g->pixels && st == DFG_OK;
                 p0 += g->chunk) {
                chunk.first_pixel = p0;
                chunk.cols = chunk_columns(g, p0);
                dfg_cuda_row_gemm row =
                    dfg_cuda_conv_grad_input_chunk_gemm(g, chunk.cols);
                st = ops->product(ops->ctx, &row, DFG_F32, w + at.w,
                                  dy_image + p0, col);
                if (st == DFG_OK)
                    st = ops->col2im(ops->ctx, &chunk, col, dx + at.x);
            }
        }
    return st;
}

static dfg_status grad_weight(const dfg_cuda_step_plan *p,
                              const dfg_cuda_conv_ops *ops)
{
    const dfg_step_args *s = p->args;
    const dfg_conv_geometry *g = &p->u.conv.g;
    const float *dy = s->in[0], *x = s->in[1];
    float *dw = s->out[0], *col = s->workspace;
    dfg_status st = ops->zero(ops->ctx, dw, dfg_type_bytes(&s->out_types[0]));
    dfg_cuda_im2col chunk = {p->u.conv.dims, g->k, g->chunk, 0, sizeof(float),
                             1, 1, 0, 0, 0};
    chunk.index32 = dfg_cuda_im2col_narrow(&chunk); /* the largest chunk */
    for (int64_t n = 0; n < g->batch; n++)
        for (int64_t grp = 0; grp < g->group; grp++) {
            group_offsets at = offsets_of(g, n, grp);
            if (g->direct) {
                dfg_cuda_row_gemm row =
                    dfg_cuda_conv_grad_weight_gemm(g, g->pixels);
                if (st == DFG_OK)
                    st = ops->product(ops->ctx, &row, DFG_F32, dy + at.y,
                                      x + at.x, dw + at.w);
                continue;
            }
            for (int64_t p0 = 0; p0 < g->pixels && st == DFG_OK;
                 p0 += g->chunk) {
                chunk.first_pixel = p0;
                chunk.cols = chunk_columns(g, p0);
                st = ops->im2col(ops->ctx, &chunk, x + at.x, col);
                dfg_cuda_row_gemm row =
                    dfg_cuda_conv_grad_weight_gemm(g, chunk.cols);
                if (st == DFG_OK)
                    st = ops->product(ops->ctx, &row, DFG_F32,
                                      dy + at.y + p0, col, dw + at.w);
            }
        }
    return st;
}

dfg_status dfg_cuda_conv_grad_run(const dfg_cuda_step_plan *plan,
                                  const dfg_cuda_conv_ops *ops)
{
    return plan->kind == DFG_CUDA_CONV_GRAD_INPUT ? grad_input(plan, ops)
                                                  : grad_weight(plan, ops);
}
