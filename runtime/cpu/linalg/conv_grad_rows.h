/* A conv's weight gradient, or a slice of its output channels
 * (runtime/cpu/linalg/conv2d_grad.c): conv2d_grad_weight computes all of them,
 * the fused weight updates (weight_grad_update.c) one slice at a time. */
#ifndef DFG_CPU_CONV_GRAD_ROWS_H
#define DFG_CPU_CONV_GRAD_ROWS_H

#include "ir/geometry/conv_geometry.h"
#include "dfg/status.h"

/* dw[rows, k] = the gradient of filters [m0, m0 + rows) of the forward
 * conv `whole` (one group, or all filters of every group), from dy and x
 * (both of dtype), over column chunks of `chunk` columns (the workspace
 * holds the im2col columns [k, chunk] then dy's [rows, chunk]; none for
 * a direct conv), dw of dw_dtype, one product per slice of `slice` rows
 * per chunk. columns_ready: the batch's columns are one chunk, already
 * in the workspace from a call on the same x (no im2col again). sgemm's
 * results depend on the product's rows (OpenBLAS's edge kernels), so a
 * whole gradient is computed in the slices of a fused update
 * (weight_update_geometry.h): each element is the same sum either way. */
dfg_status dfg_cpu_conv_grad_weight_rows(const dfg_conv_geometry *whole,
                                         int64_t m0, int64_t rows,
                                         int64_t slice, const void *dy_data,
                                         const void *x_data, dfg_dtype dtype,
                                         float *workspace, int64_t chunk,
                                         int columns_ready, void *dw_data,
                                         dfg_dtype dw_dtype);

/* The same for one slice of a conv of one group whose batch's columns
 * all fit the workspace (dfg_weight_update_whole_columns): the im2col
 * columns [k, N pixels] (made unless columns_ready), then dy's [rows, N
 * pixels]; the products over chunks of `chunk` columns read their blocks
 * in place, the same products as above. */
dfg_status dfg_cpu_conv_grad_weight_rows_whole(
    const dfg_conv_geometry *whole, int64_t m0, int64_t rows,
    const void *dy_data, const void *x_data, dfg_dtype dtype,
    float *workspace, int64_t chunk, int columns_ready, void *dw_data,
    dfg_dtype dw_dtype);

#endif
