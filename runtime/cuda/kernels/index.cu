/* The index-driven kernels (index_ops.h, sampling_ops.h): arg_max /
 * arg_min, gather_elements, scatter_nd, resize and top_k, one thread per
 * element (per slice for an unsorted top_k). */
#include "runtime/cuda/kernels/device_loop.cuh"
#include "runtime/cuda/kernels/kernels.h"
#include "runtime/cuda/plan/launch_geometry.h"

static __global__ void arg_reduce_kernel(dfg_cuda_arg_reduce p, const void *in,
                                         int64_t *out)
{
    DFG_CUDA_GRID_STRIDE(i, p.outputs)
        out[i] = dfg_cuda_arg_reduce_element(&p, in, i);
}

extern "C" cudaError_t dfg_cuda_launch_arg_reduce(const dfg_cuda_arg_reduce *p,
                                                  const void *in, int64_t *out,
                                                  cudaStream_t stream)
{
    dfg_cuda_launch l = dfg_cuda_launch_elements(p->outputs);
    if (l.blocks == 0)
        return cudaSuccess;
    arg_reduce_kernel<<<l.blocks, l.threads, 0, stream>>>(*p, in, out);
    return cudaGetLastError();
}

static __global__ void gather_elements_kernel(dfg_cuda_gather_elements p,
                                              const void *data,
                                              const void *indices, void *out,
                                              unsigned int *status)
{
    DFG_CUDA_GRID_STRIDE(i, p.n) {
        int64_t src = dfg_cuda_gather_elements_source(&p, indices, i);
        if (src >= 0) {
            dfg_cuda_copy_element(out, i, data, src, p.element_size);
        } else {
            const uint64_t zero = 0;
            dfg_cuda_copy_element(out, i, &zero, 0, p.element_size);
            atomicCAS(status, 0u, (unsigned int)p.step + 1u);
        }
    }
}

extern "C" cudaError_t dfg_cuda_launch_gather_elements(
    const dfg_cuda_gather_elements *p, const void *data, const void *indices,
    void *out, unsigned int *status, cudaStream_t stream)
{
    dfg_cuda_launch l = dfg_cuda_launch_elements(p->n);
    if (l.blocks == 0)
        return cudaSuccess;
    gather_elements_kernel<<<l.blocks, l.threads, 0, stream>>>(
        *p, data, indices, out, status);
    return cudaGetLastError();
}

static __global__ void scatter_nd_kernel(dfg_cuda_scatter_nd p,
                                         const void *indices,
                                         const void *updates, void *out,
                                         unsigned int *status)
{
    DFG_CUDA_GRID_STRIDE(i, p.n) {
        int64_t dst = dfg_cuda_scatter_nd_target(&p, indices, i);
        if (dst >= 0)
            dfg_cuda_copy_element(out, dst, updates, i, p.element_size);
        else
            atomicCAS(status, 0u, (unsigned int)p.step + 1u);
    }
}

extern "C" cudaError_t dfg_cuda_launch_scatter_nd(const dfg_cuda_scatter_nd *p,
                                                  const void *indices,
                                                  const void *updates,
                                                  void *out,
                                                  unsigned int *status,
                                                  cudaStream_t stream)
{
    dfg_cuda_launch l = dfg_cuda_launch_elements(p->n);
    if (l.blocks == 0)
        return cudaSuccess;
    scatter_nd_kernel<<<l.blocks, l.threads, 0, stream>>>(*p, indices, updates,
                                                          out, status);
    return cudaGetLastError();
}

static __global__ void resize_kernel(dfg_cuda_resize p, const void *in,
                                     void *out)
{
    DFG_CUDA_GRID_STRIDE(e, p.n)
        dfg_cuda_resize_element(&p, in, out, e);
}

extern "C" cudaError_t dfg_cuda_launch_resize(const dfg_cuda_resize *p,
                                              const void *in, void *out,
                                              cudaStream_t stream)
{
    dfg_cuda_launch l = dfg_cuda_launch_elements(p->n);
    if (l.blocks == 0)
        return cudaSuccess;
    resize_kernel<<<l.blocks, l.threads, 0, stream>>>(*p, in, out);
    return cudaGetLastError();
}

static __global__ void top_k_sorted_kernel(dfg_cuda_top_k p, const void *in,
                                           void *values, int64_t *indices)
{
    DFG_CUDA_GRID_STRIDE(e, p.slices * p.n)
        dfg_cuda_top_k_sorted_element(&p, in, values, indices, e);
}

static __global__ void top_k_unsorted_kernel(dfg_cuda_top_k p, const void *in,
                                             void *values, int64_t *indices)
{
    DFG_CUDA_GRID_STRIDE(s, p.slices)
        dfg_cuda_top_k_unsorted_slice(&p, in, values, indices, s);
}

extern "C" cudaError_t dfg_cuda_launch_top_k(const dfg_cuda_top_k *p,
                                             const void *in, void *values,
                                             int64_t *indices,
                                             cudaStream_t stream)
{
    dfg_cuda_launch l =
        dfg_cuda_launch_elements(p->sorted ? p->slices * p->n : p->slices);
    if (l.blocks == 0)
        return cudaSuccess;
    if (p->sorted)
        top_k_sorted_kernel<<<l.blocks, l.threads, 0, stream>>>(*p, in, values,
                                                                indices);
    else
        top_k_unsorted_kernel<<<l.blocks, l.threads, 0, stream>>>(
            *p, in, values, indices);
    return cudaGetLastError();
}
