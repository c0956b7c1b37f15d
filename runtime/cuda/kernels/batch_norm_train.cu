/* batch_norm_train and its gradient (batch_norm_train_ops.h): a block per
 * channel (block-strided over the grid), its threads folding the
 * channel's elements in f32, the block adding their shares in a tree,
 * then every thread writing its share of the channel's outputs; or, with
 * split > 1, split blocks per channel writing partial sums, and a last
 * kernel adding them and writing the outputs. The gradient's dx may be
 * written over x or dy (the op runs in place): each thread writes the
 * elements it read, after the sums. */
#include "runtime/cuda/kernels/device_loop.cuh"
#include "runtime/cuda/kernels/kernels.h"
#include "runtime/cuda/plan/launch_geometry.h"

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

/* The terms r of channel blockIdx.x / split that part blockIdx.x % split
 * of it folds (batch_norm_train_ops.h). */
#define DFG_BN_PART_LOOP(p, r, m)                                          \
    for (int64_t r = (int64_t)(blockIdx.x % (p).split) * blockDim.x +    \
                     threadIdx.x;                                        \
         r < (m); r += (int64_t)(p).split * blockDim.x)

/* Partial sums of x (which 0) or of (x - mean)^2 (which 1, the mean from
 * the partials of x). */
template <int narrow>
static __global__ void bn_train_partials_kernel(dfg_cuda_batch_norm_train p,
                                                const float *x, int which)
{
    __shared__ float shared[DFG_CUDA_THREADS];
    const int64_t m = dfg_cuda_bn_train_count(&p), c = blockIdx.x / p.split;
    const float mean =
        which ? dfg_cuda_bn_train_mean_of(&p, dfg_cuda_bn_train_total(&p, 0, c))
              : 0.0f;
    float acc = 0.0f;
    DFG_BN_PART_LOOP(p, r, m) {
        float v = x[dfg_cuda_bn_train_offset(&p, c, r, narrow)];
        acc += which ? (v - mean) * (v - mean) : v;
    }
    acc = dfg_cuda_block_reduce(acc, shared, dfg_cuda_sum());
    if (threadIdx.x == 0)
        p.partials[(which * p.channels + c) * p.split + blockIdx.x % p.split] =
            acc;
}

template <int narrow>
static __global__ void bn_train_apply_kernel(
    dfg_cuda_batch_norm_train p, const float *x, const float *scale,
    const float *bias, float *running_mean, float *running_var, float *y,
    float *mean_out, float *var_out)
{
    const int64_t m = dfg_cuda_bn_train_count(&p), c = blockIdx.x / p.split;
    float mean = dfg_cuda_bn_train_mean_of(&p, dfg_cuda_bn_train_total(&p, 0, c));
    float var = dfg_cuda_bn_train_mean_of(&p, dfg_cuda_bn_train_total(&p, 1, c));
    if (blockIdx.x % p.split == 0 && threadIdx.x == 0) {
        mean_out[c] = mean;
        var_out[c] = var;
        dfg_cuda_bn_train_running(&p, mean, var, &running_mean[c],
                                  &running_var[c]);
    }
    float k, shift;
    dfg_cuda_batch_norm_affine(scale[c], bias[c], mean, var, p.epsilon, &k,
                               &shift);
    DFG_BN_PART_LOOP(p, r, m) {
        int64_t at = dfg_cuda_bn_train_offset(&p, c, r, narrow);
        y[at] = x[at] * k + shift;
    }
}

static cudaError_t launch_split_forward(const dfg_cuda_batch_norm_train *p,
                                        const void *const *in,
                                        void *const *out, cudaStream_t stream)
{
    unsigned blocks = (unsigned)(p->channels * p->split);
    for (int which = 0; which < 2; which++) {
        DFG_CUDA_LAUNCH_INDEXED(bn_train_partials_kernel, p->index32, blocks,
                                DFG_CUDA_THREADS, stream, *p,
                                (const float *)in[0], which);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            return e;
    }
    DFG_CUDA_LAUNCH_INDEXED(bn_train_apply_kernel, p->index32, blocks,
                            DFG_CUDA_THREADS, stream, *p, (const float *)in[0],
                            (const float *)in[1], (const float *)in[2],
                            (float *)in[3], (float *)in[4], (float *)out[0],
                            (float *)out[1], (float *)out[2]);
    return cudaGetLastError();
}

extern "C" cudaError_t dfg_cuda_launch_batch_norm_train(
    const dfg_cuda_batch_norm_train *p, const void *const *in,
    void *const *out, cudaStream_t stream)
{
    if (p->split > 1)
        return launch_split_forward(p, in, out, stream);
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

/* Partial sums of dy (0) and of dy * xhat (1). */
template <int narrow>
static __global__ void bn_train_grad_partials_kernel(
    dfg_cuda_batch_norm_train p, const float *x, const float *dy,
    const float *mean, const float *var)
{
    __shared__ float shared[DFG_CUDA_THREADS];
    const int64_t m = dfg_cuda_bn_train_count(&p), c = blockIdx.x / p.split;
    const float mu = mean[c], rstd = dfg_cuda_bn_train_rstd(&p, var[c]);
    float sum_dy = 0.0f, sum_dy_xhat = 0.0f;
    DFG_BN_PART_LOOP(p, r, m) {
        int64_t at = dfg_cuda_bn_train_offset(&p, c, r, narrow);
        sum_dy += dy[at];
        sum_dy_xhat += dy[at] * dfg_cuda_bn_train_xhat(x[at], mu, rstd);
    }
    sum_dy = dfg_cuda_block_reduce(sum_dy, shared, dfg_cuda_sum());
    sum_dy_xhat = dfg_cuda_block_reduce(sum_dy_xhat, shared, dfg_cuda_sum());
    if (threadIdx.x == 0) {
        int64_t part = blockIdx.x % p.split;
        p.partials[c * p.split + part] = sum_dy;
        p.partials[(p.channels + c) * p.split + part] = sum_dy_xhat;
    }
}

template <int narrow>
static __global__ void bn_train_grad_apply_kernel(
    dfg_cuda_batch_norm_train p, const float *x, const float *dy,
    const float *scale, const float *mean, const float *var, float *dx,
    float *dscale, float *dbias)
{
    const int64_t m = dfg_cuda_bn_train_count(&p), c = blockIdx.x / p.split;
    const float mu = mean[c], rstd = dfg_cuda_bn_train_rstd(&p, var[c]);
    const float sum_dy = dfg_cuda_bn_train_total(&p, 0, c);
    const float sum_dy_xhat = dfg_cuda_bn_train_total(&p, 1, c);
    if (blockIdx.x % p.split == 0 && threadIdx.x == 0) {
        dscale[c] = sum_dy_xhat;
        dbias[c] = sum_dy;
    }
    const float k = scale[c] * rstd;
    const float mean_dy = dfg_cuda_bn_train_mean_of(&p, sum_dy);
    const float mean_dy_xhat = dfg_cuda_bn_train_mean_of(&p, sum_dy_xhat);
    DFG_BN_PART_LOOP(p, r, m) {
        int64_t at = dfg_cuda_bn_train_offset(&p, c, r, narrow);
        dx[at] = dfg_cuda_bn_train_dx(x[at], dy[at], mu, rstd, k, mean_dy,
                                      mean_dy_xhat);
    }
}

static cudaError_t launch_split_grad(const dfg_cuda_batch_norm_train *p,
                                     const void *const *in, void *const *out,
                                     cudaStream_t stream)
{
    unsigned blocks = (unsigned)(p->channels * p->split);
    DFG_CUDA_LAUNCH_INDEXED(bn_train_grad_partials_kernel, p->index32, blocks,
                            DFG_CUDA_THREADS, stream, *p, (const float *)in[0],
                            (const float *)in[1], (const float *)in[3],
                            (const float *)in[4]);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return e;
    DFG_CUDA_LAUNCH_INDEXED(bn_train_grad_apply_kernel, p->index32, blocks,
                            DFG_CUDA_THREADS, stream, *p, (const float *)in[0],
                            (const float *)in[1], (const float *)in[2],
                            (const float *)in[3], (const float *)in[4],
                            (float *)out[0], (float *)out[1], (float *)out[2]);
    return cudaGetLastError();
}

extern "C" cudaError_t dfg_cuda_launch_batch_norm_train_grad(
    const dfg_cuda_batch_norm_train *p, const void *const *in,
    void *const *out, cudaStream_t stream)
{
    if (p->split > 1)
        return launch_split_grad(p, in, out, stream);
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
