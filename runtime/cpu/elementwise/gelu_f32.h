/* GELU (erf form) in f32 over a run, branch-free so that a loop over it
 * vectorizes: the unary op's loop (unary.c) and the loop a primitive
 * leaves its trailing GELU to (gelu_vector.c) inline the same code, each
 * for the vector width it is compiled for. 0.5 x (1 + erf(x / sqrt 2))
 * where 1 + erf keeps its precision (x >= -1: it is at least 0.317), the
 * erfc form (dfg_f32_gelu_erf_tail) below; +inf gives +inf, -inf NaN
 * (-inf times 0), NaN stays NaN, gelu(0) = 0. */
#ifndef DFG_CPU_GELU_F32_H
#define DFG_CPU_GELU_F32_H

#include <stdint.h>
#include <string.h>

#include "runtime/cpu/elementwise/f32_math.h"

/* Inlined always, so that a caller compiled for a wider ISA (a function
 * with a target attribute) vectorizes the loop at its own width. */
#if defined(__GNUC__)
#define DFG_GELU_INLINE static inline __attribute__((always_inline))
#else
#define DFG_GELU_INLINE static inline
#endif

/* GELU below x = -1: 0.5 x erfc(z), z = -x / sqrt 2 > 0.707, as erfc(z) =
 * t exp(-z^2 + P(t)), t = 1 / (1 + z / 2), P of degree 8 fitted to
 * log(erfc(z) / t) + z^2 on Chebyshev nodes of t for z in [0.707, 10]
 * (erfc's relative error at most 1.4e-8 in double; beyond z = 10 the
 * result is below f32's least normal). z is clamped where x >= -1, whose
 * lanes the caller does not use. */
DFG_GELU_INLINE float dfg_f32_gelu_erf_tail(float x)
{
    float z = x * -0.70710678118654752f;
    z = z > 0.70710678f ? z : 0.70710678f;
    float t = 1.0f / (1.0f + 0.5f * z);
    float p = -0.16171118321158934f;
    p = p * t + 0.3813262560313488f;
    p = p * t - 0.0757453448622939f;
    p = p * t - 0.3615255818208178f;
    p = p * t + 0.06853558127880201f;
    p = p * t + 0.029799388596610136f;
    p = p * t + 0.3852990368351666f;
    p = p * t + 0.9989484066586596f;
    p = p * t - 1.2654676887086647f;
    return 0.5f * x * (t * dfg_f32_exp(p - z * z));
}

/* out[i] = gelu(in[i]) for i < n, in chunks that take the erfc form only
 * where one holds an x below -1 (or NaN). Chunks go through a copy, so
 * that out may be in. */
#define DFG_GELU_CHUNK 64
DFG_GELU_INLINE void dfg_f32_gelu_erf_run(const float *in, float *out,
                                        int64_t n)
{
    float x[DFG_GELU_CHUNK];
    for (int64_t at = 0; at < n; at += DFG_GELU_CHUNK) {
        int64_t m = n - at < DFG_GELU_CHUNK ? n - at : DFG_GELU_CHUNK;
        memcpy(x, in + at, (size_t)m * sizeof *x);
        float *o = out + at;
        int tail = 0;
        for (int64_t i = 0; i < m; i++) {
            o[i] = 0.5f * x[i] *
                   (1.0f + dfg_f32_erf(x[i] * 0.70710678118654752f));
            tail |= !(x[i] >= -1.0f);
        }
        for (int64_t i = 0; tail && i < m; i++)
            o[i] = x[i] >= -1.0f ? o[i] : dfg_f32_gelu_erf_tail(x[i]);
    }
}

#endif
