/* Building blocks of the CUDA kernels: the grid-stride loop and the block
 * reduction used by the kernels that run one block per row. */
#ifndef DFG_CUDA_DEVICE_LOOP_CUH
#define DFG_CUDA_DEVICE_LOOP_CUH

#include <stdint.h>

/* i over [0, n), spread over every thread of the grid. */
#define DFG_CUDA_GRID_STRIDE(i, n)                                        \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;      \
         i < (n); i += (int64_t)blockDim.x * gridDim.x)

/* Rows over the blocks of the grid, one block at a time per row. */
#define DFG_CUDA_BLOCK_STRIDE(row, rows) \
    for (int64_t row = blockIdx.x; row < (rows); row += gridDim.x)

/* Launches kernel<1> (32-bit index arithmetic, math/index_split.h) when
 * narrow, else kernel<0>; the kernel passes its template argument on to
 * the element functions as their `narrow`. */
#define DFG_CUDA_LAUNCH_INDEXED(kernel, narrow, blocks, threads, stream, ...) \
    do {                                                                    \
        if (narrow)                                                         \
            kernel<1><<<blocks, threads, 0, stream>>>(__VA_ARGS__);         \
        else                                                                \
            kernel<0><<<blocks, threads, 0, stream>>>(__VA_ARGS__);         \
    } while (0)

/* Folds every thread's v with op (associative and commutative) through
 * shared[blockDim.x] (blockDim.x a power of two); every thread gets the
 * result, and shared may be reused afterwards. */
template <typename T, typename Op>
__device__ T dfg_cuda_block_reduce(T v, T *shared, Op op)
{
    shared[threadIdx.x] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            shared[threadIdx.x] = op(shared[threadIdx.x],
                                     shared[threadIdx.x + s]);
        __syncthreads();
    }
    T result = shared[0];
    __syncthreads();
    return result;
}

struct dfg_cuda_sum {
    template <typename T> __device__ T operator()(T a, T b) const
    {
        return a + b;
    }
};

/* int64 sums wrap, as on the CPU. */
struct dfg_cuda_wrap_sum {
    __device__ int64_t operator()(int64_t a, int64_t b) const
    {
        return (int64_t)((uint64_t)a + (uint64_t)b);
    }
};

/* NaN wins, as in numpy and PyTorch (v != v is false for integers). */
struct dfg_cuda_max_nan_op {
    template <typename T> __device__ T operator()(T a, T b) const
    {
        return (b > a || b != b) ? b : a;
    }
};

#endif
