/* ONNX Resize's index arithmetic along one axis, written once for the CPU
 * kernel and a CUDA kernel: where output coordinate x lands in the input
 * (the coordinate transformation), and the taps (input index, weight)
 * that sample there (nearest, linear or cubic).
 *
 * scale is output / input as the transform sees it: ONNX's scales input
 * when the model gives scales (then in_dim * scale need not be an
 * integer), the ratio of the sizes otherwise. Like ONNX's reference, the
 * resized length the transforms use is in_dim * scale, not the rounded
 * output size. */
#ifndef DFG_MATH_RESIZE_COORDS_H
#define DFG_MATH_RESIZE_COORDS_H

#include <math.h>
#include <stdint.h>

#include "dfg/attrs.h"
#include "math/host_device.h"

#define DFG_RESIZE_MAX_TAPS 4

/* The input elements one output coordinate reads along one axis; weights
 * sum to 1. */
typedef struct dfg_resize_taps {
    int32_t n;
    int64_t index[DFG_RESIZE_MAX_TAPS];
    float weight[DFG_RESIZE_MAX_TAPS];
} dfg_resize_taps;

/* The input coordinate of output coordinate x (a dfg_resize_coordinates
 * value; anything else is taken as half_pixel). */
static inline DFG_HOST_DEVICE double dfg_resize_source(int32_t coordinates,
                                                       int64_t x, double scale,
                                                       int64_t in_dim)
{
    double xr = (double)x, resized = scale * (double)in_dim;
    switch (coordinates) {
    case DFG_RESIZE_PYTORCH_HALF_PIXEL:
        return resized > 1.0 ? (xr + 0.5) / scale - 0.5 : 0.0;
    case DFG_RESIZE_ALIGN_CORNERS:
        return resized == 1.0 ? 0.0
                              : xr * (double)(in_dim - 1) / (resized - 1.0);
    case DFG_RESIZE_ASYMMETRIC:
        return xr / scale;
    case DFG_RESIZE_TF_HALF_PIXEL_FOR_NN:
        return (xr + 0.5) / scale;
    default:
        return (xr + 0.5) / scale - 0.5;
    }
}

static inline DFG_HOST_DEVICE int64_t dfg_resize_clamp(int64_t i, int64_t dim)
{
    return i < 0 ? 0 : i >= dim ? dim - 1 : i;
}

/* The input index nearest to source coordinate x (a dfg_resize_nearest
 * value), clamped into [0, in_dim). A tie (a fraction of exactly 0.5) goes
 * down with round_prefer_floor, up with round_prefer_ceil. */
static inline DFG_HOST_DEVICE int64_t dfg_resize_nearest_index(int32_t rounding,
                                                               double x,
                                                               int64_t in_dim)
{
    double below = floor(x), fraction = x - below;
    double chosen;
    switch (rounding) {
    case DFG_RESIZE_FLOOR: chosen = below; break;
    case DFG_RESIZE_CEIL: chosen = ceil(x); break;
    case DFG_RESIZE_ROUND_PREFER_CEIL:
        chosen = fraction >= 0.5 ? below + 1.0 : below;
        break;
    default: chosen = fraction > 0.5 ? below + 1.0 : below; break;
    }
    /* Far outside the input (huge scales) the double may exceed int64. */
    if (chosen < 0.0)
        return 0;
    if (chosen >= (double)in_dim)
        return in_dim - 1;
    return (int64_t)chosen;
}

/* Keys' cubic convolution weights of the taps at floor(x) - 1 .. floor(x)
 * + 2 for fraction t in [0, 1) and coefficient a (ONNX: -0.75, PyTorch
 * -0.75, TensorFlow -0.5). */
static inline DFG_HOST_DEVICE void dfg_resize_cubic_weights(double t, double a,
                                                            double w[4])
{
    double d0 = t + 1.0, d1 = t, d2 = 1.0 - t, d3 = 2.0 - t;
    w[0] = ((a * d0 - 5.0 * a) * d0 + 8.0 * a) * d0 - 4.0 * a;
    w[1] = ((a + 2.0) * d1 - (a + 3.0)) * d1 * d1 + 1.0;
    w[2] = ((a + 2.0) * d2 - (a + 3.0)) * d2 * d2 + 1.0;
    w[3] = ((a * d3 - 5.0 * a) * d3 + 8.0 * a) * d3 - 4.0 * a;
}

/* The taps of output coordinate x along an axis of in_dim (> 0) input
 * elements. Taps outside the input read the edge element, or with
 * exclude_outside get weight 0 and the others are renormalised. Taps of
 * weight 0 are dropped, so an axis that is not resized has one tap. */
static inline DFG_HOST_DEVICE void dfg_resize_axis_taps(
    const dfg_attrs *a, int64_t x, double scale, int64_t in_dim,
    dfg_resize_taps *taps)
{
    double source = dfg_resize_source(a->coordinates, x, scale, in_dim);
    taps->n = 0;
    if (a->resize_mode != DFG_RESIZE_LINEAR &&
        a->resize_mode != DFG_RESIZE_CUBIC) {
        taps->index[0] = dfg_resize_nearest_index(a->nearest_rounding, source,
                                                  in_dim);
        taps->weight[0] = 1.0f;
        taps->n = 1;
        return;
    }
    /* Clamp far-away coordinates so the index arithmetic stays in range;
     * every tap there reads (or excludes) the edge anyway. */
    double limit = (double)in_dim + 4.0;
    source = source < -limit ? -limit : source > limit ? limit : source;
    double below = floor(source), t = source - below;
    double w[DFG_RESIZE_MAX_TAPS];
    int64_t first;
    int32_t n;
    if (a->resize_mode == DFG_RESIZE_LINEAR) {
        w[0] = 1.0 - t;
        w[1] = t;
        first = (int64_t)below;
        n = 2;
    } else {
        dfg_resize_cubic_weights(t, (double)a->cubic_coeff_a, w);
        first = (int64_t)below - 1;
        n = 4;
    }
    double total = 0.0;
    for (int32_t i = 0; i < n; i++) {
        int64_t index = first + i;
        if (a->exclude_outside && (index < 0 || index >= in_dim))
            w[i] = 0.0;
        total += w[i];
    }
    if (total == 0.0)
        total = 1.0;
    for (int32_t i = 0; i < n; i++) {
        if (w[i] == 0.0)
            continue;
        taps->index[taps->n] = dfg_resize_clamp(first + i, in_dim);
        taps->weight[taps->n] = (float)(w[i] / total);
        taps->n++;
    }
}

#endif
