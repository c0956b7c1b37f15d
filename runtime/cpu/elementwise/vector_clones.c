/* The vector width dfg's loops run at (vector_clones.h). */
#include "runtime/cpu/elementwise/vector_clones.h"

#include <dnnl.h>
#include <pthread.h>

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
