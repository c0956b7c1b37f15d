/* Driver, device and kernel image checks (see device_support.h). */
#include "runtime/cuda/plan/device_support.h"

#include <stdio.h>

/* A cubin built for sm_XY runs on X.Y and later minors of major X. */
static int has_cubin(const dfg_cuda_build_targets *t, int major, int minor)
{
    for (int i = 0; i < t->n_sm; i++)
        if (t->sm[i] / 10 == major && t->sm[i] % 10 <= minor)
            return 1;
    return 0;
}

static void list_targets(const dfg_cuda_build_targets *t, char *out,
                         size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < t->n_sm && used < size; i++)
        used += (size_t)snprintf(out + used, size - used, "%ssm_%d",
                                 i ? ", " : "", t->sm[i]);
    if (t->ptx > 0 && used < size)
        snprintf(out + used, size - used, "%sPTX compute_%d",
                 t->n_sm ? ", " : "", t->ptx);
}

int dfg_cuda_platform_supported(const dfg_cuda_platform *p,
                                const dfg_cuda_build_targets *t, char *why,
                                size_t size)
{
    int rt_major = p->runtime_version / 1000;
    int rt_minor = p->runtime_version % 1000 / 10;
    if (p->driver_version <= 0) {
        snprintf(why, size, "no CUDA driver (libcuda.so.1 is not installed "
                 "or does not load)");
        return 0;
    }
    int drv_major = p->driver_version / 1000;
    int drv_minor = p->driver_version % 1000 / 10;
    /* Within a major version, CUDA's minor version compatibility lets
     * cubins built with a newer toolkit run on an older driver. */
    if (drv_major < rt_major) {
        snprintf(why, size, "the CUDA driver supports CUDA %d.%d, older than "
                 "the CUDA %d.%d this backend was built with: install a "
                 "driver for CUDA %d or newer",
                 drv_major, drv_minor, rt_major, rt_minor, rt_major);
        return 0;
    }
    if (p->device_count <= 0) {
        snprintf(why, size, "no CUDA device");
        return 0;
    }
    if (has_cubin(t, p->major, p->minor))
        return 1;
    char built[128];
    list_targets(t, built, sizeof built);
    int cc = p->major * 10 + p->minor;
    if (t->ptx <= 0 || cc < t->ptx) {
        snprintf(why, size, "the GPU is sm_%d and this build has kernels for "
                 "%s only", cc, built);
        return 0;
    }
    /* PTX from a newer toolkit than the driver's cannot be compiled. */
    if (p->driver_version < p->runtime_version) {
        snprintf(why, size, "the GPU is sm_%d, which runs this build's PTX "
                 "compute_%d only through a driver for CUDA %d.%d or newer "
                 "(this one supports %d.%d)", cc, t->ptx, rt_major, rt_minor,
                 drv_major, drv_minor);
        return 0;
    }
    return 1;
}
