/* DFG_VECTOR_CLONES before a function with vectorized loops compiles it
 * three times, for the baseline x86-64 (SSE2, 4 floats), for AVX2 (8
 * floats) and for AVX-512F (16), and picks one when the library loads,
 * by the CPU it runs on (GCC's and clang's target_clones, an ifunc): one
 * binary for every x86-64 CPU, nothing to set. All three compute the same
 * bits: the build never contracts a * b + c into a fused multiply-add
 * (-ffp-contract=off, meson.build), which AVX-512F has and the others do
 * not, and no clone reassociates. */
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
#define DFG_VECTOR_CLONES \
    __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define DFG_VECTOR_CLONES
#endif

#endif
