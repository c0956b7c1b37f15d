/* Backward pooling over NCHW f32 (the shape rules check the operands):
 *   max_pool_grad(x, dy): each dy element goes to the first largest tap of
 *     its window (the tap the forward max kept);
 *   average_pool_grad(dy): each dy element is spread evenly over the taps
 *     its forward average divided by.
 * The window arithmetic is the forward's (src/math/pool_window.h). Windows
 * overlap when the stride is smaller than the kernel, so dx accumulates,
 * one plane at a time on its own thread. */
#include <math.h>
#include <string.h>

#include "kernels.h"
#include "parallel.h"
#include "pool_geometry.h"

/* The taps of output (oy, ox)'s window inside the input, and its corner. */
typedef struct window {
    int64_t y0, x0, first_y, end_y, first_x, end_x;
} window;

static window window_at(const dfg_pool_geometry *g, int64_t oy, int64_t ox)
{
    window w;
    w.y0 = dfg_pool_window_start(oy, g->stride[0], g->pad_lo[0]);
    w.x0 = dfg_pool_window_start(ox, g->stride[1], g->pad_lo[1]);
    dfg_pool_window_taps(w.y0, g->kernel[0], g->dilation[0], g->in_h,
                         &w.first_y, &w.end_y);
    dfg_pool_window_taps(w.x0, g->kernel[1], g->dilation[1], g->in_w,
                         &w.first_x, &w.end_x);
    return w;
}

static void max_plane(const dfg_pool_geometry *g, const float *x,
                      const float *dy, float *dx)
{
    for (int64_t oy = 0; oy < g->out_h; oy++)
        for (int64_t ox = 0; ox < g->out_w; ox++) {
            window w = window_at(g, oy, ox);
            int64_t best = -1;
            float best_value = -INFINITY;
            for (int64_t ty = w.first_y; ty < w.end_y; ty++)
                for (int64_t tx = w.first_x; tx < w.end_x; tx++) {
                    int64_t at = (w.y0 + ty * g->dilation[0]) * g->in_w +
                                 w.x0 + tx * g->dilation[1];
                    if (best < 0 || x[at] > best_value || isnan(x[at])) {
                        best = at;
                        best_value = x[at];
                        if (isnan(best_value))
                            goto found;
                    }
                }
        found:
            if (best >= 0)
                dx[best] += dy[oy * g->out_w + ox];
        }
}

static void average_plane(const dfg_pool_geometry *g, const float *dy,
                          float *dx)
{
    for (int64_t oy = 0; oy < g->out_h; oy++)
        for (int64_t ox = 0; ox < g->out_w; ox++) {
            window w = window_at(g, oy, ox);
            int64_t divisor =
                dfg_pool_window_divisor(w.y0, g->kernel[0], g->dilation[0],
                                        g->in_h, g->pad_lo[0], g->pad_hi[0],
                                        g->count_include_pad) *
                dfg_pool_window_divisor(w.x0, g->kernel[1], g->dilation[1],
                                        g->in_w, g->pad_lo[1], g->pad_hi[1],
                                        g->count_include_pad);
            if (divisor <= 0)
                continue;
            float share = dy[oy * g->out_w + ox] / (float)divisor;
            for (int64_t ty = w.first_y; ty < w.end_y; ty++)
                for (int64_t tx = w.first_x; tx < w.end_x; tx++)
                    dx[(w.y0 + ty * g->dilation[0]) * g->in_w + w.x0 +
                       tx * g->dilation[1]] += share;
        }
}

dfg_status dfg_cpu_pool_grad(const dfg_kernel_args *args)
{
    int is_max = args->op == DFG_OP_MAX_POOL_GRAD;
    const dfg_type *dx_type = &args->out_types[0];
    const dfg_type *dy_type = &args->in_types[is_max ? 1 : 0];
    const float *x = is_max ? args->in[0] : NULL;
    const float *dy = args->in[is_max ? 1 : 0];
    float *dx = args->out[0];
    dfg_pool_geometry g;
    dfg_status st = dfg_pool_geometry_make(dfg_op_get(args->op)->name,
                                           args->attrs, dx_type, dy_type, &g);
    if (st != DFG_OK)
        return st;
    int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
    memset(dx, 0, (size_t)(g.planes * in_plane) * sizeof *dx);
#pragma omp parallel for if (g.planes * out_plane * g.kernel[0] * \
                             g.kernel[1] >= DFG_CPU_PARALLEL_MIN_ELEMENTS)
    for (int64_t p = 0; p < g.planes; p++) {
        if (is_max)
            max_plane(&g, x + p * in_plane, dy + p * out_plane,
                      dx + p * in_plane);
        else
            average_plane(&g, dy + p * out_plane, dx + p * in_plane);
    }
    return DFG_OK;
}
