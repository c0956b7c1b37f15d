/* Backward pooling over NCHW, f32 or narrow (mixed precision: computed in
 * f32, each sum of overlapping windows rounded to the narrow dtype), the
 * shape rules checking the operands:
 *   max_pool_grad(x, dy): each dy element goes to the first largest tap of
 *     its window (the tap the forward max kept);
 *   average_pool_grad(dy): each dy element is spread evenly over the taps
 *     its forward average divided by.
 * The window arithmetic is the forward's (src/math/pool_window.h). Windows
 * overlap when the stride is smaller than the kernel, so dx accumulates,
 * one plane at a time on its own thread. */
#include <math.h>
#include <string.h>

#include "ir/geometry/pool_geometry.h"
#include "runtime/cpu/elementwise/dtype_access.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/parallel.h"

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

/* A plane of an operand: its data, dtype and first element. */
typedef struct plane {
    void *data;
    dfg_dtype dtype;
    int64_t at;
} plane;

static float get(const plane *p, int64_t i)
{
    return dfg_float_at(p->data, p->dtype, p->at + i);
}

static void add(const plane *p, int64_t i, float v)
{
    dfg_float_put(p->data, p->dtype, p->at + i, get(p, i) + v);
}

static void max_plane(const dfg_pool_geometry *g, const plane *x,
                      const plane *dy, const plane *dx)
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
                    float value = get(x, at);
                    if (best < 0 || value > best_value || isnan(value)) {
                        best = at;
                        best_value = value;
                        if (isnan(best_value))
                            goto found;
                    }
                }
        found:
            if (best >= 0)
                add(dx, best, get(dy, oy * g->out_w + ox));
        }
}

static void average_plane(const dfg_pool_geometry *g, const plane *dy,
                          const plane *dx)
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
            float share = get(dy, oy * g->out_w + ox) / (float)divisor;
            for (int64_t ty = w.first_y; ty < w.end_y; ty++)
                for (int64_t tx = w.first_x; tx < w.end_x; tx++)
                    add(dx, (w.y0 + ty * g->dilation[0]) * g->in_w + w.x0 +
                                tx * g->dilation[1], share);
        }
}

dfg_status dfg_cpu_pool_grad(const dfg_kernel_args *args)
{
    int is_max = args->op == DFG_OP_MAX_POOL_GRAD, dy_at = is_max ? 1 : 0;
    const dfg_type *dx_type = &args->out_types[0];
    const dfg_type *dy_type = &args->in_types[dy_at];
    dfg_pool_geometry g;
    dfg_status st = dfg_pool_geometry_make(dfg_op_get(args->op)->name,
                                           args->attrs, dx_type, dy_type, &g);
    if (st != DFG_OK)
        return st;
    int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
    memset(args->out[0], 0, (size_t)dfg_type_bytes(dx_type));
#pragma omp parallel for if (g.planes * out_plane * g.kernel[0] * \
                             g.kernel[1] >= DFG_CPU_PARALLEL_MIN_ELEMENTS)
    for (int64_t p = 0; p < g.planes; p++) {
        const plane dy = {(void *)args->in[dy_at], dy_type->dtype,
                          p * out_plane};
        const plane dx = {args->out[0], dx_type->dtype, p * in_plane};
        if (is_max) {
            const plane x = {(void *)args->in[0], args->in_types[0].dtype,
                             p * in_plane};
            max_plane(&g, &x, &dy, &dx);
        } else {
            average_plane(&g, &dy, &dx);
        }
    }
    return DFG_OK;
}
