/* silu over f32 with AVX-512 and AVX2 variants (silu_vector.h). Each
 * computes x / (1 + e^-x), with e^-x as Cephes' expf does it
 * (vector_intrinsics.h) on -x clamped to [-87, 88], where 2^n is a normal float: past
 * -87, 1 + e^-x rounds to 1; x below -88 gives 0 (x e^x, the true value,
 * is under 2^-120 there), where the clamped quotient would be x / e^88.
 * The division is IEEE's (no faster here than a reciprocal estimate and
 * its Newton step). The loop without vectors is x sigmoid(x). */
#include "runtime/cpu/elementwise/silu_vector.h"

#include "runtime/cpu/elementwise/f32_math.h"
#include "runtime/cpu/elementwise/vector_clones.h"
#include "runtime/cpu/elementwise/vector_dispatch.h"
#include "runtime/cpu/elementwise/vector_intrinsics.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define DFG_SILU_X86 1
#endif

/* Below this x e^x is under 2^-120 (and e^-x overflows): silu gives 0. */
#define SILU_ZERO_BELOW (-88.0f)

/* The loop without intrinsics, vectorized by the compiler where it can
 * (SSE2 on any x86-64 CPU); the vector variants' tails. */
DFG_VECTOR_CLONES static void silu_one(float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = y[i] < SILU_ZERO_BELOW ? 0.0f : y[i] * dfg_f32_sigmoid(y[i]);
}

#ifdef DFG_SILU_X86
/* The loop body once for both widths: V the vector type, P the
 * intrinsics' prefix (_mm512, _mm256), EXP vector_intrinsics.h's function of
 * that width; FINISH(x, d) is x / d, 0 where x is below SILU_ZERO_BELOW
 * (unordered passes: NaN / d stays NaN). -x is 0 - x (the sign of a zero
 * is lost in the clamp anyway). */
#define SILU_VECTOR(NAME, TARGET, V, P, EXP, FINISH)                         \
    __attribute__((target(TARGET))) static inline V NAME(V x)                \
    {                                                                        \
        V t = P##_min_ps(P##_max_ps(P##_sub_ps(P##_setzero_ps(), x),         \
                                    P##_set1_ps(-87.0f)),                    \
                         P##_set1_ps(88.0f));                                \
        V scale;                                                             \
        V p = EXP(t, &scale);                                                \
        return FINISH(x, P##_fmadd_ps(p, scale, P##_set1_ps(1.0f)));        \
    }

#define FINISH16(x, d)                                                       \
    _mm512_maskz_div_ps(_mm512_cmp_ps_mask(x,                                \
                                           _mm512_set1_ps(SILU_ZERO_BELOW),  \
                                           _CMP_NLT_UQ),                     \
                        x, d)
#define FINISH8(x, d)                                                        \
    _mm256_and_ps(                                                           \
        _mm256_cmp_ps(x, _mm256_set1_ps(SILU_ZERO_BELOW), _CMP_NLT_UQ),      \
        _mm256_div_ps(x, d))

SILU_VECTOR(silu16, "avx512f", __m512, _mm512, dfg_exp16, FINISH16)
SILU_VECTOR(silu8, "avx2,fma", __m256, _mm256, dfg_exp8, FINISH8)

DFG_VECTOR_LOOP16(silu_16, silu16)
DFG_VECTOR_LOOP8(silu_8, silu8, silu_one)
#endif

static const dfg_cpu_vector_loop silu_loop = {
#ifdef DFG_SILU_X86
    silu_16, silu_8,
#else
    NULL, NULL,
#endif
    silu_one};

void dfg_cpu_silu_f32_width(float *y, int64_t n, int w)
{
    dfg_cpu_vector_run(&silu_loop, y, n, w);
}

void dfg_cpu_silu_f32(float *y, int64_t n)
{
    dfg_cpu_silu_f32_width(y, n, dfg_cpu_vector_width());
}
