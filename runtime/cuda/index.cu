/* The index-driven kernels (index_ops.h): arg_max / arg_min,
 * gather_elements and scatter_nd, one thread per element. */
#include "device_loop.cuh"
#include "kernels.h"
#include "launch_geometry.h"

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
