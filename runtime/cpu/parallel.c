#include "parallel.h"

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
