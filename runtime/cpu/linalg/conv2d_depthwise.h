/* Depthwise conv2d on the CPU: a direct stencil, a workspace only when
 * written over its input (see
 * src/ir/geometry/conv_geometry.h for when a conv is depthwise). */
#ifndef DFG_CPU_CONV2D_DEPTHWISE_H
#define DFG_CPU_CONV2D_DEPTHWISE_H

#include "ir/geometry/conv_geometry.h"

/* y = conv2d(x, w) + bias for a geometry with g->depthwise set; x, y and
 * bias (NULL for none) in dtype, w in w_dtype, any float dtype; with
 * accumulate (f32 only), y += that instead. y may be x itself where
 * dfg_conv_may_write_over_x holds (then not accumulate), with workspace
 * of dfg_conv_in_place_workspace_bytes(g); else workspace is unused. All
 * pointers are borrowed for the call. */
void dfg_cpu_conv2d_depthwise(const dfg_conv_geometry *g, dfg_dtype dtype,
                              const void *x, dfg_dtype w_dtype, const void *w,
                              const void *bias, int accumulate, void *y,
                              float *workspace);

#endif
