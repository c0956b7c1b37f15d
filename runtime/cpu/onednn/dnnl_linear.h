/* A linear layer, y[M, N] = a[M, K] b (+ bias[N]) with b a weight, as
 * oneDNN's 1x1 convolution: a and y are the convolution's source and
 * destination in nwc (W = M rows, C = K or N channels: the same bytes as
 * the row-major matrices), b its weights [N, K, 1, 1], read in the blocked
 * layout the convolution chooses (reordered once, as a conv's weights).
 *
 * Why: on AVX2 oneDNN 2.6 runs matmul on its jit sgemm, which repacks B
 * at every call; the jit 1x1 convolution reads weights packed once. One
 * thread, [197 x 768] x [768 x 3072] (vit_b_16's MLP): 9.8-10.1 ms
 * against 11.0-11.2 ms (CPU time, best of 20; docs/BENCHMARKS.md). */
#ifndef DFG_CPU_DNNL_LINEAR_H
#define DFG_CPU_DNNL_LINEAR_H

#include <dnnl.h>
#include <stdint.h>

/* The descriptors of one linear layer as a convolution: the source, the
 * weights as their bytes lie (b_plain), the bias (1-D, N) and the
 * destination, and the primitive descriptor, which the caller destroys. */
typedef struct dfg_dnnl_linear {
    dnnl_memory_desc_t a, b_plain, bias, y;
    dnnl_primitive_desc_t pd;
} dfg_dnnl_linear;

/* Fills *out for rows m, inner size k and outputs n, b's element (k, n)
 * at b_strides[0] k + b_strides[1] n, with a bias if has_bias and attr's
 * post-ops and scratchpad mode. -1 (and *out untouched) when oneDNN has
 * no jit 1x1 convolution for it. */
int dfg_dnnl_linear_make(dnnl_engine_t engine,
                         const_dnnl_primitive_attr_t attr, int64_t m,
                         int64_t k, int64_t n, const int64_t b_strides[2],
                         int has_bias, dfg_dnnl_linear *out);

#endif
