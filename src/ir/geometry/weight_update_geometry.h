/* The slices of a weight gradient fused with its optimizer update
 * (conv2d_weight_*_update, ops.def): shared by the op's workspace rule
 * and its kernels.
 *
 * The gradient dw [M, k] of a conv with one group is computed a slice of
 * output channels (rows of dw) at a time into the step's workspace, and
 * each slice is applied by the update at once. A slice holds at most
 * DFG_WEIGHT_SLICE_BYTES of gradient, a multiple of 8 rows (sgemm's
 * register blocks) unless all M rows fit; a conv of several groups is
 * one slice. A slice that must make its chunks' im2col again (below)
 * takes at least DFG_WEIGHT_SLICE_ROWS_REMAKING_COLUMNS rows, so that the
 * copies stay a small part of the products (1/256 of their FLOPs), or as
 * many as DFG_WEIGHT_SLICE_MOST_BYTES_REMAKING_COLUMNS hold where that is
 * fewer (at most 1/128 then): resnet18's layer4 at 224x224 is 8 slices
 * of 1.125 MiB, not 22 of 0.5 nor 4 of 2.25. Its update's workspace is
 * on the step where a training step at a third of its arena peaks, and
 * the 1.2 MB less is what lets that budget keep layer3.0's first conv
 * output (3.7 GFLOP) from the forward: +29.95% FLOPs instead of +31.0%
 * (docs/training.md). sgemm's bits depend on a product's rows (OpenBLAS's
 * edge kernels), so conv2d_grad_weight makes its products in the same
 * slices, and over the same column chunks (its full chunk in a training
 * step, backward_geometry.h): every element of dw is the same sum either
 * way, and the fused step writes the weights the unfused one does.
 *
 * Small images make narrow chunks (resnet18's layer4 at 32x32: one
 * output pixel an image, chunks of 4 columns), whose im2col every slice
 * would make again. When the whole batch's im2col columns [k, N pixels]
 * fit DFG_CONV_IM2COL_BUDGET_BYTES and they, the slice's dy columns
 * [rows, N pixels] and the slice stay below the gradient's bytes, they
 * are made once and each chunk's product reads its block of both in
 * place. Else the slice walks the chunks as conv2d_grad_weight does, in
 * no more workspace than that op's. So a fused op's workspace never
 * exceeds the gradient it replaces and the pair's workspace. The
 * workspace is the slice, padded to 256 bytes, then those columns (none
 * for a direct conv). */
#ifndef DFG_WEIGHT_UPDATE_GEOMETRY_H
#define DFG_WEIGHT_UPDATE_GEOMETRY_H

#include "ir/geometry/conv_geometry.h"

#define DFG_WEIGHT_SLICE_BYTES ((int64_t)512 << 10)
#define DFG_WEIGHT_SLICE_ROWS_REMAKING_COLUMNS 128
#define DFG_WEIGHT_SLICE_MOST_BYTES_REMAKING_COLUMNS ((int64_t)5 << 18)

/* Output channels per slice (1 to M) when dw's elements take
 * element_bytes each. */
int64_t dfg_weight_slice_rows(const dfg_conv_geometry *g,
                              int64_t element_bytes);

/* Bytes of the slice's gradient, aligned up to 256. */
int64_t dfg_weight_slice_bytes(const dfg_conv_geometry *g,
                               int64_t element_bytes);

/* 1 if the batch's im2col columns are made once (above). */
int dfg_weight_update_whole_columns(const dfg_conv_geometry *g,
                                    int64_t element_bytes);

/* The whole workspace: the slice, then its columns. */
int64_t dfg_weight_update_workspace_bytes(const dfg_conv_geometry *g,
                                          int64_t element_bytes);

#endif
