/* dnn.h in a build without cuDNN: no handle, every convolution on the
 * backend's own path. */
#include "runtime/cuda/dnn.h"

#include "util/error.h"

dfg_status dfg_cuda_dnn_create(const dfg_allocator *allocator,
                               cudaStream_t stream, dfg_cuda_dnn **out)
{
    (void)allocator;
    (void)stream;
    *out = NULL;
    return DFG_OK;
}

void dfg_cuda_dnn_destroy(const dfg_allocator *allocator, dfg_cuda_dnn *dnn)
{
    (void)allocator;
    (void)dnn;
}

dfg_status dfg_cuda_dnn_take(dfg_cuda_dnn *dnn, const dfg_allocator *allocator,
                             dfg_cuda_step_plan *plan, void *workspace,
                             size_t bytes)
{
    (void)dnn;
    (void)allocator;
    (void)workspace;
    (void)bytes;
    plan->dnn = NULL;
    if (plan->kind == DFG_CUDA_CONV2D ||
        plan->kind == DFG_CUDA_CONV_GRAD_INPUT ||
        plan->kind == DFG_CUDA_CONV_GRAD_WEIGHT)
        plan->dnn_why = "this build has no cuDNN";
    return DFG_OK;
}

dfg_status dfg_cuda_dnn_run(dfg_cuda_dnn *dnn, const dfg_cuda_step_plan *plan,
                            cudaStream_t stream)
{
    (void)dnn;
    (void)stream;
    (void)plan;
    return dfg_error(DFG_ERR_INTERNAL, "cuda backend: a cuDNN step in a "
                     "build without cuDNN");
}

void dfg_cuda_dnn_release(const dfg_allocator *allocator,
                          dfg_cuda_step_plan *plan)
{
    (void)allocator;
    plan->dnn = NULL;
}
