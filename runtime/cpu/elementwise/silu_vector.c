/* silu over f32 with AVX-512 and AVX2 variants (silu_vector.h). Each
 * computes x / (1 + e^-x), with e^-x as Cephes' expf does it (f32_math.h:
 * n ln2 + r, a degree-6 polynomial in r, times 2^n from n's exponent
 * bits) on -x clamped to [-87, 88], where 2^n is a normal float: past
 * -87, 1 + e^-x rounds to 1; x below -88 gives 0 (x e^x, the true value,
 * is under 2^-120 there), where the clamped quotient would be x / e^88.
 * The division is IEEE's (no faster here than a reciprocal estimate and
 * its Newton step). The loop without vectors is x sigmoid(x). */
#include "runtime/cpu/elementwise/silu_vector.h"

#include "runtime/cpu/elementwise/f32_math.h"
#include "runtime/cpu/elementwise/vector_clones.h"
#include "runtime/cpu/parallel.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DFG_SILU_X86 1
#endif

/* Cephes' expf coefficients, highest degree first (f32_math.h). */
#define EXP_P0 1.9875691500e-4f
#define EXP_P1 1.3981999507e-3f
#define EXP_P2 8.3334519073e-3f
#define EXP_P3 4.1665795894e-2f
#define EXP_P4 1.6666665459e-1f
#define EXP_P5 5.0000001201e-1f
#define LOG2E 1.44269504088896341f
#define LN2_HI 0.693359375f
#define LN2_LO (-2.12194440e-4f)
/* 1.5 * 2^23: t log2(e) + MAGIC holds round(t log2(e)) in its low bits */
#define MAGIC 12582912.0f
/* Below this x e^x is under 2^-120 (and e^-x overflows): silu gives 0. */
#define SILU_ZERO_BELOW (-88.0f)

/* The loop without intrinsics, vectorized by the compiler where it can
 * (SSE2 on any x86-64 CPU); the vector variants' tails. */
DFG_VECTOR_LOOP(silu_one, (const float *x, float *y, int64_t n),
                (x, y, n))
{
    for (int64_t i = 0; i < n; i++)
        y[i] = x[i] < SILU_ZERO_BELOW ? 0.0f : x[i] * dfg_f32_sigmoid(x[i]);
}

#ifdef DFG_SILU_X86
/* The loop body once for both widths: V the vector type, P the
 * intrinsics' prefix (_mm512, _mm256), I the integer vector's name in
 * the casts (si512, si256); FINISH(x, d) is x / d, 0 where x is below
 * SILU_ZERO_BELOW (unordered passes: NaN / d stays NaN). -x is 0 - x (the
 * sign of a zero is lost in the clamp anyway). 2^n comes from n's bits
 * in big (n << 23 drops MAGIC's). */
#define SILU_VECTOR(NAME, TARGET, V, P, I, FINISH)                           \
    __attribute__((target(TARGET))) static inline V NAME(V x)                \
    {                                                                        \
        V t = P##_min_ps(P##_max_ps(P##_sub_ps(P##_setzero_ps(), x),         \
                                    P##_set1_ps(-87.0f)),                    \
                         P##_set1_ps(88.0f));                                \
        V big = P##_fmadd_ps(t, P##_set1_ps(LOG2E), P##_set1_ps(MAGIC));     \
        V n = P##_sub_ps(big, P##_set1_ps(MAGIC));                           \
        V r = P##_fnmadd_ps(n, P##_set1_ps(LN2_HI), t);                      \
        r = P##_fnmadd_ps(n, P##_set1_ps(LN2_LO), r);                        \
        V p = P##_set1_ps(EXP_P0);                                           \
        p = P##_fmadd_ps(p, r, P##_set1_ps(EXP_P1));                         \
        p = P##_fmadd_ps(p, r, P##_set1_ps(EXP_P2));                         \
        p = P##_fmadd_ps(p, r, P##_set1_ps(EXP_P3));                         \
        p = P##_fmadd_ps(p, r, P##_set1_ps(EXP_P4));                         \
        p = P##_fmadd_ps(p, r, P##_set1_ps(EXP_P5));                         \
        p = P##_fmadd_ps(p, P##_mul_ps(r, r),                                \
                         P##_add_ps(r, P##_set1_ps(1.0f)));                  \
        V scale = P##_cast##I##_ps(                                          \
            P##_add_epi32(P##_slli_epi32(P##_castps_##I(big), 23),           \
                          P##_set1_epi32(127 << 23)));                       \
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

SILU_VECTOR(silu16, "avx512f", __m512, _mm512, si512, FINISH16)
SILU_VECTOR(silu8, "avx2,fma", __m256, _mm256, si256, FINISH8)

__attribute__((target("avx512f"))) static void silu_16(const float *x,
                                                       float *y, int64_t n)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, silu16(_mm512_loadu_ps(x + i)));
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(y + i, m,
                              silu16(_mm512_maskz_loadu_ps(m, x + i)));
    }
}

__attribute__((target("avx2,fma"))) static void silu_8(const float *x,
                                                       float *y, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, silu8(_mm256_loadu_ps(x + i)));
    silu_one(x + i, y + i, n - i);
}
#endif

typedef struct silu_job {
    const float *x;
    float *y;
    int width;
} silu_job;

static void silu_range(void *ctx, int64_t start, int64_t count)
{
    const silu_job *job = ctx;
    const float *x = job->x + start;
    float *y = job->y + start;
#ifdef DFG_SILU_X86
    if (job->width == 16) {
        silu_16(x, y, count);
        return;
    }
    if (job->width == 8) {
        silu_8(x, y, count);
        return;
    }
#endif
    silu_one(x, y, count);
}

/* A thread's range: whole cache lines, a few thousand floats each. */
#define SILU_RANGE 4096

void dfg_cpu_silu_f32_width(const float *x, float *y, int64_t n, int w)
{
    silu_job job = {x, y, w};
    dfg_cpu_parallel_ranges(n, SILU_RANGE, silu_range, &job);
}

void dfg_cpu_silu_f32(const float *x, float *y, int64_t n)
{
    dfg_cpu_silu_f32_width(x, y, n, dfg_cpu_vector_width());
}
