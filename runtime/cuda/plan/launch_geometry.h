/* Launch geometry of the CUDA kernels, in plain C so that the CPU tests
 * check it: grid-stride loops over elements, and one block per row for the
 * kernels that fold a row (softmax, layer_norm, reductions). */
#ifndef DFG_CUDA_LAUNCH_GEOMETRY_H
#define DFG_CUDA_LAUNCH_GEOMETRY_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Threads per block of the elementwise kernels. */
#define DFG_CUDA_THREADS 256
/* Most threads a row kernel uses: a power of two (its block reduction
 * halves the active threads). */
#define DFG_CUDA_ROW_THREADS_MAX 512
/* The grid is capped; grid-stride loops cover the rest. Enough blocks to
 * fill any current GPU many times over. */
#define DFG_CUDA_MAX_BLOCKS 65536

typedef struct dfg_cuda_launch {
    uint32_t blocks;  /* 0: nothing to launch */
    uint32_t threads;
} dfg_cuda_launch;

/* Blocks of DFG_CUDA_THREADS covering n work items. */
dfg_cuda_launch dfg_cuda_launch_elements(int64_t n);

/* One block per row (rows capped, grid-stride over the rest), threads a
 * power of two from 32 up to DFG_CUDA_ROW_THREADS_MAX, no more than the
 * row needs. */
dfg_cuda_launch dfg_cuda_launch_rows(int64_t rows, int64_t row_length);

#ifdef __cplusplus
}
#endif
#endif
