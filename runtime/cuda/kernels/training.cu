/* The training kernels (training_ops.h). The loss and the optimizer
 * updates fold a sum into one scalar in two passes: every block of the
 * grid writes one partial sum into the step's workspace, then one block
 * adds the partials (math/partial_sums.h). The cross-entropy and its
 * gradient give each row to a block, whose threads read it coalesced;
 * the other gradients are grid-stride loops with one thread per gradient
 * element, except gather_grad, whose dy rows add into dx with atomics
 * (rows sharing an index meet there; their order, unlike the CPU's, is
 * not fixed). Everything computes in f32. */
#include "runtime/cuda/kernels/device_loop.cuh"
#include "runtime/cuda/kernels/kernels.h"
#include "runtime/cuda/plan/launch_geometry.h"

static __device__ void raise_status(unsigned int *status, int32_t step)
{
    atomicCAS(status, 0u, (unsigned int)step + 1u);
}

/* The second pass: out = (sum of the n partials) / divisor, one block of
 * DFG_CUDA_THREADS threads, each adding every DFG_CUDA_THREADS-th. */
static __global__ void partial_sums_kernel(const float *partials, int32_t n,
                                           float divisor, float *out)
{
    __shared__ float shared[DFG_CUDA_THREADS];
    float total = 0.0f;
    for (int32_t i = threadIdx.x; i < n; i += blockDim.x)
        total += partials[i];
    total = dfg_cuda_block_reduce(total, shared, dfg_cuda_sum());
    if (threadIdx.x == 0)
        *out = total / divisor;
}

/* The maximum and the sum of exp(x - max) of a row, folded by the whole
 * block; every thread gets both. */
static __device__ void row_softmax_stats(const float *row, int64_t classes,
                                         float *shared, float *max,
                                         float *sum)
{
    float m = -INFINITY;
    for (int64_t c = threadIdx.x; c < classes; c += blockDim.x)
        m = dfg_cuda_row_max(m, row[c]);
    m = dfg_cuda_block_reduce(m, shared, dfg_cuda_max_nan_op());
    float s = 0.0f;
    for (int64_t c = threadIdx.x; c < classes; c += blockDim.x)
        s += expf(row[c] - m);
    *sum = dfg_cuda_block_reduce(s, shared, dfg_cuda_sum());
    *max = m;
}

static __global__ void cross_entropy_kernel(dfg_cuda_cross_entropy p,
                                            const float *logits,
                                            const void *labels,
                                            unsigned int *status)
{
    __shared__ float shared[DFG_CUDA_ROW_THREADS_MAX];
    float total = 0.0f;
    DFG_CUDA_BLOCK_STRIDE(r, p.rows) {
        const float *row = logits + r * p.classes;
        float max, sum;
        row_softmax_stats(row, p.classes, shared, &max, &sum);
        int64_t label = dfg_cuda_label_at(&p, labels, r);
        if (threadIdx.x != 0)
            continue;
        if (label < 0)
            raise_status(status, p.step);
        else
            total += dfg_cuda_cross_entropy_term(max, sum, row[label]);
    }
    if (threadIdx.x == 0)
        p.partials[blockIdx.x] = total;
}

extern "C" cudaError_t dfg_cuda_launch_cross_entropy(
    const dfg_cuda_cross_entropy *p, const float *logits, const void *labels,
    float *loss, unsigned int *status, cudaStream_t stream)
{
    dfg_cuda_launch l = dfg_cuda_launch_rows(p->blocks, p->classes);
    if (l.blocks > 0) {
        cross_entropy_kernel<<<l.blocks, l.threads, 0, stream>>>(
            *p, logits, labels, status);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            return e;
    }
    partial_sums_kernel<<<1, DFG_CUDA_THREADS, 0, stream>>>(
        p->partials, (int32_t)l.blocks, p->rows > 0 ? (float)p->rows : 1.0f,
        loss);
    return cudaGetLastError();
}

static __global__ void cross_entropy_grad_kernel(dfg_cuda_cross_entropy p,
                                                 const float *logits,
                                                 const void *labels,
                                                 const float *dloss,
                                                 float *grad,
                                                 unsigned int *status)
{
    __shared__ float shared[DFG_CUDA_ROW_THREADS_MAX];
    const float scale = dfg_cuda_cross_entropy_scale(&p, dloss);
    DFG_CUDA_BLOCK_STRIDE(r, p.rows) {
        const float *row = logits + r * p.classes;
        float max, sum;
        row_softmax_stats(row, p.classes, shared, &max, &sum);
        int64_t label = dfg_cuda_label_at(&p, labels, r);
        if (label < 0) {
            if (threadIdx.x == 0)
                raise_status(status, p.step);
            continue;
        }
        for (int64_t c = threadIdx.x; c < p.classes; c += blockDim.x)
            grad[r * p.classes + c] = dfg_cuda_cross_entropy_grad_value(
                row[c], max, sum, c == label, scale);
    }
}

extern "C" cudaError_t dfg_cuda_launch_cross_entropy_grad(
    const dfg_cuda_cross_entropy *p, const float *logits, const void *labels,
    const float *dloss, float *grad, unsigned int *status,
    cudaStream_t stream)
{
    dfg_cuda_launch l = dfg_cuda_launch_rows(p->rows, p->classes);
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
                                        dfg_cuda_optimizer_operands o)
{
    __shared__ float shared[DFG_CUDA_THREADS];
    float squares = 0.0f;
    DFG_CUDA_GRID_STRIDE(i, p.n)
        squares += dfg_cuda_optimizer_element(&p, &o, i);
    squares = dfg_cuda_block_reduce(squares, shared, dfg_cuda_sum());
    if (threadIdx.x == 0)
        p.partials[blockIdx.x] = squares;
}

extern "C" cudaError_t dfg_cuda_launch_optimizer(
    const dfg_cuda_optimizer *p, const dfg_cuda_optimizer_operands *o,
    float *update_squares, cudaStream_t stream)
{
    optimizer_kernel<<<p->blocks, DFG_CUDA_THREADS, 0, stream>>>(*p, *o);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return e;
    partial_sums_kernel<<<1, DFG_CUDA_THREADS, 0, stream>>>(
        p->partials, p->blocks, 1.0f, update_squares);
    return cudaGetLastError();
}
