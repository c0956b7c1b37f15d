/* The conv2d backward ops, f32 or, under mixed precision, narrow operands
 * of one dtype (the shape rules check) computed in f32, on the forward's
 * geometry, over column chunks of the whole batch (backward_geometry.h):
 *   conv2d_grad_input(dy, w) -> dx: per group and chunk, the chunk's dy
 *     columns gathered, col[k, chunk] = w^T dy (one product), then col2im
 *     adds each entry back to the input element it was read from; dx may
 *     be dy's bytes (dfg_conv_grad_input_saved_bytes: images of dy read
 *     whole, or kept aside, before their dx is written);
 *   conv2d_grad_weight(dy, x) -> dw: per group and chunk, dy's columns and
 *     x's im2col gathered, then dw += dy col^T, one product per slice of
 *     output channels: the slices of the fused weight updates
 *     (conv_grad_rows.h, weight_grad_update.c), so both give the same bits.
 * Chunks are as large as the planned workspace holds, from one output row
 * up to the full ones (conv_geometry.h).
 * A 1x1 conv with stride 1 and no padding needs no im2col: the products
 * run per image on x and dx directly, as the forward does. The products
 * go through dfg_cpu_gemm_mixed, which shares large ones among threads. */
#include <string.h>

#include "ir/geometry/backward_geometry.h"
#include "runtime/cpu/linalg/conv_columns.h"
#include "util/error.h"
#include "runtime/cpu/linalg/gemm_mixed.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/linalg/conv_grad_rows.h"
#include "ir/geometry/weight_update_geometry.h"

/* The op's part of the step's workspace: at least its least chunk, after
 * `saved` bytes (dfg_conv_grad_input_saved_bytes). */
static dfg_status check_workspace(const dfg_kernel_args *args,
                                  const dfg_conv_geometry *g, int64_t saved)
{
    int64_t least = saved + dfg_conv_grad_least_workspace_bytes(g);
    if (args->workspace_bytes < least || (least > 0 && !args->workspace))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "%s: the step has %lld bytes of workspace, its "
                         "column chunk needs at least %lld",
                         dfg_op_get(args->op)->name,
                         (long long)args->workspace_bytes, (long long)least);
    return DFG_OK;
}

/* A matrix operand; trans: stored transposed (gemm_mixed.h). */
static dfg_cpu_matrix matrix(const float *data, int64_t ld, int trans)
{
    return (dfg_cpu_matrix){DFG_F32, data, ld, trans};
}

/* A tensor operand of the step, and element `offset` of it. */
typedef struct operand {
    void *data;
    dfg_dtype dtype;
} operand;

static void *element(const operand *t, int64_t offset)
{
    return (char *)t->data + offset * (int64_t)dfg_dtype_size(t->dtype);
}

static dfg_cpu_matrix operand_matrix(const operand *t, int64_t offset,
                                     int64_t ld, int trans)
{
    return (dfg_cpu_matrix){t->dtype, element(t, offset), ld, trans};
}

/* The chunks of one group: dy's columns then the im2col columns, both in
 * the workspace. */
typedef struct chunk_buffers {
    float *dy; /* [M/group, chunk] */
    float *col; /* [k, chunk] */
    int64_t chunk;
} chunk_buffers;

/* Chunks as large as `bytes` of workspace hold, up to the full ones. */
static chunk_buffers buffers_of(const dfg_conv_geometry *g, void *workspace,
                                int64_t bytes)
{
    int64_t chunk = dfg_conv_grad_chunk_within(g, bytes);
    return (chunk_buffers){workspace,
                           (float *)workspace + g->filters_per_group * chunk,
                           chunk};
}

/* Element offsets of image n, group grp's channels in dy and in dx. */
static int64_t dy_group_at(const dfg_conv_geometry *g, int64_t n, int64_t grp)
{
    return (n * g->out_channels + grp * g->filters_per_group) * g->pixels;
}

static int64_t dx_group_at(const dfg_conv_geometry *g, int64_t n, int64_t grp)
{
    return (n * g->in_channels + grp * g->channels_per_group) * g->in_h *
           g->in_w;
}

/* Where dx is written over dy (passes/alias.c): the image of dy, group
 * grp's channels, kept aside in the workspace before its dx is written
 * while some of its columns are still to be read; image -1: none. */
typedef struct kept_image {
    void *data;
    int64_t image;
} kept_image;

static void keep_image(const dfg_conv_geometry *g, const operand *dy,
                       int64_t n, int64_t grp, kept_image *kept)
{
    memcpy(kept->data, element(dy, dy_group_at(g, n, grp)),
           (size_t)(g->filters_per_group * g->pixels) *
               dfg_dtype_size(dy->dtype));
    kept->image = n;
}

/* dx_n = w^T dy_n for every image and group: a direct (1x1) conv; dy_n
 * read from its kept copy when dx is written over dy. */
static dfg_status grad_input_direct(const dfg_conv_geometry *g,
                                    const operand *dy, const operand *w,
                                    const operand *dx, kept_image *kept)
{
    dfg_status st = DFG_OK;
    for (int64_t n = 0; n < g->batch && st == DFG_OK; n++)
        for (int64_t grp = 0; grp < g->group && st == DFG_OK; grp++) {
            dfg_cpu_matrix a = operand_matrix(
                w, grp * g->filters_per_group * g->k, g->k, 1);
            dfg_cpu_matrix b =
                operand_matrix(dy, dy_group_at(g, n, grp), g->pixels, 0);
            if (dx->data == dy->data) {
                keep_image(g, dy, n, grp, kept);
                b.data = kept->data;
            }
            st = dfg_cpu_gemm_mixed(g->k, g->pixels, g->filters_per_group,
                                    1.0f, &a, &b, 0.0f, dx->dtype,
                                    element(dx, dx_group_at(g, n, grp)),
                                    g->pixels);
        }
    return st;
}

/* dst[Mg, cols] = the chunk's columns of dy: those of the kept image from
 * its copy (a batch of one image of the group's channels), the others
 * from dy. */
static void gather_chunk(const dfg_conv_geometry *g, const operand *dy,
                         const kept_image *kept, int64_t grp, int64_t c0,
                         int64_t cols, float *dst)
{
    int64_t from_kept = 0;
    if (kept->image >= 0 && c0 / g->pixels == kept->image) {
        int64_t first = c0 - kept->image * g->pixels;
        from_kept = g->pixels - first < cols ? g->pixels - first : cols;
        dfg_conv_geometry one = *g;
        one.batch = 1;
        one.out_channels = g->filters_per_group;
        dfg_cpu_conv_gather_dy(&one, kept->data, dy->dtype, 0, first,
                               from_kept, dst, cols);
    }
    if (from_kept < cols)
        dfg_cpu_conv_gather_dy(g, dy->data, dy->dtype, grp, c0 + from_kept,
                               cols - from_kept, dst + from_kept, cols);
}

/* Group grp's dx, chunk by chunk: gather dy's columns, col = w^T dy, then
 * zero the images of dx the chunk adds into for the first time and add
 * col into them (col2im). Over dy, an image's dy is then read whole
 * before its dx is written: all of it is in this chunk or earlier ones,
 * or the image continues in the next chunk and is kept aside first. The
 * sums are those of the out-of-place kernel, in the same order. */
static dfg_status grad_input_group(const dfg_conv_geometry *g,
                                   const operand *dy, const operand *w,
                                   const operand *dx, const chunk_buffers *b,
                                   kept_image *kept, int64_t grp)
{
    size_t image_bytes = (size_t)(g->channels_per_group * g->in_h * g->in_w) *
                         dfg_dtype_size(dx->dtype);
    dfg_cpu_matrix wt =
        operand_matrix(w, grp * g->filters_per_group * g->k, g->k, 1);
    int64_t columns = g->batch * g->pixels, zeroed = 0;
    dfg_status st = DFG_OK;
    kept->image = -1;
    for (int64_t c0 = 0; c0 < columns && st == DFG_OK; c0 += b->chunk) {
        int64_t cols = columns - c0 < b->chunk ? columns - c0 : b->chunk;
        gather_chunk(g, dy, kept, grp, c0, cols, b->dy);
        dfg_cpu_matrix dyc = matrix(b->dy, cols, 0);
        st = dfg_cpu_gemm_mixed(g->k, cols, g->filters_per_group, 1.0f, &wt,
                                &dyc, 0.0f, DFG_F32, b->col, cols);
        int64_t last = (c0 + cols - 1) / g->pixels;
        if (dx->data == dy->data && last >= zeroed &&
            c0 + cols < (last + 1) * g->pixels)
            keep_image(g, dy, last, grp, kept);
        for (; zeroed <= last; zeroed++)
            memset(element(dx, dx_group_at(g, zeroed, grp)), 0, image_bytes);
        if (st == DFG_OK)
            dfg_cpu_conv_col2im_add(g, b->col, grp, c0, cols, dx->data,
                                    dx->dtype);
    }
    return st;
}

static operand input_of(const dfg_kernel_args *args, int32_t i)
{
    return (operand){(void *)args->in[i], args->in_types[i].dtype};
}

dfg_status dfg_cpu_conv2d_grad_input(const dfg_kernel_args *args)
{
    dfg_conv_geometry g;
    dfg_status st = dfg_conv_grad_geometry(args->attrs, &args->out_types[0],
                                           &args->in_types[1],
                                           &args->in_types[0], &g);
    int64_t saved = 0;
    if (st == DFG_OK) {
        saved = dfg_conv_grad_input_saved_bytes(&g, &args->in_types[0],
                                                &args->out_types[0]);
        st = check_workspace(args, &g, saved);
    }
    if (st != DFG_OK)
        return st;
    const operand dy = input_of(args, 0), w = input_of(args, 1);
    const operand dx = {args->out[0], args->out_types[0].dtype};
    if (dx.data == dy.data && saved == 0)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "conv2d_grad_input: dx is planned over dy, whose "
                         "type differs from dx's");
    kept_image kept = {args->workspace, -1};
    if (g.direct)
        return grad_input_direct(&g, &dy, &w, &dx, &kept);
    chunk_buffers b = buffers_of(&g, (char *)args->workspace + saved,
                                 args->workspace_bytes - saved);
    for (int64_t grp = 0; grp < g.group && st == DFG_OK; grp++)
        st = grad_input_group(&g, &dy, &w, &dx, &b, &kept, grp);
    return st;
}

/* dw[s0 .. s0 + r) of group grp (+)= a b^T, one product per slice of
 * `slice` rows, a's rows from its row 0 on: the products a fused update
 * makes (weight_grad_update.c), whose shapes decide sgemm's bits. */
static dfg_status slice_products(const dfg_conv_geometry *g, int64_t grp,
                                 int64_t rows, int64_t slice,
                                 const dfg_cpu_matrix *a,
                                 const dfg_cpu_matrix *b, int64_t depth,
                                 float beta, const operand *dw)
{
    dfg_status st = DFG_OK;
    size_t size = dfg_dtype_size(a->dtype);
    for (int64_t s0 = 0; s0 < rows && st == DFG_OK; s0 += slice) {
        int64_t r = rows - s0 < slice ? rows - s0 : slice;
        dfg_cpu_matrix a_rows = *a;
        a_rows.data = (const char *)a->data + (size_t)(s0 * a->ld) * size;
        st = dfg_cpu_gemm_mixed(r, g->k, depth, 1.0f, &a_rows, b, beta,
                                dw->dtype,
                                element(dw, (grp * g->filters_per_group + s0) *
                                                g->k), g->k);
    }
    return st;
}

/* dw += dy_n x_n^T for every image and group: a direct (1x1) conv. */
static dfg_status grad_weight_direct(const dfg_conv_geometry *g,
                                     int64_t slice, const operand *dy,
                                     const operand *x, const operand *dw)
{
    dfg_status st = DFG_OK;
    for (int64_t n = 0; n < g->batch && st == DFG_OK; n++)
        for (int64_t grp = 0; grp < g->group && st == DFG_OK; grp++) {
            dfg_cpu_matrix a = operand_matrix(
                dy, (n * g->out_channels + grp * g->filters_per_group) *
                        g->pixels, g->pixels, 0);
            dfg_cpu_matrix b = operand_matrix(
                x, (n * g->in_channels + grp * g->channels_per_group) *
                       g->pixels, g->pixels, 1);
            st = slice_products(g, grp, g->filters_per_group, slice, &a, &b,
                                g->pixels, n > 0 ? 1.0f : 0.0f, dw);
        }
    return st;
}

dfg_status dfg_cpu_conv_grad_weight_rows(const dfg_conv_geometry *whole,
                                         int64_t m0, int64_t rows,
                                         int64_t slice, const void *dy_data,
                                         const void *x_data, dfg_dtype dtype,
                                         float *workspace, int64_t chunk,
                                         int columns_ready, void *dw_data,
                                         dfg_dtype dw_dtype)
{
    dfg_conv_geometry g = *whole;
    g.filters_per_group = rows;
    const operand dy = {(char *)dy_data + m0 * g.pixels *
                                              (int64_t)dfg_dtype_size(dtype),
                        dtype};
    const operand x = {(void *)x_data, dtype}, dw = {dw_data, dw_dtype};
    if (g.direct)
        return grad_weight_direct(&g, slice, &dy, &x, &dw);
    /* The im2col columns first: they stay where they are whatever the
     * rows, for a caller that reuses them. */
    chunk_buffers b = {workspace + g.k * chunk, workspace, chunk};
    int64_t columns = g.batch * g.pixels;
    dfg_status st = DFG_OK;
    for (int64_t grp = 0; grp < g.group && st == DFG_OK; grp++)
        for (int64_t c0 = 0; c0 < columns && st == DFG_OK; c0 += b.chunk) {
            int64_t cols = columns - c0 < b.chunk ? columns - c0 : b.chunk;
            dfg_cpu_conv_gather_dy(&g, dy.data, dy.dtype, grp, c0, cols, b.dy,
                                   cols);
            if (!columns_ready)
                dfg_cpu_conv_im2col(&g, x.data, x.dtype, grp, c0, cols,
                                    b.col);
            dfg_cpu_matrix dyc = matrix(b.dy, cols, 0);
            dfg_cpu_matrix colt = matrix(b.col, cols, 1);
            st = slice_products(&g, grp, rows, slice, &dyc, &colt, cols,
                                c0 > 0 ? 1.0f : 0.0f, &dw);
        }
    return st;
}

dfg_status dfg_cpu_conv_grad_weight_rows_whole(
    const dfg_conv_geometry *whole, int64_t m0, int64_t rows,
    const void *dy_data, const void *x_data, dfg_dtype dtype,
    float *workspace, int64_t chunk, int columns_ready, void *dw_data,
    dfg_dtype dw_dtype)
{
    dfg_conv_geometry g = *whole;
    g.filters_per_group = rows;
    int64_t columns = g.batch * g.pixels;
    float *col = workspace, *dy = workspace + g.k * columns;
    if (!columns_ready)
        dfg_cpu_conv_im2col(&g, x_data, dtype, 0, 0, columns, col);
    dfg_cpu_conv_gather_dy(&g, (const char *)dy_data +
                                   m0 * g.pixels * (int64_t)dfg_dtype_size(dtype),
                           dtype, 0, 0, columns, dy, columns);
    const operand dw = {dw_data, dw_dtype};
    dfg_status st = DFG_OK;
    for (int64_t c0 = 0; c0 < columns && st == DFG_OK; c0 += chunk) {
        int64_t cols = columns - c0 < chunk ? columns - c0 : chunk;
        dfg_cpu_matrix dyc = matrix(dy + c0, columns, 0);
        dfg_cpu_matrix colt = matrix(col + c0, columns, 1);
        st = slice_products(&g, 0, rows, rows, &dyc, &colt, cols,
                            c0 > 0 ? 1.0f : 0.0f, &dw);
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
        st = check_workspace(args, &g, 0);
    if (st != DFG_OK)
        return st;
    dfg_dtype dtype = args->in_types[0].dtype;
    int64_t chunk = dfg_conv_grad_chunk_within(&g, args->workspace_bytes);
    return dfg_cpu_conv_grad_weight_rows(
        &g, 0, g.filters_per_group,
        dfg_weight_slice_rows(&g, (int64_t)dfg_dtype_size(dtype)), args->in[0],
        args->in[1], dtype, args->workspace, chunk, 0, args->out[0],
        args->out_types[0].dtype);
}
