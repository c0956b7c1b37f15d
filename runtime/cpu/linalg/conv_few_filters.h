/* conv2d with few filters (at most DFG_CONV_FEW_FILTERS output channels,
 * as the last conv of an image-to-image network: 3 colours, 1 depth) on
 * the CPU: a direct stencil over plain f32 tensors, every filter of an
 * output row accumulated from one pass over the input rows it reads, in
 * vector loops. oneDNN's kernels pad the output channels to a block of
 * 8 or 16 and so compute 4 to 16 times the filters there are; this one
 * computes each once and needs no workspace. */
#ifndef DFG_CPU_CONV_FEW_FILTERS_H
#define DFG_CPU_CONV_FEW_FILTERS_H

#include "ir/geometry/conv_geometry.h"
#include "runtime/cpu/kernels.h"

/* The most output channels it takes, and the widest kernel. */
#define DFG_CONV_FEW_FILTERS 4
#define DFG_CONV_FEW_FILTERS_WIDTH 32

/* 1 if it runs a conv2d of these operands (in[0..n_in): x, w, an
 * optional bias and residual, absent ones of rank -1; out[0] y): x, w, y
 * (and bias, residual) plain f32, one group, at most DFG_CONV_FEW_FILTERS
 * filters at most DFG_CONV_FEW_FILTERS_WIDTH wide and larger than 1x1
 * (a 1x1 conv is a product oneDNN runs as fast), stride 1 along the
 * width, no dilation. */
int dfg_cpu_conv_few_filters(const dfg_attrs *attrs, const dfg_type *in,
                             int32_t n_in, const dfg_type *out,
                             int32_t n_out);

/* Runs conv2d step args of geometry g (dfg_cpu_conv_few_filters holds
 * for its operands, y not over x): bias, residual (a sum post-op) and
 * the other post-ops as conv2d's; the workspace is not read. */
void dfg_cpu_conv2d_few_filters(const dfg_conv_geometry *g,
                                const dfg_kernel_args *args);

#endif
