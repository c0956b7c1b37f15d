/* Which vector variant runs, and over which threads (vector_dispatch.h). */
#include "runtime/cpu/elementwise/vector_dispatch.h"

#include <dnnl.h>
#include <pthread.h>

#include "runtime/cpu/parallel.h"

static int width;
static pthread_once_t width_once = PTHREAD_ONCE_INIT;

static void width_find(void)
{
    width = 1;
#if defined(__x86_64__) && defined(__GNUC__)
    unsigned have = (unsigned)dnnl_get_effective_cpu_isa();
    unsigned avx512 = (unsigned)dnnl_cpu_isa_avx512_core,
             avx2 = (unsigned)dnnl_cpu_isa_avx2;
    __builtin_cpu_init();
    if ((have & avx512) == avx512 && __builtin_cpu_supports("avx512f"))
        width = 16;
    else if ((have & avx2) == avx2 && __builtin_cpu_supports("avx2") &&
             __builtin_cpu_supports("fma"))
        width = 8;
#endif
}

int dfg_cpu_vector_width(void)
{
    pthread_once(&width_once, width_find);
    return width;
}

typedef struct vector_job {
    float *y;
    dfg_cpu_vector_fn fn;
} vector_job;

static void vector_range(void *ctx, int64_t start, int64_t count)
{
    const vector_job *job = ctx;
    job->fn(job->y + start, count);
}

/* A thread's range: whole cache lines, a few thousand floats each. */
#define VECTOR_RANGE 4096

void dfg_cpu_vector_run(const dfg_cpu_vector_loop *loop, float *y, int64_t n,
                        int w)
{
    dfg_cpu_vector_fn fn = w == 16 && loop->w16 ? loop->w16
                           : w == 8 && loop->w8 ? loop->w8
                                                : loop->w1;
    vector_job job = {y, fn};
    dfg_cpu_parallel_ranges(n, VECTOR_RANGE, vector_range, &job);
}
