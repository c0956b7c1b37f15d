/* A 3x3 conv2d over a small image as a 1x1 convolution over its columns:
 * dfg copies each image's 3x3 neighbourhoods (im2col, in x's blocked
 * layout, nChw8c or nChw16c: the channels of one block under one tap a
 * block) into the step's workspace, and oneDNN's 1x1 convolution
 * (`jit_1x1:avx2`, `jit_1x1:avx512_core`) multiplies them by the
 * filters, reordered once into [cout, 9 * cin] as the columns lie, with
 * the bias and the fused post-ops, straight into the image of y.
 * On images of 8x8 outputs and fewer (and, by 8, of 14x14 with 256 input
 * channels) oneDNN 2.6's direct kernel keeps its vector registers busy
 * over too few pixels; the 1x1 kernel's long input channel loop runs 5
 * to 30% faster there (columns_conv.c has the measurements).
 *
 * Which convs (dfg_columns_takes, the same at compile time and at session
 * creation, from the operands alone): f32, 3x3, dilation 1, one group,
 * any stride and padding, x, y and the residual blocked alike, nChw8c or
 * nChw16c (the layout pass's choice on AVX2 and on AVX-512), channels in
 * whole blocks, and the shapes where it measured faster on that block.
 * These never meet Winograd's (25x25 outputs and more, winograd_conv.h).
 * The reordered filters hold 9 values per filter, as the direct kernel's
 * do: no memory beyond the workspace.
 *
 * Scratch: one image's columns and the product's scratchpad lie in the
 * step's planned workspace (dfg_columns_workspace_bytes); the images of
 * a batch go through one after the other.
 *
 * Lifetime: made by dfg_columns_conv_create with the session's
 * allocator, points into the step's regions, freed by
 * dfg_columns_conv_destroy. */
#ifndef DFG_CPU_COLUMNS_CONV_H
#define DFG_CPU_COLUMNS_CONV_H

#include <dnnl.h>
#include "dfg/allocator.h"
#include "runtime/cpu/kernels.h"

typedef struct dfg_columns_conv dfg_columns_conv;

/* 1 if the conv2d of these operands runs over its columns. */
int dfg_columns_takes(const dfg_attrs *attrs, const dfg_type *in,
                      int32_t n_in, const dfg_type *out);

/* Bytes of workspace it needs on engine, or 0 if oneDNN has no 1x1
 * product for it. */
int64_t dfg_columns_workspace_bytes(dnnl_engine_t engine,
                                    const dfg_attrs *attrs,
                                    const dfg_type *in, int32_t n_in,
                                    const dfg_type *out);

/* Prepares step (a conv2d with constant weights); *out is NULL, with
 * DFG_OK, when it is not one for the columns or its workspace is too
 * small. */
dfg_status dfg_columns_conv_create(dnnl_engine_t engine,
                                   const dfg_kernel_args *step,
                                   const dfg_allocator *allocator,
                                   dfg_columns_conv **out);
dfg_status dfg_columns_conv_run(const dfg_columns_conv *conv,
                                dnnl_stream_t stream);
/* "columns + " the product's oneDNN implementation, for reports. */
const char *dfg_columns_conv_impl(const dfg_columns_conv *conv);
void dfg_columns_conv_drop_plain(const dfg_columns_conv *conv);
void dfg_columns_conv_destroy(dfg_columns_conv *conv,
                              const dfg_allocator *allocator);

#endif
