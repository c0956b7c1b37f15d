/* The conv2d gradients on the CUDA backend as one loop of primitive calls
 * (zero a buffer, a row-major f32 product, an im2col or col2im chunk),
 * written once in plain C: the backend runs it with cuBLAS and its
 * kernels (blas.c), the CPU tests with the emulator's host versions, so
 * the loop the device runs is the loop the tests check.
 *   conv2d_grad_input (dy, w) -> dx: per image, group and chunk of output
 *     pixels, col = w^T dy[:, chunk] into the workspace, then col2im adds
 *     it into dx (zeroed first); a direct (1x1) conv is one batched
 *     product per group straight into dx;
 *   conv2d_grad_weight (dy, x) -> dw: dw zeroed, then per image, group and
 *     chunk, im2col of x into the workspace and dw += dy[:, chunk] col^T
 *     (x itself for a direct conv). */
#ifndef DFG_CUDA_CONV_GRAD_H
#define DFG_CUDA_CONV_GRAD_H

#include "step_plan.h"

/* The primitives, each queued (device) or done (host); ctx is the
 * caller's. Pointers are those of the step's operands and workspace. */
typedef struct dfg_cuda_conv_grad_ops {
    void *ctx;
    dfg_status (*zero)(void *ctx, void *dst, int64_t bytes);
    /* c = alpha op(a) op(b) + beta c on f32 operands (gemm_mapping.h). */
    dfg_status (*product)(void *ctx, const dfg_cuda_row_gemm *row,
                          const float *a, const float *b, float *c);
    dfg_status (*im2col)(void *ctx, const dfg_cuda_im2col *chunk,
                         const float *x, float *col);
    dfg_status (*col2im)(void *ctx, const dfg_cuda_col2im *chunk,
                         const float *col, float *dx);
} dfg_cuda_conv_grad_ops;

/* Runs plan (DFG_CUDA_CONV_GRAD_INPUT or _WEIGHT) through ops; the first
 * error stops it. */
dfg_status dfg_cuda_conv_grad_run(const dfg_cuda_step_plan *plan,
                                  const dfg_cuda_conv_grad_ops *ops);

#endif
