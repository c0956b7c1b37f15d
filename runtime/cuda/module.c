/* The CUDA backend as a module: what libdfg looks up after opening
 * libdfg-cuda.so (runtime/backend_registry.c), and the registration a
 * program that links libdfg statically calls instead. */
#include "dfg/cuda_backend.h"
#include "runtime/backend.h"

/* Exported under DFG_BACKEND_MODULE_SYMBOL. */
const dfg_backend_module dfg_backend_module_info = {
    .version = DFG_VERSION_STRING,
    .backend = &dfg_cuda_backend,
    .find = dfg_backend_find,
};

dfg_status dfg_cuda_backend_register(void)
{
    return dfg_backend_register(&dfg_cuda_backend);
}
