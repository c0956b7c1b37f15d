/* softmax, log_softmax and layer_norm: one block per row, numerically
 * stable as on the CPU, in f32. softmax subtracts the row's maximum before
 * exp; layer_norm computes the mean, then the variance from the deviations
 * (two passes: E[x^2] - E[x]^2 cancels when the mean is large against the
 * spread). */
#include "runtime/cuda/kernels/device_loop.cuh"
#include "runtime/cuda/kernels/kernels.h"
#include "runtime/cuda/plan/launch_geometry.h"

static __global__ void softmax_kernel(dfg_cuda_softmax p, const void *in,
                                      void *out)
{
    __shared__ float shared[DFG_CUDA_ROW_THREADS_MAX];
    DFG_CUDA_BLOCK_STRIDE(row, p.rows) {
        float max = -INFINITY;
        for (int64_t j = threadIdx.x; j < p.n; j += blockDim.x)
            max = dfg_cuda_max_nan(
                max, dfg_cuda_load_f32(in, p.dtype,
                                       dfg_cuda_softmax_offset(&p, row, j)));
        float fmax = dfg_cuda_block_reduce(max, shared, dfg_cuda_max_nan_op());
        float sum = 0.0f;
        for (int64_t j = threadIdx.x; j < p.n; j += blockDim.x)
            sum += expf(dfg_cuda_load_f32(in, p.dtype,
                                          dfg_cuda_softmax_offset(&p, row, j)) -
                        fmax);
        sum = dfg_cuda_block_reduce(sum, shared, dfg_cuda_sum());
        for (int64_t j = threadIdx.x; j < p.n; j += blockDim.x) {
            int64_t at = dfg_cuda_softmax_offset(&p, row, j);
            dfg_cuda_store_f32(out, p.dtype, at,
                               dfg_cuda_softmax_value(
                                   &p, dfg_cuda_load_f32(in, p.dtype, at),
                                   fmax, sum));
        }
    }
}

extern "C" cudaError_t dfg_cuda_launch_softmax(const dfg_cuda_softmax *p,
                                               const void *in, void *out,
                                               cudaStream_t stream)
{
    dfg_cuda_launch l = dfg_cuda_launch_rows(p->rows, p->n);
    if (l.blocks == 0)
        return cudaSuccess;
    softmax_kernel<<<l.blocks, l.threads, 0, stream>>>(*p, in, out);
    return cudaGetLastError();
}

static __global__ void layer_norm_kernel(dfg_cuda_layer_norm p, const void *x,
                                         const void *scale, const void *bias,
                                         void *out)
{
    __shared__ float shared[DFG_CUDA_ROW_THREADS_MAX];
    DFG_CUDA_BLOCK_STRIDE(row, p.rows) {
        int64_t base = row * p.d;
        float sum = 0.0f;
        for (int64_t j = threadIdx.x; j < p.d; j += blockDim.x)
            sum += dfg_cuda_load_f32(x, p.dtype, base + j);
        float mean = dfg_cuda_block_reduce(sum, shared, dfg_cuda_sum()) /
                     (float)p.d;
        float squares = 0.0f;
        for (int64_t j = threadIdx.x; j < p.d; j += blockDim.x) {
            float dev = dfg_cuda_load_f32(x, p.dtype, base + j) - mean;
            squares += dev * dev;
        }
        squares = dfg_cuda_block_reduce(squares, shared, dfg_cuda_sum());
        float rstd = dfg_cuda_layer_norm_rstd(&p, squares);
        for (int64_t j = threadIdx.x; j < p.d; j += blockDim.x) {
            float v = (dfg_cuda_load_f32(x, p.dtype, base + j) - mean) * rstd *
                          dfg_cuda_load_f32(scale, p.dtype, j) +
                      (p.has_bias ? dfg_cuda_load_f32(bias, p.dtype, j) : 0.0f);
            dfg_cuda_store_f32(out, p.dtype, base + j, v);
        }
    }
}

extern "C" cudaError_t dfg_cuda_launch_layer_norm(const dfg_cuda_layer_norm *p,
                                                  const void *x,
                                                  const void *scale,
                                                  const void *bias, void *out,
                                                  cudaStream_t stream)
{
    dfg_cuda_launch l = dfg_cuda_launch_rows(p->rows, p->d);
    if (l.blocks == 0)
        return cudaSuccess;
    layer_norm_kernel<<<l.blocks, l.threads, 0, stream>>>(*p, x, scale, bias,
                                                          out);
    return cudaGetLastError();
}
