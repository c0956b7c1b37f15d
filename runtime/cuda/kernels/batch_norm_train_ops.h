/* Batch normalization in training mode on the CUDA backend (src/ir/
 * ops.def, runtime/cpu/reduce/batch_norm_train.c), f32 only:
 *   batch_norm_train(x, scale, bias, running_mean, running_var)
 *     -> y, mean, var, the running statistics updated in place;
 *   batch_norm_train_grad(x, dy, scale, mean, var) -> dx, dscale, dbias.
 * x is viewed as [batch, channels, plane]; each channel's statistics fold
 * its m = batch * plane elements. The kernels (batch_norm_train.cu) give a
 * channel to a block: its threads take the elements r = t, t + threads,
 * ... (coalesced along the plane), each folds its share in f32, the block
 * adds the shares in a tree (no atomics: the same sums on every run), then
 * the threads write the channel's elements. With few channels and many
 * elements (split > 1, math/partial_sums.h), a channel is spread over
 * split blocks of DFG_CUDA_THREADS: part k folds r = k threads + t +
 * j split threads into a partial sum in the step's workspace, and the
 * next kernel adds the channel's partials in order. The per-element and
 * per-channel math below is what the CPU tests run through the emulator
 * against the CPU backend (whose statistics are double). */
#ifndef DFG_CUDA_BATCH_NORM_TRAIN_OPS_H
#define DFG_CUDA_BATCH_NORM_TRAIN_OPS_H

#include "runtime/cuda/kernels/elementwise_ops.h"

typedef struct dfg_cuda_batch_norm_train {
    int64_t batch, channels, plane;
    float epsilon;
    float momentum;             /* the running statistics' (attrs.alpha) */
    int biased_running_var;     /* attrs.beta == 0: ONNX's running variance */
    int index32;                /* x's offsets fit 32-bit index arithmetic */
    /* Blocks per channel (dfg_partial_sum_channel_split) where the step's
     * workspace holds partials, 2 * channels * split floats (the first
     * and the second sum of each channel, channel-major); else 1. */
    int32_t split;
    float *partials;
} dfg_cuda_batch_norm_train;

/* Channel c's total of sum `which` (0 or 1) from its split partials,
 * added in order. */
DFG_HOST_DEVICE static inline float
dfg_cuda_bn_train_total(const dfg_cuda_batch_norm_train *p, int which,
                        int64_t c)
{
    const float *part = p->partials + (which * p->channels + c) * p->split;
    float total = 0.0f;
    for (int32_t k = 0; k < p->split; k++)
        total += part[k];
    return total;
}

/* The elements a channel folds. */
DFG_HOST_DEVICE static inline int64_t
dfg_cuda_bn_train_count(const dfg_cuda_batch_norm_train *p)
{
    return p->batch * p->plane;
}

/* Offset in x (and y, dy, dx) of the r-th element of channel c; narrow
 * is p->index32 (math/index_split.h). */
DFG_HOST_DEVICE static inline int64_t
dfg_cuda_bn_train_offset(const dfg_cuda_batch_norm_train *p, int64_t c,
                         int64_t r, int narrow)
{
    int64_t n = r;
    int64_t i = dfg_index_split(&n, p->plane, narrow);
    return (n * p->channels + c) * p->plane + i;
}

/* A sum over the channel's elements divided by their count (0 for none). */
DFG_HOST_DEVICE static inline float
dfg_cuda_bn_train_mean_of(const dfg_cuda_batch_norm_train *p, float sum)
{
    int64_t m = dfg_cuda_bn_train_count(p);
    return m > 0 ? sum / (float)m : 0.0f;
}

/* running = momentum running + (1 - momentum) batch, the variance
 * unbiased unless p->biased_running_var, as the CPU kernel does. */
DFG_HOST_DEVICE static inline void
dfg_cuda_bn_train_running(const dfg_cuda_batch_norm_train *p, float mean,
                          float var, float *running_mean, float *running_var)
{
    int64_t m = dfg_cuda_bn_train_count(p);
    float batch_var = m > 1 && !p->biased_running_var
                          ? var * ((float)m / (float)(m - 1))
                          : var;
    *running_mean = p->momentum * *running_mean + (1.0f - p->momentum) * mean;
    *running_var = p->momentum * *running_var + (1.0f - p->momentum) * batch_var;
}

/* 1 / sqrt(var + eps) of a channel. */
DFG_HOST_DEVICE static inline float
dfg_cuda_bn_train_rstd(const dfg_cuda_batch_norm_train *p, float var)
{
    return 1.0f / sqrtf(var + p->epsilon);
}

/* The gradient's per-channel sums: dy and dy * xhat, xhat = (x - mean)
 * rstd. */
DFG_HOST_DEVICE static inline float dfg_cuda_bn_train_xhat(float x, float mean,
                                                           float rstd)
{
    return (x - mean) * rstd;
}

/* dx of one element: k = scale rstd, mean_dy and mean_dy_xhat the
 * channel's sums over m: k (dy - mean_dy - xhat mean_dy_xhat). */
DFG_HOST_DEVICE static inline float
dfg_cuda_bn_train_dx(float x, float dy, float mean, float rstd, float k,
                     float mean_dy, float mean_dy_xhat)
{
    return k * (dy - mean_dy -
                dfg_cuda_bn_train_xhat(x, mean, rstd) * mean_dy_xhat);
}

#endif
