/* The CPU threading policy and parallel helpers (see parallel.h). */
#include "runtime/cpu/parallel.h"

#include <cblas.h>
#include <omp.h>
#include <pthread.h>

static pthread_once_t threading_once = PTHREAD_ONCE_INIT;

static void blas_single_threaded(void) { openblas_set_num_threads(1); }

void dfg_cpu_threading_init(void)
{
    pthread_once(&threading_once, blas_single_threaded);
}

void dfg_cpu_parallel_ranges(int64_t n, int64_t range, dfg_cpu_range_fn fn,
                             void *ctx)
{
    int64_t ranges = (n + range - 1) / range;
#pragma omp parallel for if (n > DFG_CPU_PARALLEL_MIN_ELEMENTS) schedule(static)
    for (int64_t r = 0; r < ranges; r++) {
        int64_t start = r * range;
        fn(ctx, start, n - start < range ? n - start : range);
    }
}

void dfg_cpu_team_share(int64_t n, int64_t align, int64_t *start,
                        int64_t *end)
{
    int64_t threads = omp_get_num_threads(), me = omp_get_thread_num();
    int64_t units = (n + align - 1) / align;
    int64_t per = units / threads, extra = units % threads;
    int64_t first = me * per + (me < extra ? me : extra);
    int64_t count = per + (me < extra);
    *start = first * align < n ? first * align : n;
    *end = (first + count) * align < n ? (first + count) * align : n;
}
