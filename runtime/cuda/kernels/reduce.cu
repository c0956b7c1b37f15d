/* reduce_sum, reduce_mean, reduce_max and global_average_pool: one block
 * per output element, its threads striding over the elements folded into
 * it (reduction_ops.h), then a block reduction; a float sum or mean with
 * few outputs (a loss) spreads each output over several blocks, which
 * write partial sums that a second kernel adds; a float reduction over
 * outer dims with many outputs (columns) takes a thread per output.
 * Floats accumulate in f32, integers in int64 (reduction_ops.h). */
#include "runtime/cuda/kernels/device_loop.cuh"
#include "runtime/cuda/kernels/kernels.h"
#include "runtime/cuda/plan/launch_geometry.h"

static __global__ void reduce_float_kernel(dfg_cuda_reduce p, const void *in,
                                           void *out)
{
    __shared__ float shared[DFG_CUDA_ROW_THREADS_MAX];
    const bool max = p.op == DFG_OP_REDUCE_MAX;
    DFG_CUDA_BLOCK_STRIDE(o, p.outputs) {
        float acc = max ? -INFINITY : 0.0f;
        for (int64_t r = threadIdx.x; r < p.count; r += blockDim.x) {
            float v = dfg_cuda_load_f32(in, p.dtype,
                                         dfg_cuda_reduce_input(&p, o, r));
            acc = max ? dfg_cuda_max_nan(acc, v) : acc + v;
        }
        acc = max ? dfg_cuda_block_reduce(acc, shared, dfg_cuda_max_nan_op())
                  : dfg_cuda_block_reduce(acc, shared, dfg_cuda_sum());
        if (threadIdx.x == 0)
            dfg_cuda_store_f32(out, p.dtype, o,
                               p.op == DFG_OP_REDUCE_MEAN
                                   ? acc / (float)p.count
                                   : acc);
    }
}

/* A thread per output (dfg_cuda_reduce.columns), its terms in order. */
static __global__ void reduce_columns_kernel(dfg_cuda_reduce p, const void *in,
                                             void *out)
{
    const bool max = p.op == DFG_OP_REDUCE_MAX;
    DFG_CUDA_GRID_STRIDE(o, p.outputs) {
        int64_t base = dfg_dim_groups_offset(&p.kept, p.kept.n, o);
        float acc = max ? -INFINITY : 0.0f;
        for (int64_t r = 0; r < p.count; r++) {
            float v = dfg_cuda_load_f32(
                in, p.dtype,
                base + dfg_dim_groups_offset(&p.reduced, p.reduced.n, r));
            acc = max ? dfg_cuda_max_nan(acc, v) : acc + v;
        }
        dfg_cuda_store_f32(out, p.dtype, o,
                           p.op == DFG_OP_REDUCE_MEAN ? acc / (float)p.count
                                                      : acc);
    }
}

/* Block b: part b % split of output b / split (reduction_ops.h). */
static __global__ void reduce_partials_kernel(dfg_cuda_reduce p,
                                              const void *in)
{
    __shared__ float shared[DFG_CUDA_THREADS];
    int64_t o = blockIdx.x / p.split, part = blockIdx.x % p.split;
    float acc = 0.0f;
    for (int64_t r = part * blockDim.x + threadIdx.x; r < p.count;
         r += (int64_t)p.split * blockDim.x)
        acc += dfg_cuda_load_f32(in, p.dtype, dfg_cuda_reduce_input(&p, o, r));
    acc = dfg_cuda_block_reduce(acc, shared, dfg_cuda_sum());
    if (threadIdx.x == 0)
        p.partials[blockIdx.x] = acc;
}

/* Output o from its split partial sums, one thread per output. */
static __global__ void reduce_finish_kernel(dfg_cuda_reduce p, void *out)
{
    DFG_CUDA_GRID_STRIDE(o, p.outputs)
        dfg_cuda_store_f32(out, p.dtype, o,
                           dfg_cuda_reduce_finish(&p, p.partials + o * p.split));
}

static __global__ void reduce_integer_kernel(dfg_cuda_reduce p, const void *in,
                                             void *out)
{
    __shared__ int64_t shared[DFG_CUDA_ROW_THREADS_MAX];
    const bool max = p.op == DFG_OP_REDUCE_MAX;
    DFG_CUDA_BLOCK_STRIDE(o, p.outputs) {
        int64_t acc = max ? INT64_MIN : 0;
        for (int64_t r = threadIdx.x; r < p.count; r += blockDim.x) {
            int64_t v = dfg_cuda_load_i64(in, p.dtype,
                                          dfg_cuda_reduce_input(&p, o, r));
            acc = max ? (v > acc ? v : acc)
                      : (int64_t)((uint64_t)acc + (uint64_t)v);
        }
        acc = max ? dfg_cuda_block_reduce(acc, shared, dfg_cuda_max_nan_op())
                  : dfg_cuda_block_reduce(acc, shared, dfg_cuda_wrap_sum());
        if (threadIdx.x == 0) {
            if (p.op == DFG_OP_REDUCE_MEAN)
                acc = p.count ? acc / p.count : 0;
            dfg_cuda_store_i64(out, p.dtype, o, acc);
        }
    }
}

extern "C" cudaError_t dfg_cuda_launch_reduce(const dfg_cuda_reduce *p,
                                              const void *in, void *out,
                                              cudaStream_t stream)
{
    dfg_cuda_launch l = dfg_cuda_launch_rows(p->outputs, p->count);
    if (l.blocks == 0)
        return cudaSuccess;
    if (p->split > 1) {
        /* outputs * split <= DFG_PARTIAL_SUMS_MAX blocks */
        reduce_partials_kernel<<<(unsigned)(p->outputs * p->split),
                                 DFG_CUDA_THREADS, 0, stream>>>(*p, in);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            return e;
        l = dfg_cuda_launch_elements(p->outputs);
        reduce_finish_kernel<<<l.blocks, l.threads, 0, stream>>>(*p, out);
    } else if (p->columns) {
        l = dfg_cuda_launch_elements(p->outputs);
        reduce_columns_kernel<<<l.blocks, l.threads, 0, stream>>>(*p, in, out);
    } else if (dfg_cuda_is_integer(p->dtype))
        reduce_integer_kernel<<<l.blocks, l.threads, 0, stream>>>(*p, in, out);
    else
        reduce_float_kernel<<<l.blocks, l.threads, 0, stream>>>(*p, in, out);
    return cudaGetLastError();
}
