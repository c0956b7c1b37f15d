/* The CPU backend's threading policy, and helpers that spread a kernel's
 * work over OpenMP threads.
 *
 * Policy: OpenMP is the one thread pool; OpenBLAS runs single-threaded on
 * whichever thread calls it, and products large enough to share are split
 * by us into one sgemm per OpenMP thread (gemm_mixed.c). Why: with both
 * libraries threaded, the OpenMP workers keep spinning after each of our
 * parallel loops (libgomp's default wait policy, fixed when the process
 * starts: OMP_WAIT_POLICY / GOMP_SPINCOUNT cannot be changed from inside
 * the library) while OpenBLAS's own workers wake up for the next sgemm, so
 * on a 2-core machine each sgemm ran several times slower against
 * spinning threads; and one pool lets a kernel run the im2col of a chunk
 * and its product in the same parallel region (docs/BENCHMARKS.md has the
 * measurements of each policy).
 *
 * The number of threads is OpenMP's (OMP_NUM_THREADS, or the cores). */
#ifndef DFG_CPU_PARALLEL_H
#define DFG_CPU_PARALLEL_H

#include <stdint.h>

/* Below this many elements the fork/join costs more than it saves, so
 * small tensors run on the calling thread. */
#define DFG_CPU_PARALLEL_MIN_ELEMENTS 32768

/* Below this many multiply-adds a product runs on one thread. */
#define DFG_CPU_PARALLEL_MIN_MACS 262144

/* Applies the policy above (OpenBLAS single-threaded) once per process;
 * cheap to call again. It changes OpenBLAS's global thread count, which a
 * host program sharing the library sees too. */
void dfg_cpu_threading_init(void);

/* Handles elements [start, start + count). */
typedef void (*dfg_cpu_range_fn)(void *ctx, int64_t start, int64_t count);

/* Calls fn over [0, n) in consecutive ranges of at most `range` elements,
 * in parallel when n is large. */
void dfg_cpu_parallel_ranges(int64_t n, int64_t range, dfg_cpu_range_fn fn,
                             void *ctx);

/* This thread's share [*start, *end) of [0, n) in the current OpenMP team
 * (all of it outside a parallel region), in multiples of `align` except
 * for the last share. */
void dfg_cpu_team_share(int64_t n, int64_t align, int64_t *start,
                        int64_t *end);

#endif
