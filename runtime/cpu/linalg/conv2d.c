/* conv2d: per image and group, im2col of a chunk of output pixels into the
 * step's workspace, then one sgemm weights[M/group, k] x im2col[k, chunk]
 * into the output (conv_geometry.h says why chunks, and how large: as
 * large as the planned workspace holds, from one output row up). A 1x1
 * conv with stride 1 and no padding multiplies the input directly; a
 * depthwise conv is a direct stencil (conv2d_depthwise.c), and so is a
 * conv of few filters over plain f32 tensors (conv_few_filters.c).
 *
 * One OpenMP region covers the whole step, with OpenBLAS running on its
 * threads (parallel.h). Large images: the team fills each chunk's im2col
 * rows together, then shares its product (gemm_mixed.h). Small images:
 * each thread takes whole (image, group) pairs, im2col and product, into
 * its own slot of the workspace (conv_geometry.h), which saves the two
 * synchronisations per image that would cost more than the work. */
#include <string.h>

#include "runtime/cpu/linalg/conv2d_depthwise.h"
#include "runtime/cpu/linalg/conv_few_filters.h"
#include "runtime/cpu/linalg/conv_post_ops.h"
#include "ir/geometry/conv_geometry.h"
#include "runtime/cpu/elementwise/dtype_access.h"
#include "util/error.h"
#include "runtime/cpu/linalg/gemm_mixed.h"
#include "runtime/cpu/kernels.h"
#include "math/im2col.h"
#include "math/strided_range.h"
#include "runtime/cpu/parallel.h"

/* dst[0..n) = src[offset + i * stride] as f32, any float dtype. */
static void load_row(const void *src, dfg_dtype dtype, int64_t offset,
                     int64_t stride, int64_t n, float *dst)
{
    if (dtype == DFG_F32) {
        const float *from = (const float *)src + offset;
        if (stride == 1)
            memcpy(dst, from, (size_t)n * sizeof *dst);
        else
            for (int64_t i = 0; i < n; i++)
                dst[i] = from[i * stride];
        return;
    }
    for (int64_t i = 0; i < n; i += DFG_CPU_BLOCK) {
        int64_t len = n - i < DFG_CPU_BLOCK ? n - i : DFG_CPU_BLOCK;
        dfg_load_f32(src, dtype, offset + i * stride, stride, len, dst + i);
    }
}

static void zero_floats(float *dst, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = 0.0f;
}

/* One im2col row (channel, tap_y, tap_x) over the output pixels of a
 * chunk, which starts at (oy, ox) and has `cols` of them: the input row
 * each output row reads, walked by the stride, with zeros where the taps
 * fall into the padding. Which output columns read inside the input
 * depends on the tap only, so it is worked out once per row. */
static void im2col_row(const dfg_im2col_dims *d, const void *x,
                       dfg_dtype dtype, int64_t channel, int64_t tap_y,
                       int64_t tap_x, int64_t oy, int64_t ox, int64_t cols,
                       float *dst)
{
    int64_t inside_first, inside_end;
    int64_t ix_at_0 = dfg_im2col_coord(0, tap_x, d->stride_w, d->pad_left,
                                       d->dilation_w);
    dfg_strided_range(ix_at_0, d->out_w, d->stride_w, 0, d->in_w,
                      &inside_first, &inside_end);
    for (int64_t j = 0; j < cols; oy++, ox = 0) {
        int64_t n = d->out_w - ox < cols - j ? d->out_w - ox : cols - j;
        int64_t iy = dfg_im2col_coord(oy, tap_y, d->stride_h, d->pad_top,
                                      d->dilation_h);
        int64_t first = ox, end = ox; /* of [ox, ox + n), read from x */
        if (iy >= 0 && iy < d->in_h) {
            first = inside_first > ox ? inside_first : ox;
            end = inside_end < ox + n ? inside_end : ox + n;
            if (end < first)
                end = first = ox;
        }
        zero_floats(dst + j, first - ox);
        if (end > first)
            load_row(x, dtype,
                     (channel * d->in_h + iy) * d->in_w + ix_at_0 +
                         first * d->stride_w,
                     d->stride_w, end - first, dst + j + (first - ox));
        zero_floats(dst + j + (end - ox), ox + n - end);
        j += n;
    }
}

/* Rows [r0, r1) of the im2col matrix [k, cols] of a chunk starting at
 * output pixel p0; the rows' (channel, tap) are stepped through rather
 * than divided out of each row index. */
static void im2col_rows(const dfg_im2col_dims *d, const void *x,
                        dfg_dtype dtype, int64_t r0, int64_t r1, int64_t p0,
                        int64_t cols, float *col)
{
    int64_t channel, tap_y, tap_x;
    dfg_im2col_row(d, r0, &channel, &tap_y, &tap_x);
    int64_t oy = p0 / d->out_w, ox = p0 - oy * d->out_w;
    for (int64_t row = r0; row < r1; row++) {
        im2col_row(d, x, dtype, channel, tap_y, tap_x, oy, ox, cols,
                   col + row * cols);
        if (++tap_x == d->kernel_w) {
            tap_x = 0;
            if (++tap_y == d->kernel_h) {
                tap_y = 0;
                channel++;
            }
        }
    }
}

/* y[n, m, :] = bias[m] for every image and filter, so that the products
 * can accumulate onto it (beta = 1); the planes are shared by the team.
 * The bias has the weights' dtype: y's, or f32 under mixed precision.
 * Onto a residual (f32, conv_post_ops.h) the bias is added instead. */
static void fill_bias(const dfg_conv_geometry *g, const void *bias,
                      dfg_dtype bias_dtype, dfg_dtype dtype, int onto_residual,
                      void *y)
{
    size_t size = dfg_dtype_size(dtype);
    int64_t planes = g->batch * g->out_channels;
#pragma omp for schedule(static)
    for (int64_t plane = 0; plane < planes; plane++) {
        int64_t m = plane % g->out_channels;
        char *out = (char *)y + (size_t)(plane * g->pixels) * size;
        if (onto_residual) {
            float value = dfg_float_at(bias, bias_dtype, m);
            for (int64_t p = 0; p < g->pixels; p++)
                ((float *)out)[p] += value;
        } else if (dtype == DFG_F32) {
            float value = dfg_float_at(bias, bias_dtype, m);
            for (int64_t p = 0; p < g->pixels; p++)
                ((float *)out)[p] = value;
        } else { /* f16, bf16: one rounding, then copies */
            float wide = dfg_float_at(bias, bias_dtype, m);
            uint16_t value = bias_dtype == dtype
                                 ? ((const uint16_t *)bias)[m]
                             : dtype == DFG_BF16 ? dfg_f32_to_bf16(wide)
                                                 : dfg_f32_to_f16(wide);
            for (int64_t p = 0; p < g->pixels; p++)
                ((uint16_t *)out)[p] = value;
        }
    }
}

typedef struct conv_step {
    const dfg_conv_geometry *g;
    dfg_im2col_dims dims;
    dfg_dtype dtype, w_dtype;
    size_t size; /* bytes of an element of x and y */
    const void *x, *w, *bias;
    float *workspace;
    void *y;
    float beta; /* 1: the products accumulate onto y (bias, residual) */
} conv_step;

/* The operands of the product of image n, group grp. */
typedef struct conv_unit {
    const char *x;            /* the group's first input channel */
    dfg_cpu_matrix weights;   /* [M/group, k] */
    char *y;                  /* the group's first output channel */
} conv_unit;

static conv_unit unit_of(const conv_step *s, int64_t n, int64_t grp)
{
    const dfg_conv_geometry *g = s->g;
    conv_unit u = {
        (const char *)s->x +
            (size_t)((n * g->in_channels + grp * g->channels_per_group) *
                     g->in_h * g->in_w) * s->size,
        {s->w_dtype,
         (const char *)s->w + (size_t)(grp * g->filters_per_group * g->k) *
                                  dfg_dtype_size(s->w_dtype),
         g->k, 0},
        (char *)s->y +
            (size_t)((n * g->out_channels + grp * g->filters_per_group) *
                     g->pixels) * s->size};
    return u;
}

/* The output of one image and group, [M/group, pixels], computed by the
 * whole team: the chunk's im2col rows shared out, then its product. */
static void conv_unit_by_team(const conv_step *s, const conv_unit *u)
{
    const dfg_conv_geometry *g = s->g;
    float beta = s->beta;
    if (g->direct) {
        dfg_cpu_matrix input = {s->dtype, u->x, g->pixels, 0};
        dfg_cpu_gemm_mixed_team(g->filters_per_group, g->pixels, g->k, 1.0f,
                                &u->weights, &input, beta, s->dtype, u->y,
                                g->pixels);
        return;
    }
    for (int64_t p0 = 0; p0 < g->pixels; p0 += g->chunk) {
        int64_t cols = g->pixels - p0 < g->chunk ? g->pixels - p0 : g->chunk;
        int64_t r0, r1;
        dfg_cpu_team_share(g->k, 1, &r0, &r1);
        im2col_rows(&s->dims, u->x, s->dtype, r0, r1, p0, cols,
                    s->workspace);
#pragma omp barrier
        dfg_cpu_matrix col = {DFG_F32, s->workspace, cols, 0};
        dfg_cpu_gemm_mixed_team(g->filters_per_group, cols, g->k, 1.0f,
                                &u->weights, &col, beta, s->dtype,
                                u->y + (size_t)p0 * s->size, g->pixels);
    }
}

/* The same on the calling thread alone, the whole image in one chunk
 * (g->chunk == g->pixels) whose im2col goes to `slot`. */
static void conv_unit_alone(const conv_step *s, const conv_unit *u,
                            float *slot)
{
    const dfg_conv_geometry *g = s->g;
    dfg_cpu_matrix input = {s->dtype, u->x, g->pixels, 0};
    if (!g->direct) {
        im2col_rows(&s->dims, u->x, s->dtype, 0, g->k, 0, g->pixels, slot);
        input = (dfg_cpu_matrix){DFG_F32, slot, g->pixels, 0};
    }
    dfg_cpu_gemm_mixed_serial(g->filters_per_group, g->pixels, g->k, 1.0f,
                              &u->weights, &input, s->beta, s->dtype, u->y,
                              g->pixels);
}

/* Whether the (image, group) pairs go to threads whole: when each is too
 * small to share out and the workspace holds several (conv_geometry.h). */
static int units_alone(const dfg_conv_geometry *g)
{
    double macs = (double)g->filters_per_group * (double)g->pixels *
                  (double)g->k;
    return macs < 4.0 * DFG_CPU_PARALLEL_MIN_MACS &&
           (g->direct || g->slots > 1);
}

/* Every unit, each on one thread: `slots` of them at a time, each with
 * its own slot of the workspace (a direct conv needs none: all at once). */
static void conv_units_alone(const conv_step *s)
{
    const dfg_conv_geometry *g = s->g;
    int64_t units = g->batch * g->group;
    int64_t batch = g->direct ? units : g->slots;
    for (int64_t u0 = 0; u0 < units; u0 += batch) {
        int64_t end = units - u0 < batch ? units : u0 + batch;
#pragma omp for schedule(static)
        for (int64_t i = u0; i < end; i++) {
            conv_unit u = unit_of(s, i / g->group, i % g->group);
            conv_unit_alone(s, &u, s->workspace + (i - u0) * g->k * g->pixels);
        }
    }
}

/* Every product the step will make fits BLAS's sizes (checked before the
 * parallel region, whose threads cannot report an error). */
static dfg_status check_products(const dfg_conv_geometry *g)
{
    dfg_cpu_matrix operand = {DFG_F32, NULL, g->k, 0};
    dfg_cpu_matrix input = {DFG_F32, NULL, g->pixels, 0};
    return dfg_cpu_gemm_check(g->filters_per_group, g->pixels, g->k, &operand,
                              &input, g->pixels);
}

dfg_status dfg_cpu_conv2d(const dfg_kernel_args *args)
{
    dfg_conv_geometry g;
    dfg_status st = dfg_conv_geometry_make(args->attrs, &args->in_types[0],
                                           &args->in_types[1],
                                           &args->out_types[0], &g);
    if (st != DFG_OK)
        return st;
    if (args->out[0] != args->in[0] &&
        dfg_cpu_conv_few_filters(args->attrs, args->in_types, args->n_inputs,
                                 args->out_types, args->n_outputs)) {
        dfg_cpu_conv2d_few_filters(&g, args);
        return DFG_OK;
    }
    int64_t least = dfg_conv_forward_least_workspace_bytes(&g);
    if (args->workspace_bytes < least || (least > 0 && !args->workspace))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "conv2d: the step has %lld bytes of workspace, its "
                         "im2col chunk needs at least %lld",
                         (long long)args->workspace_bytes, (long long)least);
    if (args->workspace_bytes < dfg_conv_forward_workspace_bytes(&g))
        dfg_conv_geometry_fit(&g, args->workspace_bytes);
    const void *bias = args->n_inputs > 2 ? args->in[2] : NULL;
    int residual = dfg_cpu_conv_residual(args) != NULL;
    if (args->out[0] == args->in[0]) {
        /* planned over x (dfg_conv_may_write_over_x) */
        int64_t ring = dfg_op_in_place_workspace(
            DFG_OP_CONV2D, args->attrs, args->in_types, args->n_inputs,
            args->out_types, args->n_outputs, 0);
        if (ring < 0)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "conv2d: the output lies in x's bytes, which "
                             "only a depthwise conv of stride 1 with y of "
                             "x's type and no residual writes over");
        if (args->workspace_bytes < ring || (ring > 0 && !args->workspace))
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "conv2d: written over x, the step has %lld "
                             "bytes of workspace, its rows need %lld",
                             (long long)args->workspace_bytes,
                             (long long)ring);
    }
    if (g.depthwise) {
        dfg_cpu_conv_residual_load(args);
        dfg_cpu_conv2d_depthwise(&g, args->in_types[0].dtype, args->in[0],
                                 args->in_types[1].dtype, args->in[1], bias,
                                 residual, args->out[0], args->workspace);
        dfg_cpu_conv_post_ops_apply(args);
        return DFG_OK;
    }
    if ((st = check_products(&g)) != DFG_OK)
        return st;
    dfg_cpu_conv_residual_load(args);
    dfg_cpu_threading_init();
    const conv_step s = {
        &g,
        {g.in_h, g.in_w, g.kernel_h, g.kernel_w, g.out_h, g.out_w,
         g.stride[0], g.stride[1], g.dilation[0], g.dilation[1], g.pad_top,
         g.pad_left},
        args->in_types[0].dtype, args->in_types[1].dtype,
        dfg_dtype_size(args->in_types[0].dtype),
        args->in[0], args->in[1], bias, args->workspace, args->out[0],
        bias || residual ? 1.0f : 0.0f};
    double macs = (double)g.batch * (double)g.out_channels *
                  (double)g.pixels * (double)g.k;
#pragma omp parallel if (macs >= DFG_CPU_PARALLEL_MIN_MACS)
    {
        if (bias)
            fill_bias(&g, bias, s.w_dtype, s.dtype, residual, s.y);
        if (units_alone(&g))
            conv_units_alone(&s);
        else
            for (int64_t n = 0; n < g.batch; n++)
                for (int64_t grp = 0; grp < g.group; grp++) {
                    conv_unit u = unit_of(&s, n, grp);
                    conv_unit_by_team(&s, &u);
                }
    }
    dfg_cpu_conv_post_ops_apply(args);
    return DFG_OK;
}
