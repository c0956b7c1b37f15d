/* Depthwise conv2d as a direct stencil: each output plane (image n,
 * filter m) reads one input plane, channel m / (M/group), so it is a sum
 * over the kernel taps of the input rows scaled by one weight. The planes
 * are independent and shared among the OpenMP threads; within a row of
 * output pixels the taps are accumulated in blocks of DFG_CPU_BLOCK
 * columns, one vectorisable pass per tap. An im2col GEMM would have a
 * single output row per group and run at a small fraction of this speed.
 *
 * Written over its input (y == x, dfg_conv_may_write_over_x), a plane's
 * output rows are computed into a ring of pad_top + 1 rows (f32,
 * dfg_conv_in_place_ring_rows) in the step's workspace, one slot per
 * thread, and row oy - pad_top is stored
 * once row oy is computed: every later output row reads input rows from
 * oy + 1 - pad_top on. The sums are the out-of-place ones, tap for tap,
 * so both give the same bits. */
#include "runtime/cpu/linalg/conv2d_depthwise.h"

#include "runtime/cpu/elementwise/dtype_access.h"
#include "math/im2col.h"
#include "math/strided_range.h"
#include "runtime/cpu/parallel.h"

#include <omp.h>

static void accumulate(float *restrict acc, const float *restrict in,
                       float weight, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        acc[i] += weight * in[i];
}

static float load_one(const void *src, dfg_dtype dtype, int64_t at)
{
    float buf;
    return *dfg_load_f32(src, dtype, at, 1, 1, &buf);
}

typedef struct depthwise_step {
    const dfg_conv_geometry *g;
    dfg_dtype dtype, w_dtype;
    const void *x, *w, *bias;
    int accumulate; /* onto y's f32 values (acc points into y) */
    void *y;
} depthwise_step;

/* Output pixels [ox0, ox0 + cols) of row oy of one plane, cols <=
 * DFG_CPU_BLOCK; x_plane and w_filter are element offsets of the input
 * plane and the filter's first weight. */
static void row_block(const depthwise_step *s, int64_t x_plane,
                      int64_t w_filter, float bias, int64_t oy, int64_t ox0,
                      int64_t cols, float *acc)
{
    const dfg_conv_geometry *g = s->g;
    float in_buf[DFG_CPU_BLOCK];
    for (int64_t i = 0; i < cols; i++)
        acc[i] = s->accumulate ? acc[i] + bias : bias;
    for (int64_t ky = 0; ky < g->kernel_h; ky++) {
        int64_t iy = dfg_im2col_coord(oy, ky, g->stride[0], g->pad_top,
                                      g->dilation[0]);
        if (iy < 0 || iy >= g->in_h)
            continue;
        for (int64_t kx = 0; kx < g->kernel_w; kx++) {
            int64_t ix0 = dfg_im2col_coord(ox0, kx, g->stride[1],
                                           g->pad_left, g->dilation[1]);
            int64_t first, end;
            dfg_strided_range(ix0, cols, g->stride[1], 0, g->in_w, &first,
                              &end);
            if (end <= first)
                continue;
            const float *in = dfg_load_f32(
                s->x, s->dtype,
                x_plane + iy * g->in_w + ix0 + first * g->stride[1],
                g->stride[1], end - first, in_buf);
            float weight = load_one(s->w, s->w_dtype,
                                    w_filter + ky * g->kernel_w + kx);
            accumulate(acc + first, in, weight, end - first);
        }
    }
}

/* Output plane `plane` = n * M + m. */
static void plane(const depthwise_step *s, int64_t plane)
{
    const dfg_conv_geometry *g = s->g;
    int64_t n = plane / g->out_channels, m = plane % g->out_channels;
    int64_t channel = m / g->filters_per_group;
    int64_t x_plane = (n * g->in_channels + channel) * g->in_h * g->in_w;
    int64_t w_filter = m * g->kernel_h * g->kernel_w;
    float bias = s->bias ? load_one(s->bias, s->w_dtype, m) : 0.0f;
    float buf[DFG_CPU_BLOCK];
    for (int64_t oy = 0; oy < g->out_h; oy++)
        for (int64_t ox0 = 0; ox0 < g->out_w; ox0 += DFG_CPU_BLOCK) {
            int64_t cols = g->out_w - ox0 < DFG_CPU_BLOCK ? g->out_w - ox0
                                                          : DFG_CPU_BLOCK;
            int64_t at = plane * g->pixels + oy * g->out_w + ox0;
            float *acc = dfg_f32_target(s->y, s->dtype, at, buf);
            row_block(s, x_plane, w_filter, bias, oy, ox0, cols, acc);
            dfg_store_f32(s->y, s->dtype, at, cols, acc);
        }
}

/* Output plane `plane` over its own input plane, through ring. */
static void plane_in_place(const depthwise_step *s, int64_t plane, float *ring)
{
    const dfg_conv_geometry *g = s->g;
    int64_t n = plane / g->out_channels, m = plane % g->out_channels;
    int64_t x_plane = (n * g->in_channels + m) * g->in_h * g->in_w;
    int64_t w_filter = m * g->kernel_h * g->kernel_w;
    float bias = s->bias ? load_one(s->bias, s->w_dtype, m) : 0.0f;
    int64_t rows = dfg_conv_in_place_ring_rows(g);
    for (int64_t oy = 0; oy < g->out_h + rows - 1; oy++) {
        if (oy < g->out_h)
            for (int64_t ox0 = 0; ox0 < g->out_w; ox0 += DFG_CPU_BLOCK) {
                int64_t cols = g->out_w - ox0 < DFG_CPU_BLOCK
                                   ? g->out_w - ox0
                                   : DFG_CPU_BLOCK;
                row_block(s, x_plane, w_filter, bias, oy,
                          ox0, cols, ring + (oy % rows) * g->out_w + ox0);
            }
        int64_t done = oy - (rows - 1);
        if (done >= 0)
            dfg_store_f32(s->y, s->dtype, plane * g->pixels + done * g->out_w,
                          g->out_w, ring + (done % rows) * g->out_w);
    }
}

void dfg_cpu_conv2d_depthwise(const dfg_conv_geometry *g, dfg_dtype dtype,
                              const void *x, dfg_dtype w_dtype, const void *w,
                              const void *bias, int accumulate, void *y,
                              float *workspace)
{
    const depthwise_step s = {g, dtype, w_dtype, x, w, bias, accumulate, y};
    int64_t planes = g->batch * g->out_channels;
    double macs = (double)planes * (double)g->pixels *
                  (double)(g->kernel_h * g->kernel_w);
    if (x != y) {
#pragma omp parallel for if (macs >= DFG_CPU_PARALLEL_MIN_MACS) \
    schedule(static)
        for (int64_t p = 0; p < planes; p++)
            plane(&s, p);
        return;
    }
    int64_t slot = dfg_conv_in_place_ring_rows(g) * g->out_w;
    /* one slot per thread: min(planes, DFG_CONV_IN_PLACE_SLOTS) slots */
    int64_t threads = omp_get_max_threads();
    if (threads > DFG_CONV_IN_PLACE_SLOTS)
        threads = DFG_CONV_IN_PLACE_SLOTS;
    if (threads > planes)
        threads = planes > 0 ? planes : 1;
#pragma omp parallel if (macs >= DFG_CPU_PARALLEL_MIN_MACS) \
    num_threads((int)threads)
    {
        float *ring = workspace + omp_get_thread_num() * slot;
#pragma omp for schedule(static)
        for (int64_t p = 0; p < planes; p++)
            plane_in_place(&s, p, ring);
    }
}
