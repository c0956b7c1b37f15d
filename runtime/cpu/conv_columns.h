/* The column matrices of the backward convs (backward_geometry.h): a
 * chunk of columns [c0, c0 + cols) of the flattened (image, output pixel)
 * axis, per group, possibly spanning several images. f32 only (training
 * computes in f32).
 *
 * The im2col walk goes by runs of an output row, not by element: for a
 * kernel tap, which output columns of a row read inside the input depends
 * on the tap only, so a run is zeros, a strided stretch of the input row,
 * zeros; col2im adds the same stretch back. No division per element. */
#ifndef DFG_CPU_CONV_COLUMNS_H
#define DFG_CPU_CONV_COLUMNS_H

#include <stdint.h>
#include "conv_geometry.h"

/* dst[Mg, cols] = the chunk's columns of group grp's channels of
 * dy [N, M, pixels]. */
void dfg_cpu_conv_gather_dy(const dfg_conv_geometry *g, const float *dy,
                            int64_t grp, int64_t c0, int64_t cols, float *dst);

/* col[k, cols] = the chunk's im2col columns of group grp of x [N, C, H, W]
 * (0 where a tap reads padding). */
void dfg_cpu_conv_im2col(const dfg_conv_geometry *g, const float *x,
                         int64_t grp, int64_t c0, int64_t cols, float *col);

/* dx [N, C, H, W] += each entry of col[k, cols] at the input element its
 * im2col entry was read from (entries on padding are dropped): the
 * adjoint of dfg_cpu_conv_im2col. */
void dfg_cpu_conv_col2im_add(const dfg_conv_geometry *g, const float *col,
                             int64_t grp, int64_t c0, int64_t cols,
                             float *dx);

#endif
