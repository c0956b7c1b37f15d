/* Pooling-window index arithmetic, usable from C and CUDA
 * (DFG_HOST_DEVICE).
 *
 * Along one axis, output index o reads the input positions
 * start + t * dilation for taps t in [0, kernel), start = o * stride -
 * pad_lo. Positions outside [0, size) are padding: max_pool ignores them,
 * average_pool counts them in the divisor only with count_include_pad, and
 * then only those inside [-pad_lo, size + pad_hi) — a window that ceil_mode
 * lets run past the high pad does not count its overhang, as in ONNX and
 * PyTorch. */
#ifndef DFG_MATH_POOL_WINDOW_H
#define DFG_MATH_POOL_WINDOW_H

#include <stdint.h>
#include "math/host_device.h"
#include "math/strided_range.h"

/* A 2-D pooling of [N, C, H, W] planes into [N, C, out_h, out_w]: the
 * sizes and the window attributes (dfg_pool_geometry_make fills it). */
typedef struct dfg_pool_geometry {
    int64_t planes;                 /* N * C */
    int64_t in_h, in_w, out_h, out_w;
    int64_t kernel[2], stride[2], dilation[2]; /* height, width */
    int64_t pad_lo[2], pad_hi[2];
    int count_include_pad;
} dfg_pool_geometry;

/* First input position of output index o's window (may be negative). */
DFG_HOST_DEVICE static inline int64_t dfg_pool_window_start(int64_t o,
                                                            int64_t stride,
                                                            int64_t pad_lo)
{
    return o * stride - pad_lo;
}

/* The taps [*first, *end) of a window starting at start that read the
 * input (0 <= position < size). */
DFG_HOST_DEVICE static inline void dfg_pool_window_taps(int64_t start,
                                                        int64_t kernel,
                                                        int64_t dilation,
                                                        int64_t size,
                                                        int64_t *first,
                                                        int64_t *end)
{
    dfg_strided_range(start, kernel, dilation, 0, size, first, end);
}

/* Number of taps average_pool divides by along one axis. */
DFG_HOST_DEVICE static inline int64_t dfg_pool_window_divisor(
    int64_t start, int64_t kernel, int64_t dilation, int64_t size,
    int64_t pad_lo, int64_t pad_hi, int count_include_pad)
{
    int64_t first, end;
    if (count_include_pad)
        dfg_strided_range(start, kernel, dilation, -pad_lo, size + pad_hi,
                          &first, &end);
    else
        dfg_pool_window_taps(start, kernel, dilation, size, &first, &end);
    return end - first;
}

#endif
