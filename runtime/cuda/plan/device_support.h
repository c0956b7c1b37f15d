/* Whether this build's CUDA backend can run on a machine: a driver new
 * enough for the toolkit it was built with, a device, and a kernel image
 * for that device (a cubin of its architecture, or PTX the driver can
 * compile). Plain C over the numbers the CUDA runtime reports, so that the
 * CPU tests check every case. */
#ifndef DFG_CUDA_DEVICE_SUPPORT_H
#define DFG_CUDA_DEVICE_SUPPORT_H

#include <stddef.h>

typedef struct dfg_cuda_platform {
    int driver_version;  /* cudaDriverGetVersion: 1000 major + 10 minor;
                            0 without a driver */
    int runtime_version; /* cudaRuntimeGetVersion: the toolkit's */
    int device_count;
    int major, minor;    /* compute capability of the device to use */
} dfg_cuda_platform;

/* What the kernels were compiled for (nvcc's -gencode list): cubins for
 * the architectures in sm (e.g. 80 and 90) and PTX for `ptx` (e.g. 90; 0
 * for none). */
typedef struct dfg_cuda_build_targets {
    const int *sm;
    int n_sm;
    int ptx;
} dfg_cuda_build_targets;

/* 1 if sessions can run; else 0 with the reason, one line naming what is
 * missing and what to do, in why (NUL-terminated, truncated to size). */
int dfg_cuda_platform_supported(const dfg_cuda_platform *platform,
                                const dfg_cuda_build_targets *targets,
                                char *why, size_t size);

#endif
