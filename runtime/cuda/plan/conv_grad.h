/* The conv2d gradients on the CUDA backend as one loop of primitive calls
 * (conv_ops.h: zero a buffer, a row-major f32 product, an im2col or col2im
 * chunk), written once in plain C.
 *   conv2d_grad_input (dy, w) -> dx: per image, group and chunk of output
 *     pixels, col = w^T dy[:, chunk] into the workspace, then col2im adds
 *     it into dx (zeroed first); a direct (1x1) conv is one batched
 *     product per group straight into dx. Where dx is dy's bytes
 *     (passes/alias.c), each image's dy is first copied to the
 *     workspace's start and read from there;
 *   conv2d_grad_weight (dy, x) -> dw: dw zeroed, then per image, group and
 *     chunk, im2col of x into the workspace and dw += dy[:, chunk] col^T
 *     (x itself for a direct conv). */
#ifndef DFG_CUDA_CONV_GRAD_H
#define DFG_CUDA_CONV_GRAD_H

#include "runtime/cuda/kernels/conv_ops.h"

/* Runs plan (DFG_CUDA_CONV_GRAD_INPUT or _WEIGHT) through ops; the first
 * error stops it. */
dfg_status dfg_cuda_conv_grad_run(const dfg_cuda_step_plan *plan,
                                  const dfg_cuda_conv_ops *ops);

#endif
