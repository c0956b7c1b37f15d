/* How much more this CPU multiplies and adds on 16-float vectors than on
 * 8-float ones (dfg_cpu_wide_vector_speedup, cpu_layout_rule.h): some
 * CPUs run a 512-bit instruction as two 256-bit halves (no faster per
 * float), others in one go (twice as fast). No flag tells which, so it is
 * measured once per process: eight independent chains of fused
 * multiply-adds, enough to keep two pipelines busy, on each width. */
#include "runtime/cpu_layout_rule.h"

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DFG_SPEEDUP_X86 1
#endif

/* Iterations of one timed loop, and the timed pairs of loops, of which
 * each width's fastest counts. */
#define ITERATIONS 32768
#define ROUNDS 5

static volatile float sink;

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#ifdef DFG_SPEEDUP_X86
/* The seconds ITERATIONS rounds of eight 8-float (16-float) FMA chains
 * take. */
#define FMA_CHAINS(NAME, TARGET, V, SET1, FMA, ADD, LOW)                     \
    __attribute__((target(TARGET))) static double NAME(void)               \
    {                                                                      \
        V a = SET1(0.999f), b = SET1(1e-6f);                               \
        V c0 = SET1(1.0f), c1 = SET1(2.0f), c2 = SET1(3.0f),              \
          c3 = SET1(4.0f), c4 = SET1(5.0f), c5 = SET1(6.0f),              \
          c6 = SET1(7.0f), c7 = SET1(8.0f);                               \
        double t = seconds();                                              \
        for (int i = 0; i < ITERATIONS; i++) {                             \
            c0 = FMA(c0, a, b), c1 = FMA(c1, a, b), c2 = FMA(c2, a, b);    \
            c3 = FMA(c3, a, b), c4 = FMA(c4, a, b), c5 = FMA(c5, a, b);    \
            c6 = FMA(c6, a, b), c7 = FMA(c7, a, b);                        \
        }                                                                  \
        t = seconds() - t;                                                 \
        V s = ADD(ADD(ADD(c0, c1), ADD(c2, c3)), ADD(ADD(c4, c5), ADD(c6, c7))); \
        sink = LOW(s);                                                     \
        return t;                                                          \
    }

FMA_CHAINS(chains_8, "avx2,fma", __m256, _mm256_set1_ps, _mm256_fmadd_ps,
           _mm256_add_ps, _mm256_cvtss_f32)
FMA_CHAINS(chains_16, "avx512f", __m512, _mm512_set1_ps, _mm512_fmadd_ps,
           _mm512_add_ps, _mm512_cvtss_f32)
#endif

static double speedup = 1.0;

static void measure(void)
{
#ifdef DFG_SPEEDUP_X86
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("fma"))
        return;
    double best8 = 1e9, best16 = 1e9;
    for (int r = 0; r < ROUNDS; r++) {
        double t8 = chains_8(), t16 = chains_16();
        best8 = t8 < best8 ? t8 : best8;
        best16 = t16 < best16 ? t16 : best16;
    }
    /* twice the floats in best16 */
    double s = best16 > 0.0 ? 2.0 * best8 / best16 : 1.0;
    speedup = s < 1.0 ? 1.0 : s > 2.0 ? 2.0 : s;
#endif
}

double dfg_cpu_wide_vector_speedup(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, measure);
    return speedup;
}
