/* The convolution's own kernels (its products run on cuBLAS, blas.c,
 * conv_forward.c and conv_grad.c): the im2col chunks of a batch of images
 * and groups, one thread per entry, in the input's dtype so that cuBLAS
 * multiplies them as it multiplies the weights; the
 * col2im of the input gradient, one thread per input element (no two
 * threads add into one element, so no atomics); and the depthwise stencil,
 * one thread per output element. */
#include "runtime/cuda/kernels/device_loop.cuh"
#include "runtime/cuda/kernels/kernels.h"
#include "runtime/cuda/plan/launch_geometry.h"

template <int Narrow>
static __global__ void im2col_kernel(dfg_cuda_im2col p, const void *x,
                                     void *col)
{
    DFG_CUDA_GRID_STRIDE(i, dfg_cuda_im2col_entries(&p))
        dfg_cuda_im2col_element(&p, x, col, i, Narrow);
}

extern "C" cudaError_t dfg_cuda_launch_im2col(const dfg_cuda_im2col *p,
                                              const void *x, void *col,
                                              cudaStream_t stream)
{
    dfg_cuda_launch l = dfg_cuda_launch_elements(dfg_cuda_im2col_entries(p));
    if (l.blocks == 0)
        return cudaSuccess;
    DFG_CUDA_LAUNCH_INDEXED(im2col_kernel, p->index32, l.blocks, l.threads,
                            stream, *p, x, col);
    return cudaGetLastError();
}

template <int Narrow>
static __global__ void depthwise_kernel(dfg_cuda_depthwise p, const void *x,
                                        const void *w, const void *bias,
                                        void *y)
{
    DFG_CUDA_GRID_STRIDE(i, p.outputs)
        dfg_cuda_store_f32(y, p.dtype, i,
                           dfg_cuda_depthwise_element(&p, x, w, bias, i,
                                                      Narrow));
}

extern "C" cudaError_t dfg_cuda_launch_depthwise(const dfg_cuda_depthwise *p,
                                                 const void *x, const void *w,
                                                 const void *bias, void *y,
                                                 cudaStream_t stream)
{
    dfg_cuda_launch l = dfg_cuda_launch_elements(p->outputs);
    if (l.blocks == 0)
        return cudaSuccess;
    DFG_CUDA_LAUNCH_INDEXED(depthwise_kernel, p->index32, l.blocks,
                            l.threads, stream, *p, x, w, bias, y);
    return cudaGetLastError();
}

static __global__ void col2im_kernel(dfg_cuda_col2im p, const float *col,
                                     float *dx)
{
    DFG_CUDA_GRID_STRIDE(i, p.inputs)
        dx[i] = dfg_cuda_col2im_element(&p, col, i, dx[i]);
}

extern "C" cudaError_t dfg_cuda_launch_col2im(const dfg_cuda_col2im *p,
                                              const float *col, float *dx,
                                              cudaStream_t stream)
{
    dfg_cuda_launch l = dfg_cuda_launch_elements(p->inputs);
    if (l.blocks == 0)
        return cudaSuccess;
    col2im_kernel<<<l.blocks, l.threads, 0, stream>>>(*p, col, dx);
    return cudaGetLastError();
}
