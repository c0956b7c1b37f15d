/* Spreading a CPU kernel's elements over OpenMP threads. Below
 * DFG_CPU_PARALLEL_MIN_ELEMENTS elements the fork/join costs more than it
 * saves, so small tensors run on the calling thread. */
#ifndef DFG_CPU_PARALLEL_H
#define DFG_CPU_PARALLEL_H

#include <stdint.h>

#define DFG_CPU_PARALLEL_MIN_ELEMENTS 32768

/* Handles elements [start, start + count). */
typedef void (*dfg_cpu_range_fn)(void *ctx, int64_t start, int64_t count);

/* Calls fn over [0, n) in consecutive ranges of at most `range` elements,
 * in parallel when n is large. */
void dfg_cpu_parallel_ranges(int64_t n, int64_t range, dfg_cpu_range_fn fn,
                             void *ctx);

#endif
