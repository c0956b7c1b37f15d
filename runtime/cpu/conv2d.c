/* conv2d: per image and group, im2col of a chunk of output pixels into the
 * step's workspace, then one sgemm weights[M/group, k] x im2col[k, chunk]
 * into the output (conv_geometry.h says why chunks, and how large). A 1x1
 * conv with stride 1 and no padding multiplies the input directly. */
#include <string.h>

#include "conv_geometry.h"
#include "dtype_access.h"
#include "error.h"
#include "gemm_mixed.h"
#include "kernels.h"
#include "math/im2col.h"
#include "math/strided_range.h"

/* dst[0..n) = src[offset + i * stride] as f32, any float dtype. */
static void load_row(const void *src, dfg_dtype dtype, int64_t offset,
                     int64_t stride, int64_t n, float *dst)
{
    for (int64_t i = 0; i < n; i += DFG_CPU_BLOCK) {
        int64_t len = n - i < DFG_CPU_BLOCK ? n - i : DFG_CPU_BLOCK;
        const float *got = dfg_load_f32(src, dtype, offset + i * stride,
                                        stride, len, dst + i);
        if (got != dst + i)
            memcpy(dst + i, got, (size_t)len * sizeof *dst);
    }
}

static void zero_floats(float *dst, int64_t n)
{
    memset(dst, 0, (size_t)n * sizeof *dst);
}

/* One im2col row (channel, tap_y, tap_x) over the output pixels
 * [p0, p0 + cols): the input row each output row reads, walked by the
 * stride, with zeros where the taps fall into the padding. */
static void im2col_row(const dfg_im2col_dims *d, const void *x,
                       dfg_dtype dtype, int64_t row, int64_t p0, int64_t cols,
                       float *dst)
{
    int64_t channel, tap_y, tap_x;
    dfg_im2col_row(d, row, &channel, &tap_y, &tap_x);
    for (int64_t j = 0, p = p0; j < cols;) {
        int64_t oy = p / d->out_w, ox = p - oy * d->out_w;
        int64_t n = d->out_w - ox < cols - j ? d->out_w - ox : cols - j;
        int64_t iy = dfg_im2col_coord(oy, tap_y, d->stride_h, d->pad_top,
                                      d->dilation_h);
        int64_t ix0 = dfg_im2col_coord(ox, tap_x, d->stride_w, d->pad_left,
                                       d->dilation_w);
        int64_t first = 0, end = 0;
        if (iy >= 0 && iy < d->in_h)
            dfg_strided_range(ix0, n, d->stride_w, 0, d->in_w, &first, &end);
        zero_floats(dst + j, first);
        load_row(x, dtype, (channel * d->in_h + iy) * d->in_w + ix0 +
                               first * d->stride_w,
                 d->stride_w, end - first, dst + j + first);
        zero_floats(dst + j + end, n - end);
        j += n;
        p += n;
    }
}

/* The im2col matrix [k, cols] of one image and group, for output pixels
 * [p0, p0 + cols); x points at the group's first input channel. It runs
 * on the calling thread: it moves k * cols floats for the sgemm's
 * M/group * k * cols multiply-adds, and an OpenMP region here would leave
 * its threads spinning against OpenBLAS's own through the sgemm that
 * follows (measured: several times slower on two cores). */
static void im2col_chunk(const dfg_conv_geometry *g, const dfg_im2col_dims *d,
                         const void *x, dfg_dtype dtype, int64_t p0,
                         int64_t cols, float *col)
{
    for (int64_t row = 0; row < g->k; row++)
        im2col_row(d, x, dtype, row, p0, cols, col + row * cols);
}

/* y[n, m, :] = bias[m] for every image and filter, so that the products
 * can accumulate onto it (beta = 1). */
static void fill_bias(const dfg_conv_geometry *g, const void *bias,
                      size_t size, void *y)
{
    for (int64_t n = 0; n < g->batch; n++)
        for (int64_t m = 0; m < g->out_channels; m++) {
            char *plane = (char *)y +
                          (size_t)((n * g->out_channels + m) * g->pixels) * size;
            const char *value = (const char *)bias + (size_t)m * size;
            for (int64_t p = 0; p < g->pixels; p++)
                memcpy(plane + (size_t)p * size, value, size);
        }
}

/* The output of one image and group, [M/group, pixels]. */
static dfg_status conv_group(const dfg_conv_geometry *g,
                             const dfg_im2col_dims *d, const void *x,
                             const dfg_cpu_matrix *weights, dfg_dtype dtype,
                             float beta, float *workspace, void *y)
{
    if (g->direct) {
        dfg_cpu_matrix input = {dtype, x, g->pixels, 0};
        return dfg_cpu_gemm_mixed(g->filters_per_group, g->pixels, g->k,
                                  1.0f, weights, &input, beta, dtype, y,
                                  g->pixels);
    }
    size_t size = dfg_dtype_size(dtype);
    for (int64_t p0 = 0; p0 < g->pixels; p0 += g->chunk) {
        int64_t cols = g->pixels - p0 < g->chunk ? g->pixels - p0 : g->chunk;
        im2col_chunk(g, d, x, dtype, p0, cols, workspace);
        dfg_cpu_matrix col = {DFG_F32, workspace, cols, 0};
        dfg_status st = dfg_cpu_gemm_mixed(
            g->filters_per_group, cols, g->k, 1.0f, weights, &col, beta,
            dtype, (char *)y + (size_t)p0 * size, g->pixels);
        if (st != DFG_OK)
            return st;
    }
    return DFG_OK;
}

dfg_status dfg_cpu_conv2d(const dfg_kernel_args *args)
{
    dfg_conv_geometry g;
    dfg_status st = dfg_conv_geometry_make(args->attrs, &args->in_types[0],
                                           &args->in_types[1],
                                           &args->out_types[0], &g);
    if (st != DFG_OK)
        return st;
    int64_t needed = dfg_conv_workspace_bytes(&g);
    if (args->workspace_bytes < needed || (needed > 0 && !args->workspace))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "conv2d: the step has %lld bytes of workspace, its "
                         "im2col chunk needs %lld",
                         (long long)args->workspace_bytes, (long long)needed);
    dfg_dtype dtype = args->in_types[0].dtype;
    size_t size = dfg_dtype_size(dtype);
    const void *bias = args->n_inputs > 2 ? args->in[2] : NULL;
    if (bias)
        fill_bias(&g, bias, size, args->out[0]);
    const dfg_im2col_dims d = {
        g.in_h, g.in_w, g.kernel_h, g.kernel_w, g.out_h, g.out_w,
        g.stride[0], g.stride[1], g.dilation[0], g.dilation[1],
        g.pad_top, g.pad_left};
    const int64_t in_plane = g.in_h * g.in_w;
    for (int64_t n = 0; n < g.batch; n++)
        for (int64_t grp = 0; grp < g.group; grp++) {
            int64_t x_at = (n * g.in_channels + grp * g.channels_per_group) *
                           in_plane;
            int64_t y_at = (n * g.out_channels + grp * g.filters_per_group) *
                           g.pixels;
            dfg_cpu_matrix weights = {
                args->in_types[1].dtype,
                (const char *)args->in[1] +
                    (size_t)(grp * g.filters_per_group * g.k) * size,
                g.k, 0};
            st = conv_group(&g, &d, (const char *)args->in[0] +
                                        (size_t)x_at * size,
                            &weights, dtype, bias ? 1.0f : 0.0f,
                            args->workspace,
                            (char *)args->out[0] + (size_t)y_at * size);
            if (st != DFG_OK)
                return st;
        }
    return DFG_OK;
}
