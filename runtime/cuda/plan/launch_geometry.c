/* Launch geometry (see launch_geometry.h). */
#include "runtime/cuda/plan/launch_geometry.h"

dfg_cuda_launch dfg_cuda_launch_elements(int64_t n)
{
    dfg_cuda_launch l = {0, DFG_CUDA_THREADS};
    if (n <= 0)
        return l;
    int64_t blocks = (n + DFG_CUDA_THREADS - 1) / DFG_CUDA_THREADS;
    l.blocks = (uint32_t)(blocks < DFG_CUDA_MAX_BLOCKS ? blocks
                                                       : DFG_CUDA_MAX_BLOCKS);
    return l;
}

dfg_cuda_launch dfg_cuda_launch_rows(int64_t rows, int64_t row_length)
{
    dfg_cuda_launch l = {0, 32};
    if (rows <= 0)
        return l;
    while ((int64_t)l.threads < row_length &&
           l.threads < DFG_CUDA_ROW_THREADS_MAX)
        l.threads *= 2;
    l.blocks = (uint32_t)(rows < DFG_CUDA_MAX_BLOCKS ? rows
                                                     : DFG_CUDA_MAX_BLOCKS);
    return l;
}
