/* GELU (erf form) with AVX-512 and AVX2 variants (gelu_vector.h): x Phi(x)
 * with Phi(x) = h for x < 0 and 1 - h for x >= 0, h = erfc(z) / 2, z =
 * |x| / sqrt 2, one branch for every x: erfc(z) = t e^(P(t) - z^2), t = 1 /
 * (1 + z / 2), P of degree 9 (Numerical Recipes' erfcc, relative error
 * under 1.2e-7 for every z >= 0). z^2 = x^2 / 2 is taken with the
 * rounding error of x^2 (a fused multiply-add), whose error would
 * otherwise grow with z^2 in e^(-z^2). The exponent is clamped at -87;
 * x below -14 (where the result is under 2^-120) gives 0, -inf included.
 * The loop without vectors is the unary op's (gelu_f32.h). */
#include "runtime/cpu/elementwise/gelu_vector.h"

#include "runtime/cpu/elementwise/gelu_f32.h"
#include "runtime/cpu/elementwise/vector_clones.h"
#include "runtime/cpu/elementwise/vector_dispatch.h"
#include "runtime/cpu/elementwise/vector_intrinsics.h"

/* Below this gelu(x) is under 2^-120: the loop gives 0. */
#define GELU_ZERO_BELOW (-14.0f)

/* The loop without intrinsics, vectorized by the compiler where it can;
 * the AVX2 variant's tail. */
DFG_VECTOR_CLONES static void gelu_one(float *y, int64_t n)
{
    dfg_f32_gelu_erf_run(y, y, n);
}

#if defined(__x86_64__) && defined(__GNUC__)
#define DFG_GELU_X86 1
/* The loop body once for both widths: V the vector type, P the
 * intrinsics' prefix, EXP vector_intrinsics.h's e^t of that width;
 * SELECT(c, a, b) is a where c, else b, for c a compare of x. */
#define GELU_VECTOR(NAME, TARGET, V, P, EXP, LESS, SELECT)                   \
    __attribute__((target(TARGET))) static inline V NAME(V x)                \
    {                                                                        \
        V a = P##_max_ps(x, P##_sub_ps(P##_setzero_ps(), x));                \
        V z = P##_mul_ps(a, P##_set1_ps(0.70710678118654752f));              \
        V t = P##_div_ps(P##_set1_ps(1.0f),                                  \
                         P##_fmadd_ps(z, P##_set1_ps(0.5f),                  \
                                      P##_set1_ps(1.0f)));                   \
        V p = P##_set1_ps(0.17087277f);                                      \
        p = P##_fmadd_ps(p, t, P##_set1_ps(-0.82215223f));                   \
        p = P##_fmadd_ps(p, t, P##_set1_ps(1.48851587f));                    \
        p = P##_fmadd_ps(p, t, P##_set1_ps(-1.13520398f));                   \
        p = P##_fmadd_ps(p, t, P##_set1_ps(0.27886807f));                    \
        p = P##_fmadd_ps(p, t, P##_set1_ps(-0.18628806f));                   \
        p = P##_fmadd_ps(p, t, P##_set1_ps(0.09678418f));                    \
        p = P##_fmadd_ps(p, t, P##_set1_ps(0.37409196f));                    \
        p = P##_fmadd_ps(p, t, P##_set1_ps(1.00002368f));                    \
        p = P##_fmadd_ps(p, t, P##_set1_ps(-1.26551223f));                   \
        V sq = P##_mul_ps(x, x);                                             \
        V sq_lo = P##_fmsub_ps(x, x, sq);                                    \
        V e = P##_fnmadd_ps(sq, P##_set1_ps(0.5f), p);                       \
        e = P##_fnmadd_ps(sq_lo, P##_set1_ps(0.5f), e);                      \
        V scale;                                                             \
        V q = EXP(P##_max_ps(e, P##_set1_ps(-87.0f)), &scale);               \
        V h = P##_mul_ps(P##_mul_ps(P##_mul_ps(t, P##_set1_ps(0.5f)), q),    \
                         scale);                                             \
        V phi = SELECT(LESS(x, P##_setzero_ps()), h,                         \
                       P##_sub_ps(P##_set1_ps(1.0f), h));                    \
        V y = P##_mul_ps(x, phi);                                            \
        return SELECT(LESS(x, P##_set1_ps(GELU_ZERO_BELOW)),                 \
                      P##_setzero_ps(), y);                                  \
    }

#define LESS16(a, b) _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ)
#define SELECT16(c, a, b) _mm512_mask_blend_ps(c, b, a)
#define LESS8(a, b) _mm256_cmp_ps(a, b, _CMP_LT_OQ)
#define SELECT8(c, a, b) _mm256_blendv_ps(b, a, c)

GELU_VECTOR(gelu16, "avx512f", __m512, _mm512, dfg_exp16, LESS16, SELECT16)
GELU_VECTOR(gelu8, "avx2,fma", __m256, _mm256, dfg_exp8, LESS8, SELECT8)

DFG_VECTOR_LOOP16(gelu_16, gelu16)
DFG_VECTOR_LOOP8(gelu_8, gelu8, gelu_one)
#endif

static const dfg_cpu_vector_loop gelu_loop = {
#ifdef DFG_GELU_X86
    gelu_16, gelu_8,
#else
    NULL, NULL,
#endif
    gelu_one};

void dfg_cpu_gelu_erf_f32_width(float *y, int64_t n, int w)
{
    dfg_cpu_vector_run(&gelu_loop, y, n, w);
}

void dfg_cpu_gelu_erf_f32(float *y, int64_t n)
{
    dfg_cpu_gelu_erf_f32_width(y, n, dfg_cpu_vector_width());
}
