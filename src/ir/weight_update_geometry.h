/* The slices of a weight gradient fused with its optimizer update
 * (conv2d_weight_*_update, ops.def): shared by the op's workspace rule
 * and its kernels.
 *
 * The gradient dw [M, k] of a conv with one group is computed a slice of
 * output channels (rows of dw) at a time into the step's workspace, and
 * each slice is applied by the update at once. A slice holds at most
 * DFG_WEIGHT_SLICE_BYTES of gradient, a multiple of 8 rows (sgemm's
 * register blocks) unless all M rows fit; a conv of several groups is
 * one slice. sgemm's bits depend on a product's rows (OpenBLAS's edge
 * kernels), so conv2d_grad_weight makes its products in the same slices,
 * and over the same column chunks (its full chunk in a training step,
 * backward_geometry.h): every element of dw is the same sum either way,
 * and the fused step writes the weights the unfused one does. The
 * workspace is the slice, padded to 256 bytes, then the chunk buffers of
 * a slice: dy's columns [rows, chunk] and the im2col columns [k, chunk]
 * (none for a direct conv). */
#ifndef DFG_WEIGHT_UPDATE_GEOMETRY_H
#define DFG_WEIGHT_UPDATE_GEOMETRY_H

#include "conv_geometry.h"

#define DFG_WEIGHT_SLICE_BYTES ((int64_t)512 << 10)

/* Output channels per slice (1 to M) when dw's elements take
 * element_bytes each. */
int64_t dfg_weight_slice_rows(const dfg_conv_geometry *g,
                              int64_t element_bytes);

/* Bytes of the slice's gradient, aligned up to 256. */
int64_t dfg_weight_slice_bytes(const dfg_conv_geometry *g,
                               int64_t element_bytes);

/* The whole workspace: the slice, then its column chunks. */
int64_t dfg_weight_update_workspace_bytes(const dfg_conv_geometry *g,
                                          int64_t element_bytes);

#endif
