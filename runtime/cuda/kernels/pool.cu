/* max_pool and average_pool: one thread per output element, the window
 * walked by dfg_cuda_pool_element (reduction_ops.h, pool_window.h). */
#include "runtime/cuda/kernels/device_loop.cuh"
#include "runtime/cuda/kernels/kernels.h"
#include "runtime/cuda/plan/launch_geometry.h"

template <int Narrow>
static __global__ void pool_kernel(dfg_cuda_pool p, const void *x, void *y)
{
    DFG_CUDA_GRID_STRIDE(i, p.outputs)
        dfg_cuda_store_f32(y, p.dtype, i,
                           dfg_cuda_pool_element(&p, x, i, Narrow));
}

extern "C" cudaError_t dfg_cuda_launch_pool(const dfg_cuda_pool *p,
                                            const void *x, void *y,
                                            cudaStream_t stream)
{
    dfg_cuda_launch l = dfg_cuda_launch_elements(p->outputs);
    if (l.blocks == 0)
        return cudaSuccess;
    DFG_CUDA_LAUNCH_INDEXED(pool_kernel, p->index32, l.blocks, l.threads,
                            stream, *p, x, y);
    return cudaGetLastError();
}
