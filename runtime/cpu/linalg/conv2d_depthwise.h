/* Depthwise conv2d on the CPU: a direct stencil, no workspace (see
 * src/ir/conv_geometry.h for when a conv is depthwise). */
#ifndef DFG_CPU_CONV2D_DEPTHWISE_H
#define DFG_CPU_CONV2D_DEPTHWISE_H

#include "conv_geometry.h"

/* y = conv2d(x, w) + bias for a geometry with g->depthwise set; x, y and
 * bias (NULL for none) in dtype, w in w_dtype, any float dtype; with
 * accumulate (f32 only), y += that instead. All pointers are borrowed for
 * the call. */
void dfg_cpu_conv2d_depthwise(const dfg_conv_geometry *g, dfg_dtype dtype,
                              const void *x, dfg_dtype w_dtype, const void *w,
                              const void *bias, int accumulate, void *y);

#endif
