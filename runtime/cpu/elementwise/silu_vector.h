/* silu (x * sigmoid(x)) over f32, in place or into another buffer: for a
 * step that runs it after a library primitive instead of as the
 * primitive's post-op (oneDNN's jit kernels compute an exp-based post-op
 * inside their inner loop, register by register; dfg's loop runs it over
 * the whole output in one pass), and for a silu step of its own.
 *
 * Three variants of one loop, 16 floats (AVX-512F), 8 (AVX2 with FMA) and
 * one at a time (any x86-64 CPU), each within a few ulp of the double
 * result on every finite input (0 for x below -88, where the result is
 * under 2^-120); NaN stays NaN, silu(+inf) = +inf, silu(-inf) = 0 (the
 * limit) and silu(0) = 0, so a padded blocked tensor keeps its zero
 * padding. */
#ifndef DFG_CPU_SILU_VECTOR_H
#define DFG_CPU_SILU_VECTOR_H

#include <stdint.h>

/* y[i] = silu(x[i]) for i < n on the variant of `width` floats (16, 8 or
 * 1; at most dfg_cpu_vector_width, vector_clones.h), spread over the
 * OpenMP threads when n is large. x and y are the same buffer or do not
 * overlap. */
void dfg_cpu_silu_f32_width(const float *x, float *y, int64_t n, int width);

/* The same at dfg_cpu_vector_width. */
void dfg_cpu_silu_f32(const float *x, float *y, int64_t n);

#endif
