/* A conv's weight gradient, or a slice of its output channels
 * (runtime/cpu/conv2d_grad.c): conv2d_grad_weight computes all of them,
 * the fused weight updates (weight_grad_update.c) one slice at a time. */
#ifndef DFG_CPU_CONV_GRAD_ROWS_H
#define DFG_CPU_CONV_GRAD_ROWS_H

#include "conv_geometry.h"
#include "dfg/status.h"

/* dw[rows, k] = the gradient of filters [m0, m0 + rows) of the forward
 * conv `whole` (one group, or all filters of every group), from dy and x
 * (both of dtype), over column chunks of `chunk` columns (the workspace
 * holds (rows + k) * chunk floats; none for a direct conv), dw of
 * dw_dtype, one product per slice of `slice` rows per chunk. sgemm's
 * results depend on the product's rows (OpenBLAS's edge kernels), so a
 * whole gradient is computed in the slices of a fused update
 * (weight_update_geometry.h): each element is the same sum either way. */
dfg_status dfg_cpu_conv_grad_weight_rows(const dfg_conv_geometry *whole,
                                         int64_t m0, int64_t rows,
                                         int64_t slice, const void *dy_data,
                                         const void *x_data, dfg_dtype dtype,
                                         float *workspace, int64_t chunk,
                                         void *dw_data, dfg_dtype dw_dtype);

#endif
