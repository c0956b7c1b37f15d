/* blas_lt.h in a build without cuBLASLt: no handle, every product on
 * cuBLAS with the epilogue kernel. */
#include "runtime/cuda/blas_lt.h"

#include "util/error.h"

dfg_status dfg_cuda_lt_create(const dfg_allocator *allocator,
                              dfg_cuda_lt **out)
{
    (void)allocator;
    *out = NULL;
    return DFG_OK;
}

void dfg_cuda_lt_destroy(const dfg_allocator *allocator, dfg_cuda_lt *lt)
{
    (void)allocator;
    (void)lt;
}

dfg_status dfg_cuda_lt_take(dfg_cuda_lt *lt, const dfg_allocator *allocator,
                            dfg_cuda_step_plan *plan)
{
    (void)lt;
    (void)allocator;
    plan->lt = NULL;
    if (plan->lt_form.epilogue != DFG_CUDA_LT_OFF)
        plan->lt_why = "this build has no cuBLASLt";
    return DFG_OK;
}

dfg_status dfg_cuda_lt_run(dfg_cuda_lt *lt, const dfg_cuda_step_plan *plan,
                           cudaStream_t stream)
{
    (void)lt;
    (void)plan;
    (void)stream;
    return dfg_error(DFG_ERR_INTERNAL, "cuda backend: a cuBLASLt step in a "
                     "build without cuBLASLt");
}

void dfg_cuda_lt_release(const dfg_allocator *allocator,
                         dfg_cuda_step_plan *plan)
{
    (void)allocator;
    plan->lt = NULL;
}
