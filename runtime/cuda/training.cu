/* The training kernels (training_ops.h). The loss and the optimizer
 * updates fold a sum into one scalar and have no scratch to fold through,
 * so each runs as a single block (a block reduction in double); the
 * gradient kernels are grid-stride loops with one thread per gradient
 * element (per row for the cross-entropy), except gather_grad, whose dy
 * rows add into dx with atomics (rows sharing an index meet there; their
 * order, unlike the CPU's, is not fixed). */
#include "device_loop.cuh"
#include "kernels.h"
#include "launch_geometry.h"

static __device__ void raise_status(unsigned int *status, int32_t step)
{
    atomicCAS(status, 0u, (unsigned int)step + 1u);
}

static __global__ void cross_entropy_kernel(dfg_cuda_cross_entropy p,
                                            const float *logits,
                                            const void *labels, float *loss,
                                            unsigned int *status)
{
    __shared__ double shared[DFG_CUDA_ROW_THREADS_MAX];
    double total = 0.0;
    for (int64_t r = threadIdx.x; r < p.rows; r += blockDim.x) {
        int64_t label = dfg_cuda_label_at(&p, labels, r);
        if (label < 0)
            raise_status(status, p.step);
        else
            total += dfg_cuda_cross_entropy_row(&p, logits, r, label);
    }
    total = dfg_cuda_block_reduce(total, shared, dfg_cuda_sum());
    if (threadIdx.x == 0)
        *loss = dfg_cuda_cross_entropy_mean(&p, total);
}

extern "C" cudaError_t dfg_cuda_launch_cross_entropy(
    const dfg_cuda_cross_entropy *p, const float *logits, const void *labels,
    float *loss, unsigned int *status, cudaStream_t stream)
{
    dfg_cuda_launch l = dfg_cuda_launch_rows(1, p->rows);
    cross_entropy_kernel<<<1, l.threads, 0, stream>>>(*p, logits, labels, loss,
                                                      status);
    return cudaGetLastError();
}

static __global__ void cross_entropy_grad_kernel(dfg_cuda_cross_entropy p,
                                                 const float *logits,
                                                 const void *labels,
                                                 const float *dloss,
                                                 float *grad,
                                                 unsigned int *status)
{
    DFG_CUDA_GRID_STRIDE(r, p.rows) {
        int64_t label = dfg_cuda_label_at(&p, labels, r);
        if (label < 0)
            raise_status(status, p.step);
        else
            dfg_cross_entropy_grad_row(logits + r * p.classes, p.classes,
                                       label,
                                       dfg_cuda_cross_entropy_scale(&p, dloss),
                                       grad + r * p.classes);
    }
}

extern "C" cudaError_t dfg_cuda_launch_cross_entropy_grad(
    const dfg_cuda_cross_entropy *p, const float *logits, const void *labels,
    const float *dloss, float *grad, unsigned int *status,
    cudaStream_t stream)
{
    dfg_cuda_launch l = dfg_cuda_launch_elements(p->rows);
    if (l.blocks == 0)
        return cudaSuccess;
    cross_entropy_grad_kernel<<<l.blocks, l.threads, 0, stream>>>(
        *p, logits, labels, dloss, grad, status);
    return cudaGetLastError();
}

static __global__ void pool_grad_kernel(dfg_cuda_pool_grad p, const float *x,
                                        const float *dy, float *dx)
{
    DFG_CUDA_GRID_STRIDE(i, p.inputs)
        dx[i] = dfg_cuda_pool_grad_element(&p, x, dy, i);
}

extern "C" cudaError_t dfg_cuda_launch_pool_grad(const dfg_cuda_pool_grad *p,
                                                 const float *x,
                                                 const float *dy, float *dx,
                                                 cudaStream_t stream)
{
    dfg_cuda_launch l = dfg_cuda_launch_elements(p->inputs);
    if (l.blocks == 0)
        return cudaSuccess;
    pool_grad_kernel<<<l.blocks, l.threads, 0, stream>>>(*p, x, dy, dx);
    return cudaGetLastError();
}

static __global__ void gelu_grad_kernel(dfg_cuda_gelu_grad p, const float *x,
                                        const float *dy, float *dx)
{
    DFG_CUDA_GRID_STRIDE(i, p.n)
        dx[i] = dfg_cuda_gelu_grad_element(&p, x, dy, i);
}

extern "C" cudaError_t dfg_cuda_launch_gelu_grad(const dfg_cuda_gelu_grad *p,
                                                 const float *x,
                                                 const float *dy, float *dx,
                                                 cudaStream_t stream)
{
    dfg_cuda_launch l = dfg_cuda_launch_elements(p->n);
    if (l.blocks == 0)
        return cudaSuccess;
    gelu_grad_kernel<<<l.blocks, l.threads, 0, stream>>>(*p, x, dy, dx);
    return cudaGetLastError();
}

static __global__ void gather_grad_kernel(dfg_cuda_gather p, const float *dy,
                                          const void *indices, float *dx,
                                          unsigned int *status)
{
    DFG_CUDA_GRID_STRIDE(i, p.n) {
        int64_t target = dfg_cuda_gather_source(&p, indices, i);
        if (target >= 0)
            atomicAdd(dx + target, dy[i]);
        else
            raise_status(status, p.step);
    }
}

extern "C" cudaError_t dfg_cuda_launch_gather_grad(const dfg_cuda_gather *p,
                                                   const float *dy,
                                                   const void *indices,
                                                   float *dx,
                                                   unsigned int *status,
                                                   cudaStream_t stream)
{
    dfg_cuda_launch l = dfg_cuda_launch_elements(p->n);
    if (l.blocks == 0)
        return cudaSuccess;
    gather_grad_kernel<<<l.blocks, l.threads, 0, stream>>>(*p, dy, indices, dx,
                                                           status);
    return cudaGetLastError();
}

static __global__ void optimizer_tick_kernel(int64_t *counter,
                                             const float *hyper,
                                             float *control)
{
    dfg_optimizer_tick(counter, hyper, control);
}

extern "C" cudaError_t dfg_cuda_launch_optimizer_tick(int64_t *counter,
                                                      const float *hyper,
                                                      float *control,
                                                      cudaStream_t stream)
{
    optimizer_tick_kernel<<<1, 1, 0, stream>>>(counter, hyper, control);
    return cudaGetLastError();
}

static __global__ void optimizer_kernel(dfg_cuda_optimizer p,
                                        dfg_cuda_optimizer_operands o,
                                        float *update_squares)
{
    __shared__ double shared[DFG_CUDA_ROW_THREADS_MAX];
    double squares = 0.0;
    for (int64_t i = threadIdx.x; i < p.n; i += blockDim.x)
        squares += dfg_cuda_optimizer_element(&p, &o, i);
    squares = dfg_cuda_block_reduce(squares, shared, dfg_cuda_sum());
    if (threadIdx.x == 0)
        *update_squares = (float)squares;
}

extern "C" cudaError_t dfg_cuda_launch_optimizer(
    const dfg_cuda_optimizer *p, const dfg_cuda_optimizer_operands *o,
    float *update_squares, cudaStream_t stream)
{
    dfg_cuda_launch l = dfg_cuda_launch_rows(1, p->n);
    optimizer_kernel<<<1, l.threads, 0, stream>>>(*p, *o, update_squares);
    return cudaGetLastError();
}
