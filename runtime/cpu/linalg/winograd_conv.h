/* A 3x3 conv2d as Winograd F(4x4, 3x3) (winograd_transforms.h): the input
 * tiles transformed by dfg, their 36 products with the transformed
 * filters run as one oneDNN grouped 1x1 convolution (a group per tile
 * position, the chunk's tiles as its pixels, `jit_1x1:avx2`, weights
 * reordered once), and the output tiles transformed back by dfg with the
 * bias and the fused post-ops, straight into y. oneDNN 2.6 has no f32
 * Winograd convolution on AVX2, and its direct `jit:avx2` kernel makes
 * 2.25 multiplies per output for each Winograd one here (4 for whole
 * tiles, less where the tiles overhang the output).
 *
 * Which convs (dfg_winograd_takes, the same at compile time and at
 * session creation): f32, 3x3, stride 1, dilation 1, one group, x, y and
 * the residual blocked nChw8c (the layout pass's choice on AVX2; other
 * CPUs keep the direct kernel), channels in whole blocks, and the shapes
 * where it measured faster than the direct kernel (winograd_conv.c). A
 * session then grants the transformed filters of all such convs a memory
 * allowance together (winograd_choice.h).
 *
 * Scratch: V and M lie in the step's planned
 * workspace, sized by dfg_winograd_workspace_bytes; the tiles go through
 * in chunks, so that V and M stay under DFG_WINOGRAD_CHUNK_BYTES whatever
 * the batch. The transformed filters are shared by the sessions of a
 * program like every reordered weight (dnnl_weights.h).
 *
 * Lifetime: made by dfg_winograd_conv_create with the session's
 * allocator, points into the step's regions, freed by
 * dfg_winograd_conv_destroy. */
#ifndef DFG_CPU_WINOGRAD_CONV_H
#define DFG_CPU_WINOGRAD_CONV_H

#include <dnnl.h>
#include "dfg/allocator.h"
#include "runtime/cpu/kernels.h"

/* Bytes of V and M together a chunk of tiles may take: the im2col
 * chunks' budget (conv_geometry.h). resnet50's arena stays 6.1 MiB with
 * it; 2 MiB made it 6.3 MiB and 4 MiB 8.0 MiB, for no speed measured. */
#define DFG_WINOGRAD_CHUNK_BYTES ((int64_t)1 << 20)

typedef struct dfg_winograd_conv dfg_winograd_conv;

/* 1 if the conv2d of these operands runs as Winograd. */
int dfg_winograd_takes(const dfg_attrs *attrs, const dfg_type *in,
                       int32_t n_in, const dfg_type *out);

/* Bytes of workspace it needs on engine, or 0 if oneDNN has no product
 * for it. */
int64_t dfg_winograd_workspace_bytes(dnnl_engine_t engine,
                                     const dfg_attrs *attrs,
                                     const dfg_type *in, int32_t n_in,
                                     const dfg_type *out);

/* Prepares step (a conv2d with constant weights); *out is NULL, with
 * DFG_OK, when it is not one for Winograd or its workspace is too small. */
dfg_status dfg_winograd_conv_create(dnnl_engine_t engine,
                                    const dfg_kernel_args *step,
                                    const dfg_allocator *allocator,
                                    dfg_winograd_conv **out);
/* Runs on OpenMP's threads, as many as when it was created at most. */
dfg_status dfg_winograd_conv_run(const dfg_winograd_conv *conv);
/* "winograd_4x4 + " the product's oneDNN implementation, for reports. */
const char *dfg_winograd_conv_impl(const dfg_winograd_conv *conv);
void dfg_winograd_conv_drop_plain(const dfg_winograd_conv *conv);
void dfg_winograd_conv_destroy(dfg_winograd_conv *conv,
                               const dfg_allocator *allocator);

#endif
