/* Attention on cuDNN 9's fused scaled dot-product attention (its backend
 * graph API, as its "flash attention forward" pattern reads it), for the
 * steps attention_mapping.h lets it take. The graph, its execution plan
 * (the first of cuDNN's heuristic engines that finalizes within the
 * step's workspace) and its variant pack (the step's pointers, fixed at
 * session creation) are made once, when the session prepares its steps.
 * Module-internal; built with the 'cudnn' feature only (dnn.c calls
 * it). */
#ifndef DFG_CUDA_DNN_ATTENTION_H
#define DFG_CUDA_DNN_ATTENTION_H

#include <cudnn.h>

#include "dfg/allocator.h"
#include "runtime/cuda/plan/attention_mapping.h"

typedef struct dfg_cuda_sdpa_plan dfg_cuda_sdpa_plan;

/* *out: the plan of step a (described by sdpa), running in workspace
 * (bytes of it); NULL with *why when cuDNN has no engine for it here (the
 * unfused steps then run it). An error only when memory runs out. */
dfg_status dfg_cuda_sdpa_build(cudnnHandle_t handle,
                               const dfg_allocator *allocator,
                               const dfg_cuda_sdpa *sdpa,
                               const dfg_step_args *a, void *workspace,
                               size_t bytes, dfg_cuda_sdpa_plan **out,
                               const char **why);
/* Queues the plan on the handle's stream. */
cudnnStatus_t dfg_cuda_sdpa_run(cudnnHandle_t handle,
                                const dfg_cuda_sdpa_plan *plan);
void dfg_cuda_sdpa_free(const dfg_allocator *allocator,
                        dfg_cuda_sdpa_plan *plan);

#endif
