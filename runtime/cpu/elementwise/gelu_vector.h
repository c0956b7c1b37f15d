/* GELU (erf form) in place over f32, for a step that runs it after a
 * library primitive instead of as the primitive's post-op (oneDNN's jit
 * kernels evaluate the post-op register by register inside their inner
 * loop; dfg's loop runs it over the whole output in one pass).
 *
 * Three variants of one loop (gelu_f32.h), 16 floats, 8 and one at a time
 * (vector_dispatch.h), each within 1e-6 relative or 1e-30 absolute of the double
 * result on every finite input; gelu(0) = 0, +inf gives +inf, -inf NaN,
 * NaN stays NaN. */
#ifndef DFG_CPU_GELU_VECTOR_H
#define DFG_CPU_GELU_VECTOR_H

#include <stdint.h>

/* y[i] = gelu(y[i]) for i < n on the variant of `width` floats (16, 8 or
 * 1; one this CPU has, as dfg_cpu_vector_width says), spread over the
 * OpenMP threads when n is large. */
void dfg_cpu_gelu_erf_f32_width(float *y, int64_t n, int width);

/* The same on dfg_cpu_vector_width's variant. */
void dfg_cpu_gelu_erf_f32(float *y, int64_t n);

#endif
