/* The column matrices of the backward convs (backward_geometry.h): a
 * chunk of columns [c0, c0 + cols) of the flattened (image, output pixel)
 * axis, per group, possibly spanning several images. The columns are
 * f32; the tensors they come from or go to are f32, or bf16/f16 under
 * mixed precision (widened on reading; col2im adds in f32 and rounds each
 * sum to the narrow dtype).
 *
 * The im2col walk goes by runs of an output row, not by element: for a
 * kernel tap, which output columns of a row read inside the input depends
 * on the tap only, so a run is zeros, a strided stretch of the input row,
 * zeros; col2im adds the same stretch back. No division per element. */
#ifndef DFG_CPU_CONV_COLUMNS_H
#define DFG_CPU_CONV_COLUMNS_H

#include <stdint.h>
#include "ir/geometry/conv_geometry.h"
#include "dfg/dtype.h"

/* dst[Mg, cols] (rows ld floats apart, ld >= cols) = the chunk's columns
 * of group grp's channels of dy [N, M, pixels]. */
void dfg_cpu_conv_gather_dy(const dfg_conv_geometry *g, const void *dy,
                            dfg_dtype dtype, int64_t grp, int64_t c0,
                            int64_t cols, float *dst, int64_t ld);

/* col[k, cols] = the chunk's im2col columns of group grp of x [N, C, H, W]
 * (0 where a tap reads padding). */
void dfg_cpu_conv_im2col(const dfg_conv_geometry *g, const void *x,
                         dfg_dtype dtype, int64_t grp, int64_t c0,
                         int64_t cols, float *col);

/* dx [N, C, H, W] += each entry of col[k, cols] at the input element its
 * im2col entry was read from (entries on padding are dropped): the
 * adjoint of dfg_cpu_conv_im2col. */
void dfg_cpu_conv_col2im_add(const dfg_conv_geometry *g, const float *col,
                             int64_t grp, int64_t c0, int64_t cols, void *dx,
                             dfg_dtype dtype);

#endif
