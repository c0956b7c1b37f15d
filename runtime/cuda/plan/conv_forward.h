/* conv2d on the CUDA backend as one loop of primitive calls (conv_ops.h:
 * the bias broadcast, an im2col of several images and groups at once, a
 * strided-batched product), written once in plain C.
 *
 * Batching: the step's im2col scratch (the op's planned workspace, bounded
 * by DFG_CONV_IM2COL_BUDGET_BYTES, conv_geometry.h) holds the chunks of as
 * many (image, group) pairs as fit, and one strided-batched product covers
 * them all, instead of one small product per image, group and chunk:
 *   - every group of `images` whole images when they fit: one product per
 *     group, batched over the images (group 1: one product per batch);
 *   - else `groups` groups of one image: one product batched over them;
 *   - else a chunk of one group's pixels: one plain product.
 * A direct conv (1x1, stride 1, no padding) needs no im2col: one product
 * per group, batched over the images, straight on the input. */
#ifndef DFG_CUDA_CONV_FORWARD_H
#define DFG_CUDA_CONV_FORWARD_H

#include "runtime/cuda/kernels/conv_ops.h"

/* The batches of conv g with an im2col scratch of area_bytes holding
 * elements of element_size bytes (at least one column of g->k). */
dfg_cuda_conv_batching dfg_cuda_conv_batching_make(const dfg_conv_geometry *g,
                                                   int64_t area_bytes,
                                                   int64_t element_size);

/* Runs plan (DFG_CUDA_CONV2D) through ops; the first error stops it. */
dfg_status dfg_cuda_conv_forward_run(const dfg_cuda_step_plan *plan,
                                     const dfg_cuda_conv_ops *ops);

#endif
