/* max_pool and global_average_pool over blocked tensors
 * (pool_blocked.h): each output is a lane-wise max or sum of channel-block
 * vectors, b (8 or 16) consecutive floats a tap, which the compiler turns
 * into one or two AVX2 vectors. Measured on the 2-core AVX2 EPYC beside
 * oneDNN 2.6's jit:avx2 pooling of the same nChw8c tensors, 2 threads,
 * best of many runs: max pools 192x56x56 -> 28x28 (3x3, stride 2) 0.27
 * -> 0.09 ms, 256x28x28 (3x3, stride 1) 0.34 -> 0.12 ms, 832x7x7 0.058
 * -> 0.023 ms (windows inside the input skip the taps' divisions: 5-10%
 * less at batch 8, one thread, 256x28x28 3x3 stride 1 2.25 -> 2.03 ms);
 * global average pools 1152x7x7 0.015 -> 0.004 ms,
 * 480x14x14 0.012 -> 0.007 ms, 144x56x56 0.030 -> 0.028 ms. */
#include <math.h>

#include "util/error.h"
#include "ir/layout_rule.h"
#include "runtime/cpu/parallel.h"
#include "runtime/cpu/reduce/pool_blocked.h"
#include "ir/geometry/pool_geometry.h"
#include "runtime/cpu/elementwise/vector_clones.h"

int dfg_cpu_pool_blocked_takes(int32_t op, const dfg_type *x,
                               const dfg_type *y, int32_t layout)
{
    int64_t b = dfg_layout_block(layout);
    return (op == DFG_OP_MAX_POOL || op == DFG_OP_GLOBAL_AVERAGE_POOL) &&
           b > 1 && x->dtype == DFG_F32 && y->dtype == DFG_F32 &&
           dfg_layout_fits(x, layout) && dfg_layout_fits(y, layout);
}

/* Refuses what dfg_cpu_pool_blocked_takes does not take, naming op and
 * both layouts. */
static dfg_status check_takes(const dfg_kernel_args *args)
{
    const dfg_type *x = &args->in_types[0], *y = &args->out_types[0];
    if (dfg_cpu_pool_blocked_takes(args->op, x, y, x->layout) &&
        y->layout == x->layout)
        return DFG_OK;
    return dfg_error(DFG_ERR_UNSUPPORTED,
                     "%s: no blocked kernel for a %s input and a %s output",
                     dfg_op_get(args->op)->name, dfg_layout_name(x->layout),
                     dfg_layout_name(y->layout));
}

/* out[0..b) = the lane-wise max over the rows x cols taps at x + r * row
 * + c * column (in floats); b, rows and cols are constants where the
 * callers below inline them, and the tap loops are then unrolled whole
 * (a 3x3 window with run-time bounds took twice as long at batch 8: its
 * loop counters and two accumulators round the short inner loop). NaN
 * wins, as in the plain kernel (pool.c): a tap that is NaN is kept apart
 * from the max (a compare and a blend, cheaper than folding it into the
 * max's own compare) and replaces it at the end. No taps give -inf, as
 * there. */
static inline void max_window(int64_t b, const float *restrict x,
                              int64_t rows, int64_t cols, int64_t row,
                              int64_t column, float *restrict out)
{
    float max[16], nan[16];
    for (int64_t l = 0; l < b; l++) {
        max[l] = -INFINITY;
        nan[l] = 0.0f;
    }
#pragma GCC unroll 4
    for (int64_t r = 0; r < rows; r++)
#pragma GCC unroll 4
        for (int64_t c = 0; c < cols; c++) {
            const float *v = x + r * row + c * column;
            for (int64_t l = 0; l < b; l++) {
                max[l] = v[l] > max[l] ? v[l] : max[l];
                nan[l] = v[l] != v[l] ? v[l] : nan[l];
            }
        }
    for (int64_t l = 0; l < b; l++)
        out[l] = nan[l] != nan[l] ? nan[l] : max[l];
}

/* Output row oy of one channel block (x its [in_h][in_w][b] floats, y
 * its [out_h][out_w][b]); b is a constant where the callers below inline
 * it. A 3x3 window inside the input, the common one, takes the unrolled
 * max_window. Always inlined: left to itself the compiler keeps one
 * out-of-line copy without AVX2, outside max_row_8's and max_row_16's
 * clones (4x as slow). */
__attribute__((always_inline)) static inline void max_row(const dfg_pool_geometry *p, int64_t b,
                           const float *restrict x, float *restrict y,
                           int64_t oy)
{
    int64_t y0 = dfg_pool_window_start(oy, p->stride[0], p->pad_lo[0]);
    int64_t first_y, end_y;
    dfg_pool_window_taps(y0, p->kernel[0], p->dilation[0], p->in_h, &first_y,
                         &end_y);
    float *out = y + oy * p->out_w * b;
    int64_t span_x = (p->kernel[1] - 1) * p->dilation[1];
    int64_t row = p->dilation[0] * p->in_w * b, column = p->dilation[1] * b;
    int rows_3x3 = p->kernel[0] == 3 && p->kernel[1] == 3 && first_y == 0 &&
                   end_y == 3;
    const float *rows = x + (y0 + first_y * p->dilation[0]) * p->in_w * b;
    for (int64_t ox = 0; ox < p->out_w; ox++, out += b) {
        int64_t x0 = dfg_pool_window_start(ox, p->stride[1], p->pad_lo[1]);
        /* Only a window that crosses an edge needs the taps' divisions,
         * which cost more than the max of a 3x3 window. */
        if (x0 >= 0 && x0 + span_x < p->in_w) {
            if (rows_3x3)
                max_window(b, rows + x0 * b, 3, 3, row, column, out);
            else
                max_window(b, rows + x0 * b, end_y - first_y, p->kernel[1],
                           row, column, out);
            continue;
        }
        int64_t first_x, end_x;
        dfg_pool_window_taps(x0, p->kernel[1], p->dilation[1], p->in_w,
                             &first_x, &end_x);
        max_window(b, rows + (x0 + first_x * p->dilation[1]) * b,
                   end_y - first_y, end_x - first_x, row, column, out);
    }
}

DFG_VECTOR_LOOP(max_row_8,
                (const dfg_pool_geometry *p, const float *x, float *y,
                 int64_t oy),
                (p, x, y, oy))
{
    max_row(p, 8, x, y, oy);
}

DFG_VECTOR_LOOP(max_row_16,
                (const dfg_pool_geometry *p, const float *x, float *y,
                 int64_t oy),
                (p, x, y, oy))
{
    max_row(p, 16, x, y, oy);
}

dfg_status dfg_cpu_max_pool_blocked(const dfg_kernel_args *args)
{
    const dfg_type *tx = &args->in_types[0], *ty = &args->out_types[0];
    dfg_pool_geometry p;
    dfg_status st = dfg_pool_geometry_make("max_pool", args->attrs, tx, ty,
                                           &p);
    if (st != DFG_OK)
        return st;
    if ((st = check_takes(args)) != DFG_OK)
        return st;
    int64_t b = dfg_layout_block(tx->layout);
    /* A padded tail block pools its padding too (zeros stay zeros). */
    int64_t rows = tx->shape[0] * (dfg_layout_channels(tx) / b) * p.out_h;
    const float *x = args->in[0];
    float *y = args->out[0];
    int parallel = rows * p.out_w * b * p.kernel[0] * p.kernel[1] >=
                   DFG_CPU_PARALLEL_MIN_ELEMENTS;
#pragma omp parallel for if (parallel)
    for (int64_t r = 0; r < rows; r++) {
        int64_t block = r / p.out_h;
        const float *xb = x + block * p.in_h * p.in_w * b;
        float *yb = y + block * p.out_h * p.out_w * b;
        if (b == 8)
            max_row_8(&p, xb, yb, r % p.out_h);
        else
            max_row_16(&p, xb, yb, r % p.out_h);
    }
    return DFG_OK;
}

/* The mean of each lane over the n taps of one channel block (x its
 * [n][b] floats) into y[0..b), summed in double as the plain reduction
 * (f32_reduce.h) does; b is a constant where the callers below inline
 * it. Four taps at a time into four sums per lane: one sum waits for
 * each add before the next (a chain of adds' latencies), four run side
 * by side. */
__attribute__((always_inline)) static inline void
mean_block(int64_t b, const float *restrict x, int64_t n, float *restrict y)
{
    double s0[16], s1[16], s2[16], s3[16];
    for (int64_t l = 0; l < b; l++)
        s0[l] = s1[l] = s2[l] = s3[l] = 0.0;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4, x += 4 * b)
        for (int64_t l = 0; l < b; l++) {
            s0[l] += x[l];
            s1[l] += x[b + l];
            s2[l] += x[2 * b + l];
            s3[l] += x[3 * b + l];
        }
    for (; i < n; i++, x += b)
        for (int64_t l = 0; l < b; l++)
            s0[l] += x[l];
    for (int64_t l = 0; l < b; l++)
        y[l] = (float)(((s0[l] + s1[l]) + (s2[l] + s3[l])) / (double)n);
}

DFG_VECTOR_LOOP(mean_block_8, (const float *x, int64_t n, float *y),
                (x, n, y))
{
    mean_block(8, x, n, y);
}

DFG_VECTOR_LOOP(mean_block_16, (const float *x, int64_t n, float *y),
                (x, n, y))
{
    mean_block(16, x, n, y);
}

dfg_status dfg_cpu_global_average_pool_blocked(const dfg_kernel_args *args)
{
    const dfg_type *tx = &args->in_types[0], *ty = &args->out_types[0];
    dfg_status st = check_takes(args);
    if (st != DFG_OK)
        return st;
    if (ty->rank != 4 || ty->shape[0] != tx->shape[0] ||
        ty->shape[1] != tx->shape[1] || ty->shape[2] != 1 ||
        ty->shape[3] != 1) {
        char in[96], out[96];
        return dfg_error(DFG_ERR_SHAPE,
                         "global_average_pool: output %s is not [N, C, 1, 1] "
                         "of input %s", dfg_type_format(ty, out, sizeof out),
                         dfg_type_format(tx, in, sizeof in));
    }
    int64_t b = dfg_layout_block(tx->layout);
    int64_t blocks = tx->shape[0] * (dfg_layout_channels(tx) / b);
    int64_t plane = tx->shape[2] * tx->shape[3];
    const float *x = args->in[0];
    float *y = args->out[0];
    int parallel = blocks * plane * b >= DFG_CPU_PARALLEL_MIN_ELEMENTS;
#pragma omp parallel for if (parallel)
    for (int64_t k = 0; k < blocks; k++) {
        if (b == 8)
            mean_block_8(x + k * plane * b, plane, y + k * b);
        else
            mean_block_16(x + k * plane * b, plane, y + k * b);
    }
    return DFG_OK;
}
