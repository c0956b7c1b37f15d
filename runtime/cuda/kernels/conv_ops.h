/* The primitives the CUDA backend's convolution loops are written in
 * (conv_forward.h, conv_grad.h): each is queued on the device by blas.c
 * (its kernels and cuBLAS) or done on the host by the CPU tests' emulator,
 * so that the loops the device runs are the loops the tests check. ctx is
 * the caller's; pointers are the step's operands and workspace, elements
 * of dtype (the gradients: f32). */
#ifndef DFG_CUDA_CONV_OPS_H
#define DFG_CUDA_CONV_OPS_H

#include "runtime/cuda/plan/step_plan_types.h"

typedef struct dfg_cuda_conv_ops {
    void *ctx;
    dfg_status (*zero)(void *ctx, void *dst, int64_t bytes);
    /* A broadcast (conv2d's bias into y, which the products then add to). */
    dfg_status (*copy)(void *ctx, const dfg_cuda_strided_copy *copy,
                       const void *src, void *dst);
    /* c = alpha op(a) op(b) + beta c (gemm_mapping.h), batched. */
    dfg_status (*product)(void *ctx, const dfg_cuda_row_gemm *row,
                          dfg_dtype dtype, const void *a, const void *b,
                          void *c);
    dfg_status (*im2col)(void *ctx, const dfg_cuda_im2col *chunks,
                         const void *x, void *col);
    dfg_status (*col2im)(void *ctx, const dfg_cuda_col2im *chunk,
                         const float *col, float *dx);
} dfg_cuda_conv_ops;

#endif
