/* max_pool and average_pool over NCHW: kernel, strides, pads, dilations,
 * ceil_mode (already in the output shape) and count_include_pad. The
 * window arithmetic is src/math/pool_window.h, shared with CUDA. */
#include <math.h>

#include "runtime/cpu/elementwise/dtype_access.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/parallel.h"
#include "math/strided_range.h"
#include "ir/geometry/pool_geometry.h"
#include "runtime/cpu/elementwise/vector_clones.h"

/* Max or sum of the window taps [first_y, end_y) x [first_x, end_x) that
 * start at (y0, x0), read a row of taps at a time. NaN wins a max, as in
 * PyTorch. */
static float window_reduce(const dfg_pool_geometry *p, int is_max,
                           const void *x, dfg_dtype dtype, int64_t plane_at,
                           int64_t y0, int64_t x0, int64_t first_y,
                           int64_t end_y, int64_t first_x, int64_t end_x)
{
    float acc = is_max ? -INFINITY : 0.0f;
    float buf[DFG_CPU_BLOCK];
    for (int64_t ty = first_y; ty < end_y; ty++) {
        int64_t iy = y0 + ty * p->dilation[0];
        for (int64_t tx = first_x; tx < end_x; tx += DFG_CPU_BLOCK) {
            int64_t n = end_x - tx < DFG_CPU_BLOCK ? end_x - tx : DFG_CPU_BLOCK;
            const float *v = dfg_load_f32(
                x, dtype, plane_at + iy * p->in_w + x0 + tx * p->dilation[1],
                p->dilation[1], n, buf);
            for (int64_t i = 0; i < n; i++) {
                if (!is_max)
                    acc += v[i];
                else if (v[i] > acc || isnan(v[i]))
                    acc = v[i];
            }
        }
    }
    return acc;
}

/* One output row (oy) of one plane. */
static void pool_row(const dfg_pool_geometry *p, int is_max, const void *x,
                     dfg_dtype dtype, int64_t plane, int64_t oy, void *y)
{
    int64_t y0 = dfg_pool_window_start(oy, p->stride[0], p->pad_lo[0]);
    int64_t first_y, end_y;
    dfg_pool_window_taps(y0, p->kernel[0], p->dilation[0], p->in_h, &first_y,
                         &end_y);
    int64_t div_y = dfg_pool_window_divisor(y0, p->kernel[0], p->dilation[0],
                                            p->in_h, p->pad_lo[0],
                                            p->pad_hi[0],
                                            p->count_include_pad);
    int64_t plane_at = plane * p->in_h * p->in_w;
    int64_t row_at = (plane * p->out_h + oy) * p->out_w;
    float buf[DFG_CPU_BLOCK];
    for (int64_t ox0 = 0; ox0 < p->out_w; ox0 += DFG_CPU_BLOCK) {
        int64_t n = p->out_w - ox0 < DFG_CPU_BLOCK ? p->out_w - ox0
                                                   : DFG_CPU_BLOCK;
        float *out = dfg_f32_target(y, dtype, row_at + ox0, buf);
        for (int64_t i = 0; i < n; i++) {
            int64_t x0 = dfg_pool_window_start(ox0 + i, p->stride[1],
                                               p->pad_lo[1]);
            int64_t first_x, end_x;
            dfg_pool_window_taps(x0, p->kernel[1], p->dilation[1], p->in_w,
                                 &first_x, &end_x);
            float v = window_reduce(p, is_max, x, dtype, plane_at, y0, x0,
                                    first_y, end_y, first_x, end_x);
            if (!is_max) {
                int64_t divisor =
                    div_y * dfg_pool_window_divisor(
                                x0, p->kernel[1], p->dilation[1], p->in_w,
                                p->pad_lo[1], p->pad_hi[1],
                                p->count_include_pad);
                /* No tap inside the input and padding not counted: 0,
                 * not 0/0. */
                v = divisor > 0 ? v / (float)divisor : 0.0f;
            }
            out[i] = v;
        }
        dfg_store_f32(y, dtype, row_at + ox0, n, out);
    }
}

/* Folds the taps x[i * stride], i in [0, n), into out[i]; NaN wins a
 * max. Strides 1 and 2, the common ones, are loops of their own, which
 * the compiler vectorizes (stride 2 as loads and a shuffle); a pool's
 * output never shares bytes with its input (ops.def), hence restrict.
 * Always inlined: a call would run the baseline's code from every clone
 * of pool_band_f32. */
static inline __attribute__((always_inline)) void
fold_tap_f32(int is_max, const float *restrict x, int64_t stride,
             float *restrict out, int64_t n)
{
    if (is_max && stride == 1) {
        for (int64_t i = 0; i < n; i++)
            out[i] = x[i] > out[i] || x[i] != x[i] ? x[i] : out[i];
    } else if (is_max && stride == 2) {
        for (int64_t i = 0; i < n; i++) {
            float v = x[2 * i];
            out[i] = v > out[i] || v != v ? v : out[i];
        }
    } else if (is_max) {
        for (int64_t i = 0; i < n; i++) {
            float v = x[i * stride];
            out[i] = v > out[i] || v != v ? v : out[i];
        }
    } else if (stride == 1) {
        for (int64_t i = 0; i < n; i++)
            out[i] += x[i];
    } else {
        for (int64_t i = 0; i < n; i++)
            out[i] += x[i * stride];
    }
}

/* Output rows per task of the f32 path, and window columns whose ranges
 * it computes at a time. */
#define BAND_ROWS 8
#define TAP_GROUP 8

/* The f32 form of pool_row for output rows [oy_begin, oy_end) of one
 * plane: each row accumulates one tap (ty, tx) at a time over all its
 * windows, a strided walk along one input row that the compiler
 * vectorizes, instead of one window at a time through block loads. Which
 * outputs a column tap reaches is the same for every row, so it is worked
 * out once per band. Up to TAP_GROUP columns the taps of an output come in
 * the order of pool_row, so the sums are the same. */
DFG_VECTOR_LOOP(pool_band_f32,
                (const dfg_pool_geometry *p, int is_max, const float *x,
                 float *y, int64_t oy_begin, int64_t oy_end),
                (p, is_max, x, y, oy_begin, oy_end))
{
    int64_t ow = p->out_w, sx = p->stride[1];
    for (int64_t i = oy_begin * ow; i < oy_end * ow; i++)
        y[i] = is_max ? -INFINITY : 0.0f;
    for (int64_t tx0 = 0; tx0 < p->kernel[1]; tx0 += TAP_GROUP) {
        int64_t taps = p->kernel[1] - tx0 < TAP_GROUP ? p->kernel[1] - tx0
                                                      : TAP_GROUP;
        int64_t at[TAP_GROUP], first[TAP_GROUP], end[TAP_GROUP];
        for (int64_t j = 0; j < taps; j++) {
            /* output i reads row[at + i * sx] */
            at[j] = (tx0 + j) * p->dilation[1] - p->pad_lo[1];
            dfg_strided_range(at[j], ow, sx, 0, p->in_w, &first[j], &end[j]);
        }
        for (int64_t oy = oy_begin; oy < oy_end; oy++) {
            int64_t y0 = dfg_pool_window_start(oy, p->stride[0], p->pad_lo[0]);
            for (int64_t ty = 0; ty < p->kernel[0]; ty++) {
                int64_t iy = y0 + ty * p->dilation[0];
                if (iy < 0 || iy >= p->in_h)
                    continue;
                const float *row = x + iy * p->in_w;
                for (int64_t j = 0; j < taps; j++)
                    if (first[j] < end[j])
                        fold_tap_f32(is_max, row + (at[j] + first[j] * sx), sx,
                                     y + oy * ow + first[j], end[j] - first[j]);
            }
        }
    }
    if (is_max)
        return;
    /* The columns' divisors once for the band's rows, as floats (whole
     * numbers of taps, exact), so that the division loop vectorizes: each
     * divisor computed again for every output, and converted from an
     * integer, took most of an average pool's time. */
    float div_x[DFG_CPU_BLOCK];
    for (int64_t i0 = 0; i0 < ow; i0 += DFG_CPU_BLOCK) {
        int64_t n = ow - i0 < DFG_CPU_BLOCK ? ow - i0 : DFG_CPU_BLOCK;
        for (int64_t i = 0; i < n; i++)
            div_x[i] = (float)dfg_pool_window_divisor(
                dfg_pool_window_start(i0 + i, sx, p->pad_lo[1]), p->kernel[1],
                p->dilation[1], p->in_w, p->pad_lo[1], p->pad_hi[1],
                p->count_include_pad);
        for (int64_t oy = oy_begin; oy < oy_end; oy++) {
            float div_y = (float)dfg_pool_window_divisor(
                dfg_pool_window_start(oy, p->stride[0], p->pad_lo[0]),
                p->kernel[0], p->dilation[0], p->in_h, p->pad_lo[0],
                p->pad_hi[0], p->count_include_pad);
            float *out = y + oy * ow + i0;
            for (int64_t i = 0; i < n; i++) {
                float divisor = div_y * div_x[i];
                out[i] = divisor > 0.0f ? out[i] / divisor : 0.0f;
            }
        }
    }
}

dfg_status dfg_cpu_pool(const dfg_kernel_args *args)
{
    const dfg_type *tx = &args->in_types[0];
    dfg_pool_geometry p;
    dfg_status st = dfg_pool_geometry_make(dfg_op_get(args->op)->name,
                                           args->attrs, tx,
                                           &args->out_types[0], &p);
    if (st != DFG_OK)
        return st;
    int is_max = args->op == DFG_OP_MAX_POOL;
    int64_t rows = p.planes * p.out_h;
    const void *x = args->in[0];
    void *y = args->out[0];
    dfg_dtype dtype = tx->dtype;
    int parallel = rows * p.out_w * p.kernel[0] * p.kernel[1] >=
                   DFG_CPU_PARALLEL_MIN_ELEMENTS;
    if (dtype == DFG_F32) {
        int64_t bands = (p.out_h + BAND_ROWS - 1) / BAND_ROWS;
#pragma omp parallel for if (parallel)
        for (int64_t t = 0; t < p.planes * bands; t++) {
            int64_t plane = t / bands, oy = t % bands * BAND_ROWS;
            pool_band_f32(&p, is_max,
                          (const float *)x + plane * p.in_h * p.in_w,
                          (float *)y + plane * p.out_h * p.out_w, oy,
                          oy + BAND_ROWS < p.out_h ? oy + BAND_ROWS : p.out_h);
        }
        return DFG_OK;
    }
#pragma omp parallel for if (parallel)
    for (int64_t r = 0; r < rows; r++)
        pool_row(&p, is_max, x, dtype, r / p.out_h, r % p.out_h, y);
    return DFG_OK;
}
