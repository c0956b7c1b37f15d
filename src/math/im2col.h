/* im2col index arithmetic, usable from C and CUDA (DFG_HOST_DEVICE).
 *
 * The im2col matrix of one image and one group has k = C/group * kh * kw
 * rows, ordered (channel, kernel row, kernel column) as the weights
 * [M, C/group, kh, kw] are, and one column per output pixel (oy, ox) in
 * row-major order, so that weights[M/group, k] x im2col[k, pixels] is the
 * group's output. An entry whose input position falls into the padding
 * is 0. */
#ifndef DFG_MATH_IM2COL_H
#define DFG_MATH_IM2COL_H

#include <stdint.h>
#include "math/host_device.h"
#include "math/index_split.h"

/* The sizes one im2col matrix depends on (one image, one group). */
typedef struct dfg_im2col_dims {
    int64_t in_h, in_w;
    int64_t kernel_h, kernel_w;
    int64_t out_h, out_w;
    int64_t stride_h, stride_w;
    int64_t dilation_h, dilation_w;
    int64_t pad_top, pad_left;
} dfg_im2col_dims;

/* The input coordinate read by output coordinate out through kernel tap
 * tap along one axis; may lie in the padding (< 0 or >= the input size). */
DFG_HOST_DEVICE static inline int64_t dfg_im2col_coord(int64_t out,
                                                       int64_t tap,
                                                       int64_t stride,
                                                       int64_t pad,
                                                       int64_t dilation)
{
    return out * stride - pad + tap * dilation;
}

/* Splits an im2col row into its channel (within the group) and kernel
 * taps (narrow: see dfg_index_split). */
DFG_HOST_DEVICE static inline void dfg_im2col_row_split(
    const dfg_im2col_dims *d, int64_t row, int narrow, int64_t *channel,
    int64_t *tap_y, int64_t *tap_x)
{
    *tap_x = dfg_index_split(&row, d->kernel_w, narrow);
    *tap_y = dfg_index_split(&row, d->kernel_h, narrow);
    *channel = row;
}

DFG_HOST_DEVICE static inline void dfg_im2col_row(const dfg_im2col_dims *d,
                                                  int64_t row,
                                                  int64_t *channel,
                                                  int64_t *tap_y,
                                                  int64_t *tap_x)
{
    dfg_im2col_row_split(d, row, 0, channel, tap_y, tap_x);
}

/* Offset, from the group's first input channel of the image, of the input
 * element at im2col (row, pixel), or -1 where it is padding. A CUDA kernel
 * fills a chunk with one thread per entry around this. */
DFG_HOST_DEVICE static inline int64_t dfg_im2col_source(
    const dfg_im2col_dims *d, int64_t row, int64_t pixel, int narrow)
{
    int64_t channel, tap_y, tap_x;
    dfg_im2col_row_split(d, row, narrow, &channel, &tap_y, &tap_x);
    int64_t ox = dfg_index_split(&pixel, d->out_w, narrow), oy = pixel;
    int64_t iy = dfg_im2col_coord(oy, tap_y, d->stride_h, d->pad_top,
                                  d->dilation_h);
    int64_t ix = dfg_im2col_coord(ox, tap_x, d->stride_w, d->pad_left,
                                  d->dilation_w);
    if (iy < 0 || iy >= d->in_h || ix < 0 || ix >= d->in_w)
        return -1;
    return (channel * d->in_h + iy) * d->in_w + ix;
}

#endif
