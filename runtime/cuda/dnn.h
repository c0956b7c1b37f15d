/* Convolutions on cuDNN (dnn.c; dnn_none.c in a build without the
 * 'cudnn' feature): a session's handle on its stream, and for each
 * convolution step cuDNN takes (dnn_mapping.h), its descriptors and an
 * algorithm chosen once, when the session prepares its steps, among
 * cuDNN's heuristic candidates: deterministic (runs give identical bits,
 * with CUDA graphs or without), strict FP32 math for f32 (no TF32, as
 * the CPU reference), within the workspace the step is given (its
 * planned workspace in the arena or the session's, whichever is larger).
 * A step cuDNN does not take keeps the backend's own path (im2col and
 * cuBLAS). Module-internal. */
#ifndef DFG_CUDA_DNN_H
#define DFG_CUDA_DNN_H

#include <cuda_runtime_api.h>

#include "dfg/allocator.h"
#include "runtime/cuda/plan/step_plan_types.h"

typedef struct dfg_cuda_dnn dfg_cuda_dnn;

/* *out: a handle on stream, or NULL (no cuDNN in the build, or
 * DFG_CUDA_CUDNN=0: dnn_mapping.h). An error if cuDNN is there but fails. */
dfg_status dfg_cuda_dnn_create(const dfg_allocator *allocator,
                               cudaStream_t stream, dfg_cuda_dnn **out);
void dfg_cuda_dnn_destroy(const dfg_allocator *allocator, dfg_cuda_dnn *dnn);

/* Sets plan->dnn when cuDNN takes the step (dnn may be NULL: it takes
 * none): a convolution, or an attention step on cuDNN's fused attention
 * (dnn_attention.h); else plan->dnn_why for a convolution or an attention
 * step it leaves to the backend's own path; workspace and bytes are what
 * it may use. */
dfg_status dfg_cuda_dnn_take(dfg_cuda_dnn *dnn, const dfg_allocator *allocator,
                             dfg_cuda_step_plan *plan, void *workspace,
                             size_t bytes);
/* Queues a step whose plan->dnn is set. */
dfg_status dfg_cuda_dnn_run(dfg_cuda_dnn *dnn, const dfg_cuda_step_plan *plan,
                            cudaStream_t stream);
/* Frees plan->dnn (and its descriptors) if set. */
void dfg_cuda_dnn_release(const dfg_allocator *allocator,
                          dfg_cuda_step_plan *plan);

#endif
