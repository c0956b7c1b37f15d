/* The loops a step runs over a primitive's output after the primitive
 * (silu_vector.h, gelu_vector.h) come in three variants, 16 floats
 * (AVX-512F), 8 (AVX2 with FMA) and one at a time (any x86-64 CPU): which
 * one this CPU runs, and one variant spread over the threads. */
#ifndef DFG_CPU_VECTOR_DISPATCH_H
#define DFG_CPU_VECTOR_DISPATCH_H

#include <stdint.h>

/* The widest variant this CPU runs (16, 8 or 1 floats), chosen once per
 * process from the ISA oneDNN runs at (so ONEDNN_MAX_CPU_ISA, the
 * diagnostic cap, lowers it too). */
int dfg_cpu_vector_width(void);

/* One loop in place over y[0, n), per width; a width this build has no
 * variant of is NULL (the compiler is not GCC or clang on x86-64). */
typedef void (*dfg_cpu_vector_fn)(float *y, int64_t n);
typedef struct dfg_cpu_vector_loop {
    dfg_cpu_vector_fn w16, w8, w1;
} dfg_cpu_vector_loop;

/* Runs loop's variant of `width` floats (one this CPU has, as
 * dfg_cpu_vector_width says) over y[0, n), spread over the OpenMP
 * threads when n is large. */
void dfg_cpu_vector_run(const dfg_cpu_vector_loop *loop, float *y, int64_t n,
                        int width);

#endif
