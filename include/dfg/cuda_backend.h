/* The CUDA backend in a program that links libdfg statically.
 *
 * With the shared libdfg, the CUDA backend is a module, libdfg-cuda.so,
 * installed beside libdfg and opened the first time dfg_backend_find()
 * is asked for "cuda": nothing to call. A program that links libdfg.a
 * links the module's archive too (`pkg-config --static --libs dfg-cuda`:
 * libdfg-cuda.a, the CUDA runtime and cuBLAS) and calls this once before
 * asking for "cuda". Defined in libdfg-cuda only. */
#ifndef DFG_CUDA_BACKEND_H
#define DFG_CUDA_BACKEND_H

#include "dfg/status.h"

#ifdef __cplusplus
extern "C" {
#endif

dfg_status dfg_cuda_backend_register(void);

#ifdef __cplusplus
}
#endif
#endif
