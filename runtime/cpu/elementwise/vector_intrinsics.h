/* The pieces of the loops written with intrinsics (silu_vector.c,
 * gelu_vector.c), once for every width: e^t as Cephes' expf computes it
 * (f32_math.h: t = n ln2 + r, a degree-6 polynomial in r, 2^n from n's
 * exponent bits), and the loops that run a body over an array in place. */
#ifndef DFG_CPU_VECTOR_INTRINSICS_H
#define DFG_CPU_VECTOR_INTRINSICS_H

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include <stdint.h>

/* 1.5 * 2^23: t log2(e) + MAGIC holds round(t log2(e)) in its low bits */
#define DFG_EXP_MAGIC 12582912.0f

/* Defines NAME(t, &scale), which returns p with e^t = p * scale (scale =
 * 2^n) for t in [-87, 88] (the caller clamps it: 2^n is a normal float
 * there), so that a caller may fuse the product into what follows: V the
 * vector type, P the intrinsics' prefix (_mm512, _mm256), I the integer
 * vector's name in the casts (si512, si256). 2^n comes from n's bits in
 * big (n << 23 drops MAGIC's). */
#define DFG_VECTOR_EXP(NAME, TARGET, V, P, I)                                \
    __attribute__((target(TARGET))) static inline V NAME(V t, V *scale)      \
    {                                                                        \
        V big = P##_fmadd_ps(t, P##_set1_ps(1.44269504088896341f),           \
                             P##_set1_ps(DFG_EXP_MAGIC));                    \
        V n = P##_sub_ps(big, P##_set1_ps(DFG_EXP_MAGIC));                   \
        V r = P##_fnmadd_ps(n, P##_set1_ps(0.693359375f), t);                \
        r = P##_fnmadd_ps(n, P##_set1_ps(-2.12194440e-4f), r);               \
        V p = P##_set1_ps(1.9875691500e-4f);                                 \
        p = P##_fmadd_ps(p, r, P##_set1_ps(1.3981999507e-3f));               \
        p = P##_fmadd_ps(p, r, P##_set1_ps(8.3334519073e-3f));               \
        p = P##_fmadd_ps(p, r, P##_set1_ps(4.1665795894e-2f));               \
        p = P##_fmadd_ps(p, r, P##_set1_ps(1.6666665459e-1f));               \
        p = P##_fmadd_ps(p, r, P##_set1_ps(5.0000001201e-1f));               \
        *scale = P##_cast##I##_ps(                                           \
            P##_add_epi32(P##_slli_epi32(P##_castps_##I(big), 23),           \
                          P##_set1_epi32(127 << 23)));                       \
        return P##_fmadd_ps(p, P##_mul_ps(r, r),                             \
                            P##_add_ps(r, P##_set1_ps(1.0f)));               \
    }

DFG_VECTOR_EXP(dfg_exp16, "avx512f", __m512, _mm512, si512)
DFG_VECTOR_EXP(dfg_exp8, "avx2,fma", __m256, _mm256, si256)

/* Defines NAME(y, n), which sets y[i] = BODY(y[i]) for i < n, 16 floats
 * at a time, the last few under a mask. */
#define DFG_VECTOR_LOOP16(NAME, BODY)                                        \
    __attribute__((target("avx512f"))) static void NAME(float *y, int64_t n) \
    {                                                                        \
        int64_t i = 0;                                                       \
        for (; i + 16 <= n; i += 16)                                         \
            _mm512_storeu_ps(y + i, BODY(_mm512_loadu_ps(y + i)));           \
        if (i < n) {                                                         \
            __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);                 \
            _mm512_mask_storeu_ps(y + i, m,                                  \
                                  BODY(_mm512_maskz_loadu_ps(m, y + i)));    \
        }                                                                    \
    }

/* The same 8 floats at a time, the last few by TAIL(y, n). */
#define DFG_VECTOR_LOOP8(NAME, BODY, TAIL)                                   \
    __attribute__((target("avx2,fma"))) static void NAME(float *y, int64_t n)\
    {                                                                        \
        int64_t i = 0;                                                       \
        for (; i + 8 <= n; i += 8)                                           \
            _mm256_storeu_ps(y + i, BODY(_mm256_loadu_ps(y + i)));           \
        TAIL(y + i, n - i);                                                  \
    }
#endif

#endif
