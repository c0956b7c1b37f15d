/* Elementwise kernels: grid-stride loops around elementwise_ops.h, with
 * 16-byte loads and stores (4 f32 or 8 f16 / bf16 elements) for
 * contiguous, aligned float data, and the
 * kernels with index arithmetic instantiated for 32 and 64 bits. */
#include "runtime/cuda/kernels/device_loop.cuh"
#include "runtime/cuda/kernels/kernels.h"
#include "runtime/cuda/plan/launch_geometry.h"

static __global__ void unary_kernel(dfg_cuda_unary p, const void *in, void *out)
{
    DFG_CUDA_GRID_STRIDE(i, p.n)
        dfg_cuda_unary_element(&p, in, out, i);
}

/* Lanes elements (dfg_cuda_vector_lanes) per 16-byte load and store. */
template <int Lanes>
static __global__ void unary_vector_kernel(dfg_cuda_unary p, const uint4 *in,
                                           uint4 *out)
{
    DFG_CUDA_GRID_STRIDE(i, p.n / Lanes) {
        uint4 v = in[i];
        dfg_cuda_unary_vector(&p, &v, Lanes);
        out[i] = v;
    }
}

extern "C" cudaError_t dfg_cuda_launch_unary(const dfg_cuda_unary *p,
                                             const void *in, void *out,
                                             cudaStream_t stream)
{
    dfg_cuda_launch l = dfg_cuda_launch_elements(p->lanes ? p->n / p->lanes
                                                          : p->n);
    if (l.blocks == 0)
        return cudaSuccess;
    if (p->lanes == 4)
        unary_vector_kernel<4><<<l.blocks, l.threads, 0, stream>>>(
            *p, (const uint4 *)in, (uint4 *)out);
    else if (p->lanes == 8)
        unary_vector_kernel<8><<<l.blocks, l.threads, 0, stream>>>(
            *p, (const uint4 *)in, (uint4 *)out);
    else
        unary_kernel<<<l.blocks, l.threads, 0, stream>>>(*p, in, out);
    return cudaGetLastError();
}

template <int Narrow>
static __global__ void binary_kernel(dfg_cuda_binary p, const void *a,
                                     const void *b, void *out)
{
    DFG_CUDA_GRID_STRIDE(i, p.n)
        dfg_cuda_binary_element(&p, a, b, out, i, Narrow);
}

template <int Lanes>
static __global__ void binary_vector_kernel(dfg_cuda_binary p, const uint4 *a,
                                            const uint4 *b, uint4 *out)
{
    DFG_CUDA_GRID_STRIDE(i, p.n / Lanes) {
        uint4 x = a[i], y = b[i];
        dfg_cuda_binary_vector(&p, &x, &y, Lanes);
        out[i] = x;
    }
}

extern "C" cudaError_t dfg_cuda_launch_binary(const dfg_cuda_binary *p,
                                              const void *a, const void *b,
                                              void *out, cudaStream_t stream)
{
    dfg_cuda_launch l = dfg_cuda_launch_elements(p->lanes ? p->n / p->lanes
                                                          : p->n);
    if (l.blocks == 0)
        return cudaSuccess;
    if (p->lanes == 4)
        binary_vector_kernel<4><<<l.blocks, l.threads, 0, stream>>>(
            *p, (const uint4 *)a, (const uint4 *)b, (uint4 *)out);
    else if (p->lanes == 8)
        binary_vector_kernel<8><<<l.blocks, l.threads, 0, stream>>>(
            *p, (const uint4 *)a, (const uint4 *)b, (uint4 *)out);
    else
        DFG_CUDA_LAUNCH_INDEXED(binary_kernel, p->index32, l.blocks,
                                l.threads, stream, *p, a, b, out);
    return cudaGetLastError();
}

template <int Narrow>
static __global__ void where_kernel(dfg_cuda_where p, const uint8_t *cond,
                                    const void *x, const void *y, void *out)
{
    DFG_CUDA_GRID_STRIDE(i, p.n)
        dfg_cuda_where_element(&p, cond, x, y, out, i, Narrow);
}

extern "C" cudaError_t dfg_cuda_launch_where(const dfg_cuda_where *p,
                                             const void *cond, const void *x,
                                             const void *y, void *out,
                                             cudaStream_t stream)
{
    dfg_cuda_launch l = dfg_cuda_launch_elements(p->n);
    if (l.blocks == 0)
        return cudaSuccess;
    DFG_CUDA_LAUNCH_INDEXED(where_kernel, p->index32, l.blocks, l.threads,
                            stream, *p, (const uint8_t *)cond, x, y, out);
    return cudaGetLastError();
}

static __global__ void cast_kernel(dfg_cuda_cast p, const void *in, void *out)
{
    DFG_CUDA_GRID_STRIDE(i, p.n)
        dfg_cuda_cast_element(&p, in, out, i);
}

extern "C" cudaError_t dfg_cuda_launch_cast(const dfg_cuda_cast *p,
                                            const void *in, void *out,
                                            cudaStream_t stream)
{
    dfg_cuda_launch l = dfg_cuda_launch_elements(p->n);
    if (l.blocks == 0)
        return cudaSuccess;
    cast_kernel<<<l.blocks, l.threads, 0, stream>>>(*p, in, out);
    return cudaGetLastError();
}

template <int Narrow>
static __global__ void batch_norm_kernel(dfg_cuda_batch_norm p, const void *x,
                                         const void *scale, const void *bias,
                                         const void *mean, const void *var,
                                         void *out)
{
    DFG_CUDA_GRID_STRIDE(i, p.n)
        dfg_cuda_batch_norm_element(&p, x, scale, bias, mean, var, out, i,
                                    Narrow);
}

extern "C" cudaError_t dfg_cuda_launch_batch_norm(const dfg_cuda_batch_norm *p,
                                                  const void *const *in,
                                                  void *out,
                                                  cudaStream_t stream)
{
    dfg_cuda_launch l = dfg_cuda_launch_elements(p->n);
    if (l.blocks == 0)
        return cudaSuccess;
    DFG_CUDA_LAUNCH_INDEXED(batch_norm_kernel, p->index32, l.blocks,
                            l.threads, stream, *p, in[0], in[1], in[2], in[3],
                            in[4], out);
    return cudaGetLastError();
}

template <int Narrow>
static __global__ void epilogue_kernel(dfg_cuda_epilogue p, const void *bias,
                                       void *y)
{
    DFG_CUDA_GRID_STRIDE(i, p.n)
        dfg_cuda_epilogue_element(&p, bias, y, i, Narrow);
}

extern "C" cudaError_t dfg_cuda_launch_epilogue(const dfg_cuda_epilogue *p,
                                                const void *bias, void *y,
                                                cudaStream_t stream)
{
    dfg_cuda_launch l = dfg_cuda_launch_elements(p->n);
    if (l.blocks == 0 || (p->n_ops == 0 && !bias))
        return cudaSuccess;
    DFG_CUDA_LAUNCH_INDEXED(epilogue_kernel, p->index32, l.blocks, l.threads,
                            stream, *p, bias, y);
    return cudaGetLastError();
}
