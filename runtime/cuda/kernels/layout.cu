/* Data movement: the strided copy under transpose, slice, expand, pad,
 * concat, split and the bias broadcasts; the fill of pad; gather. */
#include "runtime/cuda/kernels/device_loop.cuh"
#include "runtime/cuda/kernels/kernels.h"
#include "runtime/cuda/plan/launch_geometry.h"

template <int Narrow>
static __global__ void strided_copy_kernel(dfg_cuda_strided_copy p,
                                           const void *src, void *dst)
{
    DFG_CUDA_GRID_STRIDE(i, p.n) {
        int64_t s, d;
        dfg_cuda_strided_offsets(&p, i, Narrow, &s, &d);
        dfg_cuda_copy_element(dst, d, src, s, p.element_size);
    }
}

extern "C" cudaError_t dfg_cuda_launch_strided_copy(
    const dfg_cuda_strided_copy *p, const void *src, void *dst,
    cudaStream_t stream)
{
    dfg_cuda_launch l = dfg_cuda_launch_elements(p->n);
    if (l.blocks == 0)
        return cudaSuccess;
    DFG_CUDA_LAUNCH_INDEXED(strided_copy_kernel, p->index32, l.blocks,
                            l.threads, stream, *p, src, dst);
    return cudaGetLastError();
}

static __global__ void fill_kernel(void *dst, int64_t n, int64_t element_size,
                                   uint64_t value)
{
    DFG_CUDA_GRID_STRIDE(i, n)
        dfg_cuda_copy_element(dst, i, &value, 0, element_size);
}

extern "C" cudaError_t dfg_cuda_launch_fill(void *dst, int64_t n,
                                            int64_t element_size,
                                            uint64_t value,
                                            cudaStream_t stream)
{
    dfg_cuda_launch l = dfg_cuda_launch_elements(n);
    if (l.blocks == 0)
        return cudaSuccess;
    fill_kernel<<<l.blocks, l.threads, 0, stream>>>(dst, n, element_size,
                                                    value);
    return cudaGetLastError();
}

static __global__ void gather_kernel(dfg_cuda_gather p, const void *data,
                                     const void *indices, void *out,
                                     unsigned int *status)
{
    DFG_CUDA_GRID_STRIDE(i, p.n) {
        int64_t src = dfg_cuda_gather_source(&p, indices, i);
        if (src >= 0) {
            dfg_cuda_copy_element(out, i, data, src, p.element_size);
        } else {
            const uint64_t zero = 0;
            dfg_cuda_copy_element(out, i, &zero, 0, p.element_size);
            atomicCAS(status, 0u, (unsigned int)p.step + 1u);
        }
    }
}

extern "C" cudaError_t dfg_cuda_launch_gather(const dfg_cuda_gather *p,
                                              const void *data,
                                              const void *indices, void *out,
                                              unsigned int *status,
                                              cudaStream_t stream)
{
    dfg_cuda_launch l = dfg_cuda_launch_elements(p->n);
    if (l.blocks == 0)
        return cudaSuccess;
    gather_kernel<<<l.blocks, l.threads, 0, stream>>>(*p, data, indices, out,
                                                      status);
    return cudaGetLastError();
}
