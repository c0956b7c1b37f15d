/* The CUDA kernels' launchers, callable from C (backend.c, blas.c): each
 * queues one kernel (two for a sum spread over blocks: its partial sums,
 * then their total) on the stream with the parameters of a step plan
 * passed by value and returns the launch's error (cudaGetLastError). They
 * allocate nothing and never synchronize, so they can be captured into a
 * CUDA graph. Pointers are device pointers, borrowed for the launch. */
#ifndef DFG_CUDA_KERNELS_H
#define DFG_CUDA_KERNELS_H

#include <cuda_runtime_api.h>

#include "runtime/cuda/kernels/batch_norm_train_ops.h"
#include "runtime/cuda/kernels/elementwise_ops.h"
#include "runtime/cuda/kernels/index_ops.h"
#include "runtime/cuda/kernels/layout_ops.h"
#include "runtime/cuda/kernels/reduction_ops.h"
#include "runtime/cuda/kernels/sampling_ops.h"
#include "runtime/cuda/kernels/training_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* elementwise.cu */
cudaError_t dfg_cuda_launch_unary(const dfg_cuda_unary *p, const void *in,
                                  void *out, cudaStream_t stream);
/* A product's epilogue over y in place; bias NULL: none added. Queues
 * nothing when there is nothing to apply. */
cudaError_t dfg_cuda_launch_epilogue(const dfg_cuda_epilogue *p,
                                     const void *bias, void *y,
                                     cudaStream_t stream);
cudaError_t dfg_cuda_launch_binary(const dfg_cuda_binary *p, const void *a,
                                   const void *b, void *out,
                                   cudaStream_t stream);
cudaError_t dfg_cuda_launch_where(const dfg_cuda_where *p, const void *cond,
                                  const void *x, const void *y, void *out,
                                  cudaStream_t stream);
cudaError_t dfg_cuda_launch_cast(const dfg_cuda_cast *p, const void *in,
                                 void *out, cudaStream_t stream);
/* in: x, scale, bias, mean, var */
cudaError_t dfg_cuda_launch_batch_norm(const dfg_cuda_batch_norm *p,
                                       const void *const *in, void *out,
                                       cudaStream_t stream);

/* reduce.cu */
cudaError_t dfg_cuda_launch_reduce(const dfg_cuda_reduce *p, const void *in,
                                   void *out, cudaStream_t stream);

/* softmax_norm.cu */
cudaError_t dfg_cuda_launch_softmax(const dfg_cuda_softmax *p, const void *in,
                                    void *out, cudaStream_t stream);
/* bias may be NULL (p->has_bias 0) */
cudaError_t dfg_cuda_launch_layer_norm(const dfg_cuda_layer_norm *p,
                                       const void *x, const void *scale,
                                       const void *bias, void *out,
                                       cudaStream_t stream);

/* pool.cu */
cudaError_t dfg_cuda_launch_pool(const dfg_cuda_pool *p, const void *x,
                                 void *y, cudaStream_t stream);

/* layout.cu */
cudaError_t dfg_cuda_launch_strided_copy(const dfg_cuda_strided_copy *p,
                                         const void *src, void *dst,
                                         cudaStream_t stream);
/* n elements of element_size bytes set to the low bytes of value. */
cudaError_t dfg_cuda_launch_fill(void *dst, int64_t n, int64_t element_size,
                                 uint64_t value, cudaStream_t stream);
/* An out-of-range index sets *status to p->step + 1 (when still 0). */
cudaError_t dfg_cuda_launch_gather(const dfg_cuda_gather *p, const void *data,
                                   const void *indices, void *out,
                                   unsigned int *status, cudaStream_t stream);

/* conv.cu (bias may be NULL when p->has_bias is 0) */
cudaError_t dfg_cuda_launch_im2col(const dfg_cuda_im2col *p, const void *x,
                                   void *col, cudaStream_t stream);
cudaError_t dfg_cuda_launch_depthwise(const dfg_cuda_depthwise *p,
                                      const void *x, const void *w,
                                      const void *bias, void *y,
                                      cudaStream_t stream);

/* conv.cu: the chunk col added into the group's dx (conv2d_grad_input) */
cudaError_t dfg_cuda_launch_col2im(const dfg_cuda_col2im *p, const float *col,
                                   float *dx, cudaStream_t stream);

/* index.cu. An index out of range sets *status to p->step + 1 (when still
 * 0), as gather does. scatter_nd writes the updates into out, which holds
 * a copy of data already. */
cudaError_t dfg_cuda_launch_arg_reduce(const dfg_cuda_arg_reduce *p,
                                       const void *in, int64_t *out,
                                       cudaStream_t stream);
cudaError_t dfg_cuda_launch_gather_elements(const dfg_cuda_gather_elements *p,
                                            const void *data,
                                            const void *indices, void *out,
                                            unsigned int *status,
                                            cudaStream_t stream);
cudaError_t dfg_cuda_launch_scatter_nd(const dfg_cuda_scatter_nd *p,
                                       const void *indices,
                                       const void *updates, void *out,
                                       unsigned int *status,
                                       cudaStream_t stream);

cudaError_t dfg_cuda_launch_resize(const dfg_cuda_resize *p, const void *in,
                                   void *out, cudaStream_t stream);
cudaError_t dfg_cuda_launch_top_k(const dfg_cuda_top_k *p, const void *in,
                                  void *values, int64_t *indices,
                                  cudaStream_t stream);

/* training.cu. A label or index out of range sets *status as above.
 * gather_grad adds into dx, zeroed before. */
cudaError_t dfg_cuda_launch_cross_entropy(const dfg_cuda_cross_entropy *p,
                                          const float *logits,
                                          const void *labels, float *loss,
                                          unsigned int *status,
                                          cudaStream_t stream);
cudaError_t dfg_cuda_launch_cross_entropy_grad(
    const dfg_cuda_cross_entropy *p, const float *logits, const void *labels,
    const float *dloss, float *grad, unsigned int *status,
    cudaStream_t stream);
/* x is NULL for average_pool_grad. */
cudaError_t dfg_cuda_launch_pool_grad(const dfg_cuda_pool_grad *p,
                                      const float *x, const float *dy,
                                      float *dx, cudaStream_t stream);
cudaError_t dfg_cuda_launch_gelu_grad(const dfg_cuda_gelu_grad *p,
                                      const float *x, const float *dy,
                                      float *dx, cudaStream_t stream);
cudaError_t dfg_cuda_launch_gather_grad(const dfg_cuda_gather *p,
                                        const float *dy, const void *indices,
                                        float *dx, unsigned int *status,
                                        cudaStream_t stream);
cudaError_t dfg_cuda_launch_optimizer_tick(int64_t *counter,
                                           const float *hyper, float *control,
                                           cudaStream_t stream);
cudaError_t dfg_cuda_launch_optimizer(const dfg_cuda_optimizer *p,
                                      const dfg_cuda_optimizer_operands *o,
                                      float *update_squares,
                                      cudaStream_t stream);

/* batch_norm_train.cu: in and out are the op's operands in order;
 * batch_norm_train updates running_mean and running_var (in[3], in[4])
 * in place. */
cudaError_t dfg_cuda_launch_batch_norm_train(
    const dfg_cuda_batch_norm_train *p, const void *const *in,
    void *const *out, cudaStream_t stream);
cudaError_t dfg_cuda_launch_batch_norm_train_grad(
    const dfg_cuda_batch_norm_train *p, const void *const *in,
    void *const *out, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
