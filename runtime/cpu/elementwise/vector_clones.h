/* dfg's vectorized loops, compiled once per vector width and chosen at
 * run time.
 *
 *     DFG_VECTOR_LOOP(scale, (const float *x, float k, int64_t n, float *y),
 *                     (x, k, n, y))
 *     {
 *         for (int64_t i = 0; i < n; i++)
 *             y[i] = k * x[i];
 *     }
 *
 * defines a static function `scale` whose body the compiler builds three
 * times: for AVX-512F (16 floats), for AVX2 (8) and for the baseline
 * x86-64 (SSE2, 4). Each call runs the build dfg_cpu_vector_width names:
 * one binary for every x86-64 CPU, nothing to set for speed, and the ISA
 * cap for tests and diagnostics (ONEDNN_MAX_CPU_ISA) reaches these loops
 * as it reaches oneDNN. All three compute the same bits: the build never
 * contracts a * b + c into a fused multiply-add (-ffp-contract=off,
 * meson.build), which AVX-512F has and the others do not, and no build
 * reassociates. DFG_VECTOR_LOOP_RETURNING(type, ...) is the same for a
 * function returning type. Elsewhere than x86-64 with GCC or clang the
 * body is built once. */
#ifndef DFG_CPU_VECTOR_CLONES_H
#define DFG_CPU_VECTOR_CLONES_H

/* The vector width dfg's loops run at in this process: 16 floats where
 * the CPU has AVX-512F and oneDNN runs at avx512_core or above, 8 where
 * it has AVX2 and FMA and oneDNN runs at avx2 or above, else 1 (the
 * baseline build, which the compiler vectorizes with SSE2 where it can).
 * oneDNN's effective ISA is the CPU's own unless ONEDNN_MAX_CPU_ISA caps
 * it. Chosen once per process. */
int dfg_cpu_vector_width(void);

#if defined(__x86_64__) && defined(__GNUC__)

/* Calls wide (AVX-512F's build), avx2 (AVX2's) or base (the baseline's)
 * on args, as dfg_cpu_vector_width says; ret: `return` or nothing. For a
 * loop whose builds differ in more than their target (vectors of the
 * build's own width), written by hand. */
#define DFG_VECTOR_CALL(ret, wide, avx2, base, args)                        \
    do {                                                                    \
        int w_ = dfg_cpu_vector_width();                                    \
        if (w_ == 16)                                                       \
            ret wide args;                                                  \
        else if (w_ == 8)                                                   \
            ret avx2 args;                                                  \
        else                                                                \
            ret base args;                                                  \
    } while (0)

#define DFG_VECTOR_DISPATCH_(type, ret, name, params, args)                 \
    static inline __attribute__((always_inline)) type name##_body params;   \
    __attribute__((target("avx512f"))) static type name##_avx512f params    \
    {                                                                       \
        ret name##_body args;                                               \
    }                                                                       \
    __attribute__((target("avx2"))) static type name##_avx2 params          \
    {                                                                       \
        ret name##_body args;                                               \
    }                                                                       \
    static type name##_sse2 params                                          \
    {                                                                       \
        ret name##_body args;                                               \
    }                                                                       \
    static type name params                                                 \
    {                                                                       \
        DFG_VECTOR_CALL(ret, name##_avx512f, name##_avx2, name##_sse2,      \
                        args);                                              \
    }                                                                       \
    static inline __attribute__((always_inline)) type name##_body params

#define DFG_VECTOR_LOOP(name, params, args) \
    DFG_VECTOR_DISPATCH_(void, , name, params, args)
#define DFG_VECTOR_LOOP_RETURNING(type, name, params, args) \
    DFG_VECTOR_DISPATCH_(type, return, name, params, args)

#else

#define DFG_VECTOR_CALL(ret, wide, avx2, base, args) \
    do {                                             \
        ret base args;                               \
    } while (0)
#define DFG_VECTOR_LOOP(name, params, args) static void name params
#define DFG_VECTOR_LOOP_RETURNING(type, name, params, args) \
    static type name params

#endif

#endif
