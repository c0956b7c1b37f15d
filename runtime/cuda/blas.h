/* matmul, gemm, conv2d and the conv2d gradients (conv_forward.h,
 * conv_grad.h) on cuBLAS
 * (GemmEx and GemmStridedBatchedEx), with the calls mapped by
 * gemm_mapping.h. f32 products compute in f32
 * (no TF32: results must match the CPU within 1e-5); f16 and bf16 products
 * run on tensor cores with f32 accumulation, split-K reductions included.
 * The handle's workspace is the session's, set once when the steps are
 * prepared, or a step's planned one where that is larger (gemm_mapping.h),
 * so that cuBLAS never allocates memory of its own, during a graph
 * capture or not. */
#ifndef DFG_CUDA_BLAS_H
#define DFG_CUDA_BLAS_H

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "runtime/cuda/plan/step_plan.h"

typedef struct dfg_cuda_blas {
    cublasHandle_t handle;
    void *workspace;         /* the workspace the handle has now */
    size_t workspace_bytes;
    int tf32;                /* the step's f32 products in TF32 */
} dfg_cuda_blas;

/* One handle bound to stream, without a workspace until a step sets one. */
dfg_status dfg_cuda_blas_create(dfg_cuda_blas *blas, cudaStream_t stream);
void dfg_cuda_blas_destroy(dfg_cuda_blas *blas);
/* Gives the handle workspace (bytes of it, 256-byte aligned), once per
 * prepared session: a step planned with a larger one sets its own and the
 * next product sets this one back (dfg_cuda_blas_step). */
dfg_status dfg_cuda_blas_set_workspace(dfg_cuda_blas *blas, void *workspace,
                                       size_t bytes);

/* One row-major product (gemm_mapping.h) on operands of dtype, offsets
 * already applied, with the workspace and math the last step set. */
dfg_status dfg_cuda_blas_product(dfg_cuda_blas *blas,
                                 const dfg_cuda_row_gemm *row, dfg_dtype dtype,
                                 const void *a, const void *b, void *c);

/* Queues a matmul, gemm, conv2d or conv2d gradient step (plan->kind says
 * which); for an attention step it sets the step's workspace and math
 * only, for the products its unfused steps queue (backend_steps.c). */
dfg_status dfg_cuda_blas_step(dfg_cuda_blas *blas,
                              const dfg_cuda_step_plan *plan,
                              cudaStream_t stream);

#endif
