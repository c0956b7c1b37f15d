/* layer_norm (over the dims from attrs.axis to the end, with scale and an
 * optional bias of those dims) and batch_norm in inference form (per
 * channel, dim 1: (x - mean) / sqrt(var + eps) * scale + bias). Statistics
 * accumulate in double; values are computed in f32 and stored in the
 * input's dtype. Both may run in place (out == x). batch_norm applies its
 * fused post-ops (dfg_attrs.post_ops, no sum) to y, and has a kernel for
 * f32 x and y in one blocked layout (nChw8c, nChw16c) beside the plain
 * one, which the kernel table gives blocked steps. */
#include <math.h>

#include "runtime/cpu/elementwise/dtype_access.h"
#include "util/error.h"
#include "runtime/cpu/reduce/f32_reduce.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/parallel.h"
#include "ir/geometry/reduce_geometry.h"
#include "runtime/cpu/elementwise/vector_clones.h"
#include "runtime/cpu_layout_rule.h"
#include "ir/layout_rule.h"
#include "math/post_ops.h"

typedef struct layer_norm_ctx {
    dfg_dtype dtype;
    const void *x, *scale, *bias; /* bias may be NULL */
    void *out;
    int64_t d; /* elements normalised together */
    float epsilon;
} layer_norm_ctx;

static void layer_norm_row(const layer_norm_ctx *c, int64_t row)
{
    float buf[DFG_CPU_BLOCK], sbuf[DFG_CPU_BLOCK], bbuf[DFG_CPU_BLOCK],
        obuf[DFG_CPU_BLOCK];
    int64_t base = row * c->d;
    double sum = 0.0, squares = 0.0;
    for (int pass = 0; pass < 3; pass++) {
        double mean = sum / (double)c->d;
        float rstd = (float)(1.0 / sqrt(squares / (double)c->d + c->epsilon));
        for (int64_t j = 0; j < c->d; j += DFG_CPU_BLOCK) {
            int64_t m = c->d - j < DFG_CPU_BLOCK ? c->d - j : DFG_CPU_BLOCK;
            const float *v = dfg_load_f32(c->x, c->dtype, base + j, 1, m, buf);
            if (pass == 0) {
                for (int64_t i = 0; i < m; i++)
                    sum += v[i];
            } else if (pass == 1) {
                /* Two passes: a one-pass E[x^2] - E[x]^2 loses everything
                 * when the mean is large against the spread. */
                for (int64_t i = 0; i < m; i++)
                    squares += (v[i] - mean) * (v[i] - mean);
            } else {
                const float *s = dfg_load_f32(c->scale, c->dtype, j, 1, m, sbuf);
                const float *b =
                    c->bias ? dfg_load_f32(c->bias, c->dtype, j, 1, m, bbuf) : NULL;
                float *o = dfg_f32_target(c->out, c->dtype, base + j, obuf);
                /* Centred in double: a mean rounded to f32 would shift
                 * every output when the mean is large against the spread. */
                for (int64_t i = 0; i < m; i++)
                    o[i] = (float)((double)v[i] - mean) * rstd * s[i] +
                           (b ? b[i] : 0.0f);
                dfg_store_f32(c->out, c->dtype, base + j, m, o);
            }
        }
    }
}

/* layer_norm_row for f32: the same two-pass statistics in double and the
 * same per-element formula, with the sums in eight lanes (f32_reduce.h)
 * and straight from the tensors, so that the loops vectorize. */
DFG_VECTOR_LOOP(layer_norm_row_f32, (const layer_norm_ctx *c, int64_t row),
                (c, row))
{
    int64_t d = c->d;
    const float *v = (const float *)c->x + row * d;
    const float *s = c->scale, *b = c->bias;
    float *o = (float *)c->out + row * d;
    double mean = dfg_f32_sum(v, d) / (double)d;
    double squares = dfg_f32_centered_squares(v, d, mean);
    float rstd = (float)(1.0 / sqrt(squares / (double)d + c->epsilon));
    if (b)
        for (int64_t i = 0; i < d; i++)
            o[i] = (float)((double)v[i] - mean) * rstd * s[i] + b[i];
    else
        for (int64_t i = 0; i < d; i++)
            o[i] = (float)((double)v[i] - mean) * rstd * s[i] + 0.0f;
}

dfg_status dfg_cpu_layer_norm(const dfg_kernel_args *args)
{
    const dfg_type *in = &args->in_types[0];
    int64_t axis;
    dfg_status st = dfg_row_axis_check(args->op, args->attrs, in,
                                       &args->out_types[0], &axis);
    if (st != DFG_OK)
        return st;
    int64_t numel = dfg_type_numel(in);
    int has_bias = args->n_inputs > 2 && args->in[2] != NULL;
    layer_norm_ctx c = {in->dtype, args->in[0], args->in[1],
                        has_bias ? args->in[2] : NULL, args->out[0], 1,
                        args->attrs->epsilon};
    for (int32_t d = (int32_t)axis; d < in->rank; d++)
        c.d *= in->shape[d];
    int64_t params = dfg_type_numel(&args->in_types[1]);
    if (params != c.d ||
        (has_bias && dfg_type_numel(&args->in_types[2]) != c.d))
        return dfg_error(DFG_ERR_SHAPE, "layer_norm: scale/bias do not have %lld elements",
                         (long long)c.d);
    if (numel == 0)
        return DFG_OK;
    int64_t rows = numel / c.d;
#pragma omp parallel for if (numel > DFG_CPU_PARALLEL_MIN_ELEMENTS) schedule(static)
    for (int64_t row = 0; row < rows; row++) {
        if (c.dtype == DFG_F32)
            layer_norm_row_f32(&c, row);
        else
            layer_norm_row(&c, row);
    }
    return DFG_OK;
}

typedef struct batch_norm_ctx {
    dfg_dtype dtype;
    const void *x, *scale, *bias, *mean, *var;
    dfg_dtype params_dtype; /* x's, or f32 (mixed precision) */
    void *out;
    int64_t channels, plane; /* dim 1, and the product of dims 2.. */
    float epsilon;
    const dfg_attrs *attrs; /* its fused post-ops */
} batch_norm_ctx;

/* A channel's y = x * *k + *shift from its statistics, the one rounding
 * every batch norm kernel uses. */
static inline void channel_scale_shift(float scale, float bias, float mean,
                                       float var, float epsilon, float *k,
                                       float *shift)
{
    *k = (float)(scale / sqrt((double)var + epsilon));
    *shift = bias - mean * *k;
}

/* channel_scale_shift of channel c, its statistics of any float dtype. */
static void batch_norm_channel(const batch_norm_ctx *c, int64_t channel,
                               float *k, float *shift)
{
    const void *params[4] = {c->scale, c->bias, c->mean, c->var};
    float v4[4], one[1];
    for (int j = 0; j < 4; j++)
        v4[j] = *dfg_load_f32(params[j], c->params_dtype, channel, 1, 1, one);
    channel_scale_shift(v4[0], v4[1], v4[2], v4[3], c->epsilon, k, shift);
}

/* channel_scale_shift for n channels of f32 statistics at once, in a
 * loop the compiler vectorizes: a block of a small plane (7x7) spent more
 * time on its channels' square roots and quotients one by one than on
 * its pixels. */
DFG_VECTOR_LOOP(channels_f32,
                (const float *restrict scale, const float *restrict bias,
                 const float *restrict mean, const float *restrict var,
                 float epsilon, int64_t n, float *restrict k,
                 float *restrict shift),
                (scale, bias, mean, var, epsilon, n, k, shift))
{
    for (int64_t l = 0; l < n; l++)
        channel_scale_shift(scale[l], bias[l], mean[l], var[l], epsilon,
                            &k[l], &shift[l]);
}

/* 1 when the first post-op is a relu, which the loops below take in the
 * same pass (max(y, 0), the bits of dfg_relu). */
static int first_is_relu(const dfg_attrs *a)
{
    return a->n_post_ops > 0 && a->post_ops[0] == DFG_POST_RELU;
}

DFG_VECTOR_LOOP(scale_shift,
                (const float *restrict v, float k, float shift, int relu,
                 int64_t m, float *o),
                (v, k, shift, relu, m, o))
{
    if (relu)
        for (int64_t i = 0; i < m; i++)
            o[i] = dfg_relu(v[i] * k + shift);
    else
        for (int64_t i = 0; i < m; i++)
            o[i] = v[i] * k + shift;
}

/* k and shift of the n channels from `first` on: in one vectorized loop
 * where the statistics are f32, else channel by channel. */
static void channels_of(const batch_norm_ctx *c, int64_t first, int64_t n,
                        float *k, float *shift)
{
    if (c->params_dtype == DFG_F32) {
        channels_f32((const float *)c->scale + first,
                     (const float *)c->bias + first,
                     (const float *)c->mean + first,
                     (const float *)c->var + first, c->epsilon, n, k, shift);
        return;
    }
    for (int64_t l = 0; l < n; l++)
        batch_norm_channel(c, first + l, &k[l], &shift[l]);
}

/* y[i][l] = x[i][l] * k[l] + shift[l] over n pixels of b lanes, then
 * max(y, 0) when relu; b is a constant where the callers inline it. */
static inline void scale_shift_lanes(int64_t b, const float *restrict x,
                                     const float *restrict k,
                                     const float *restrict shift, int relu,
                                     int64_t n, float *y)
{
    for (int64_t i = 0; i < n; i++, x += b, y += b)
        for (int64_t l = 0; l < b; l++)
            y[l] = relu ? dfg_relu(x[l] * k[l] + shift[l])
                        : x[l] * k[l] + shift[l];
}

/* One value of each of m channels: one pixel of m lanes. */
DFG_VECTOR_LOOP(scale_shift_each,
                (const float *v, const float *k, const float *shift, int relu,
                 int64_t m, float *o),
                (v, k, shift, relu, m, o))
{
    scale_shift_lanes(m, v, k, shift, relu, 1, o);
}

/* A tensor whose channels hold one value each ([rows, C], BatchNorm1d's):
 * tasks of up to DFG_CPU_BLOCK channels by a block of rows, each
 * computing its channels' scales and shifts once for all its rows (once
 * per value, they took 160 times as long as the arithmetic). */
static void batch_norm_by_channel(const batch_norm_ctx *c, int64_t rows)
{
    int64_t chunks = (c->channels + DFG_CPU_BLOCK - 1) / DFG_CPU_BLOCK;
    int64_t width = c->channels < DFG_CPU_BLOCK ? c->channels : DFG_CPU_BLOCK;
    int64_t per = (DFG_CPU_PARALLEL_MIN_ELEMENTS / 2) / width;
    per = per > 0 ? per : 1;
    int64_t tasks = chunks * ((rows + per - 1) / per);
    int relu = first_is_relu(c->attrs);
#pragma omp parallel for if (rows * c->channels >= DFG_CPU_PARALLEL_MIN_ELEMENTS)
    for (int64_t t = 0; t < tasks; t++) {
        float k[DFG_CPU_BLOCK], shift[DFG_CPU_BLOCK];
        float buf[DFG_CPU_BLOCK], obuf[DFG_CPU_BLOCK];
        int64_t c0 = t % chunks * DFG_CPU_BLOCK, r0 = t / chunks * per;
        int64_t m = c->channels - c0 < DFG_CPU_BLOCK ? c->channels - c0
                                                     : DFG_CPU_BLOCK;
        int64_t r1 = rows - r0 < per ? rows : r0 + per;
        channels_of(c, c0, m, k, shift);
        for (int64_t r = r0; r < r1; r++) {
            int64_t at = r * c->channels + c0;
            const float *v = dfg_load_f32(c->x, c->dtype, at, 1, m, buf);
            float *o = dfg_f32_target(c->out, c->dtype, at, obuf);
            scale_shift_each(v, k, shift, relu, m, o);
            dfg_post_ops_apply_span(c->attrs, relu, o, m);
            dfg_store_f32(c->out, c->dtype, at, m, o);
        }
    }
}

/* Elements [start, start + n) of the flat tensor, cut where the channel
 * changes so that each piece has one scale and shift. */
static void batch_norm_range(void *opaque, int64_t start, int64_t n)
{
    const batch_norm_ctx *c = opaque;
    float buf[DFG_CPU_BLOCK], obuf[DFG_CPU_BLOCK];
    int relu = first_is_relu(c->attrs);
    for (int64_t end = start + n; start < end;) {
        int64_t channel = (start / c->plane) % c->channels;
        int64_t plane_end = (start / c->plane + 1) * c->plane;
        int64_t m = (plane_end < end ? plane_end : end) - start;
        float k_scale, shift;
        batch_norm_channel(c, channel, &k_scale, &shift);
        const float *v = dfg_load_f32(c->x, c->dtype, start, 1, m, buf);
        float *o = dfg_f32_target(c->out, c->dtype, start, obuf);
        scale_shift(v, k_scale, shift, relu, m, o);
        dfg_post_ops_apply_span(c->attrs, relu, o, m);
        dfg_store_f32(c->out, c->dtype, start, m, o);
        start += m;
    }
}

/* The checks both kernels make, and their context. */
static dfg_status batch_norm_context(const dfg_kernel_args *args,
                                     batch_norm_ctx *c)
{
    const dfg_type *in = &args->in_types[0];
    int64_t numel = dfg_type_numel(in);
    if (in->rank < 2 || numel < 0 || args->n_inputs < 5 ||
        !dfg_type_equal(in, &args->out_types[0]) || !dfg_dtype_is_float(in->dtype))
        return dfg_error(DFG_ERR_SHAPE, "batch_norm: expected x of rank >= 2 and 5 inputs");
    dfg_dtype params = args->in_types[1].dtype;
    for (int32_t i = 1; i < 5; i++)
        if (dfg_type_numel(&args->in_types[i]) != in->shape[1] ||
            args->in_types[i].dtype != params ||
            (params != in->dtype && params != DFG_F32))
            return dfg_error(DFG_ERR_SHAPE, "batch_norm: input %d must hold %lld %s values",
                             (int)i, (long long)in->shape[1],
                             dfg_dtype_name(params));
    *c = (batch_norm_ctx){in->dtype, args->in[0], args->in[1], args->in[2],
                          args->in[3], args->in[4], params, args->out[0],
                          in->shape[1], 1, args->attrs->epsilon, args->attrs};
    for (int32_t d = 2; d < in->rank; d++)
        c->plane *= in->shape[d];
    return DFG_OK;
}

dfg_status dfg_cpu_batch_norm(const dfg_kernel_args *args)
{
    batch_norm_ctx c;
    dfg_status st = batch_norm_context(args, &c);
    int64_t numel = dfg_type_numel(&args->in_types[0]);
    if (st != DFG_OK || numel == 0)
        return st;
    if (c.plane == 1)
        batch_norm_by_channel(&c, numel / c.channels);
    else
        dfg_cpu_parallel_ranges(numel, DFG_CPU_BLOCK, batch_norm_range, &c);
    return DFG_OK;
}

int dfg_cpu_batch_norm_takes_blocked(const struct dfg_type *in, int32_t n_in,
                                     const struct dfg_type *out,
                                     int32_t layout)
{
    if (n_in != 5 || layout == DFG_LAYOUT_PLAIN || layout == DFG_LAYOUT_NHWC ||
        !dfg_layout_fits(&in[0], layout) || !dfg_type_equal(&in[0], out))
        return 0;
    for (int32_t i = 1; i < 5; i++)
        if (in[i].dtype != DFG_F32 || in[i].rank != 1 ||
            in[i].shape[0] != in[0].shape[1])
            return 0;
    return 1;
}

DFG_VECTOR_LOOP(scale_shift_8,
                (const float *x, const float *k, const float *shift, int relu,
                 int64_t n, float *y),
                (x, k, shift, relu, n, y))
{
    scale_shift_lanes(8, x, k, shift, relu, n, y);
}

DFG_VECTOR_LOOP(scale_shift_16,
                (const float *x, const float *k, const float *shift, int relu,
                 int64_t n, float *y),
                (x, k, shift, relu, n, y))
{
    scale_shift_lanes(16, x, k, shift, relu, n, y);
}

/* One channel block of one image (stored: the tensor's stored channels,
 * a multiple of b): b channels' scale and shift, then pixel by pixel (b
 * lanes each). A padded lane's scale and shift are zero: its statistics
 * are not read and its padding becomes zero. The statistics are f32
 * (dfg_cpu_batch_norm_takes_blocked). */
static void batch_norm_block(const batch_norm_ctx *c, int64_t b,
                             int64_t stored, int64_t block, int relu)
{
    float k[16] = {0}, shift[16] = {0};
    int64_t c0 = block * b % stored;
    int64_t real = c->channels - c0 < b ? c->channels - c0 : b;
    channels_f32((const float *)c->scale + c0, (const float *)c->bias + c0,
                 (const float *)c->mean + c0, (const float *)c->var + c0,
                 c->epsilon, real, k, shift);
    int64_t n = c->plane * b;
    const float *x = (const float *)c->x + block * n;
    float *y = (float *)c->out + block * n;
    if (b == 8)
        scale_shift_8(x, k, shift, relu, c->plane, y);
    else
        scale_shift_16(x, k, shift, relu, c->plane, y);
    dfg_post_ops_apply_span(c->attrs, relu, y, n);
}

dfg_status dfg_cpu_batch_norm_blocked(const dfg_kernel_args *args)
{
    batch_norm_ctx c;
    dfg_status st = batch_norm_context(args, &c);
    const dfg_type *x = &args->in_types[0];
    if (st != DFG_OK)
        return st;
    if (!dfg_cpu_batch_norm_takes_blocked(args->in_types, args->n_inputs,
                                          &args->out_types[0], x->layout) ||
        args->out_types[0].layout != x->layout)
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "batch_norm: no blocked kernel for these operands "
                         "(f32 x and y in one blocked layout, f32 "
                         "statistics)");
    int64_t b = dfg_layout_block(x->layout);
    int64_t stored = dfg_layout_channels(x);
    int64_t blocks = x->shape[0] * (stored / b);
    int relu = first_is_relu(c.attrs);
    int parallel = blocks * c.plane * b >= DFG_CPU_PARALLEL_MIN_ELEMENTS;
#pragma omp parallel for if (parallel)
    for (int64_t block = 0; block < blocks; block++)
        batch_norm_block(&c, b, stored, block, relu);
    return DFG_OK;
}
