/* A conv2d step's fused post-ops on the reference kernels (conv2d.c,
 * conv2d_depthwise.c): the residual of a sum post-op is loaded into the
 * output first and the conv accumulates onto it (the output may be the
 * residual's own bytes, planned in place), then the other post-ops run
 * over the output (math/post_ops.h). Post-ops need f32 (the shape rule). */
#ifndef DFG_CPU_CONV_POST_OPS_H
#define DFG_CPU_CONV_POST_OPS_H

#include "runtime/cpu/kernels.h"

/* The residual (input 3), or NULL when the step has no sum post-op. */
const void *dfg_cpu_conv_residual(const dfg_kernel_args *args);
/* Copies the residual into out[0] unless it lies there already. */
void dfg_cpu_conv_residual_load(const dfg_kernel_args *args);
/* The post-ops other than the sum, over the f32 output out[0]. */
void dfg_cpu_conv_post_ops_apply(const dfg_kernel_args *args);

#endif
