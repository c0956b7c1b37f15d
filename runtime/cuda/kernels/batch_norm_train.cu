/* batch_norm_train and its gradient (batch_norm_train_ops.h): a block per
 * channel (block-strided over the grid), its threads folding the
 * channel's elements in f32, the block adding their shares in a tree,
 * then every thread writing its share of the channel's outputs. The
 * gradient's dx may be written over x or dy (the op runs in place): each
 * thread writes the elements it read, after the block's sums. */
#include "device_loop.cuh"
#include "kernels.h"
#include "cuda/plan/launch_geometry.h"

template <int narrow>
static __global__ void batch_norm_train_kernel(
    dfg_cuda_batch_norm_train p, const float *x, const float *scale,
    const float *bias, float *running_mean, float *running_var, float *y,
    float *mean_out, float *var_out)
{
    __shared__ float shared[DFG_CUDA_ROW_THREADS_MAX];
    const int64_t m = dfg_cuda_bn_train_count(&p);
    DFG_CUDA_BLOCK_STRIDE(c, p.channels) {
        float sum = 0.0f;
        for (int64_t r = threadIdx.x; r < m; r += blockDim.x)
            sum += x[dfg_cuda_bn_train_offset(&p, c, r, narrow)];
        float mean = dfg_cuda_bn_train_mean_of(
            &p, dfg_cuda_block_reduce(sum, shared, dfg_cuda_sum()));
        float squares = 0.0f;
        for (int64_t r = threadIdx.x; r < m; r += blockDim.x) {
            float d = x[dfg_cuda_bn_train_offset(&p, c, r, narrow)] - mean;
            squares += d * d;
        }
        float var = dfg_cuda_bn_train_mean_of(
            &p, dfg_cuda_block_reduce(squares, shared, dfg_cuda_sum()));
        if (threadIdx.x == 0) {
            mean_out[c] = mean;
            var_out[c] = var;
            dfg_cuda_bn_train_running(&p, mean, var, &running_mean[c],
                                      &running_var[c]);
        }
        float k, shift;
        dfg_cuda_batch_norm_affine(scale[c], bias[c], mean, var, p.epsilon,
                                   &k, &shift);
        for (int64_t r = threadIdx.x; r < m; r += blockDim.x) {
            int64_t at = dfg_cuda_bn_train_offset(&p, c, r, narrow);
            y[at] = x[at] * k + shift;
        }
    }
}

extern "C" cudaError_t dfg_cuda_launch_batch_norm_train(
    const dfg_cuda_batch_norm_train *p, const void *const *in,
    void *const *out, cudaStream_t stream)
{
    dfg_cuda_launch l =
        dfg_cuda_launch_rows(p->channels, dfg_cuda_bn_train_count(p));
    if (l.blocks == 0)
        return cudaSuccess;
    DFG_CUDA_LAUNCH_INDEXED(batch_norm_train_kernel, p->index32, l.blocks,
                            l.threads, stream, *p, (const float *)in[0],
                            (const float *)in[1], (const float *)in[2],
                            (float *)in[3], (float *)in[4], (float *)out[0],
                            (float *)out[1], (float *)out[2]);
    return cudaGetLastError();
}

template <int narrow>
static __global__ void batch_norm_train_grad_kernel(
    dfg_cuda_batch_norm_train p, const float *x, const float *dy,
    const float *scale, const float *mean, const float *var, float *dx,
    float *dscale, float *dbias)
{
    __shared__ float shared[DFG_CUDA_ROW_THREADS_MAX];
    const int64_t m = dfg_cuda_bn_train_count(&p);
    DFG_CUDA_BLOCK_STRIDE(c, p.channels) {
        const float mu = mean[c], rstd = dfg_cuda_bn_train_rstd(&p, var[c]);
        float sum_dy = 0.0f, sum_dy_xhat = 0.0f;
        for (int64_t r = threadIdx.x; r < m; r += blockDim.x) {
            int64_t at = dfg_cuda_bn_train_offset(&p, c, r, narrow);
            sum_dy += dy[at];
            sum_dy_xhat += dy[at] * dfg_cuda_bn_train_xhat(x[at], mu, rstd);
        }
        sum_dy = dfg_cuda_block_reduce(sum_dy, shared, dfg_cuda_sum());
        sum_dy_xhat = dfg_cuda_block_reduce(sum_dy_xhat, shared,
                                            dfg_cuda_sum());
        if (threadIdx.x == 0) {
            dscale[c] = sum_dy_xhat;
            dbias[c] = sum_dy;
        }
        const float k = scale[c] * rstd;
        const float mean_dy = dfg_cuda_bn_train_mean_of(&p, sum_dy);
        const float mean_dy_xhat = dfg_cuda_bn_train_mean_of(&p, sum_dy_xhat);
        for (int64_t r = threadIdx.x; r < m; r += blockDim.x) {
            int64_t at = dfg_cuda_bn_train_offset(&p, c, r, narrow);
            dx[at] = dfg_cuda_bn_train_dx(x[at], dy[at], mu, rstd, k, mean_dy,
                                          mean_dy_xhat);
        }
    }
}

extern "C" cudaError_t dfg_cuda_launch_batch_norm_train_grad(
    const dfg_cuda_batch_norm_train *p, const void *const *in,
    void *const *out, cudaStream_t stream)
{
    dfg_cuda_launch l =
        dfg_cuda_launch_rows(p->channels, dfg_cuda_bn_train_count(p));
    if (l.blocks == 0)
        return cudaSuccess;
    DFG_CUDA_LAUNCH_INDEXED(batch_norm_train_grad_kernel, p->index32,
                            l.blocks, l.threads, stream, *p,
                            (const float *)in[0], (const float *)in[1],
                            (const float *)in[2], (const float *)in[3],
                            (const float *)in[4], (float *)out[0],
                            (float *)out[1], (float *)out[2]);
    return cudaGetLastError();
}
