/* DFG_VECTOR_CLONES before a function with vectorized loops compiles it
 * twice, for the baseline x86-64 (SSE2, 4 floats) and for AVX2 (8
 * floats), and picks one when the library loads, by the CPU it runs on
 * (GCC's and clang's target_clones, an ifunc): one binary for every x86-64
 * CPU, nothing to set. Both clones compute the same bits: the AVX2 target
 * has no FMA to contract a * b + c into, and neither clone reassociates. */
#ifndef DFG_CPU_VECTOR_CLONES_H
#define DFG_CPU_VECTOR_CLONES_H

/* Not under ThreadSanitizer: it instruments the clone resolver, which
 * the dynamic loader runs before the sanitizer's runtime is set up. */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DFG_THREAD_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define DFG_THREAD_SANITIZER 1
#endif

#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__) && \
    !defined(DFG_THREAD_SANITIZER)
#define DFG_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
/* With an AVX-512 clone too (16 floats), for loops with no product a
 * compiler could contract into a fused multiply-add (AVX-512F has one,
 * unlike the AVX2 target): maxima, compares, sums. All three clones then
 * compute the same bits. */
#define DFG_VECTOR_CLONES_512 \
    __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define DFG_VECTOR_CLONES
#define DFG_VECTOR_CLONES_512
#endif

#endif
