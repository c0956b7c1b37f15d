/* Matrix products with their epilogue fused on cuBLASLt (blas_lt.c;
 * blas_lt_none.c in a build without libcublasLt): a session's handle, and
 * for each matmul or gemm step whose form cuBLASLt takes (lt_mapping.h)
 * its descriptors and an algorithm chosen once, when the session prepares
 * its steps, among cuBLASLt's heuristic candidates, within the step's
 * cuBLAS workspace (its planned one or the session's). f32 computes as
 * blas.h's products do: strict FP32 unless the step allows TF32. A step
 * cuBLASLt does not take keeps cuBLAS and the epilogue kernel, with the
 * reason in plan->lt_why. Module-internal. */
#ifndef DFG_CUDA_BLAS_LT_H
#define DFG_CUDA_BLAS_LT_H

#include <cuda_runtime_api.h>

#include "dfg/allocator.h"
#include "runtime/cuda/plan/step_plan_types.h"

typedef struct dfg_cuda_lt dfg_cuda_lt;

/* *out: a handle, or NULL in a build without cuBLASLt. An error if
 * cuBLASLt is there but fails to start. */
dfg_status dfg_cuda_lt_create(const dfg_allocator *allocator,
                              dfg_cuda_lt **out);
void dfg_cuda_lt_destroy(const dfg_allocator *allocator, dfg_cuda_lt *lt);

/* Sets plan->lt when cuBLASLt takes the step, else plan->lt_why where its
 * form was one cuBLASLt has (no cuBLASLt in the build, or its heuristics
 * failed or found no algorithm); lt is dfg_cuda_lt_create's. Reads
 * plan->blas_workspace, which must be final. An error only if cuBLASLt's
 * descriptors cannot be made. */
dfg_status dfg_cuda_lt_take(dfg_cuda_lt *lt, const dfg_allocator *allocator,
                            dfg_cuda_step_plan *plan);
/* Queues a step whose plan->lt is set: the whole product and epilogue (a
 * gemm's C broadcast first where its form copies it). */
dfg_status dfg_cuda_lt_run(dfg_cuda_lt *lt, const dfg_cuda_step_plan *plan,
                           cudaStream_t stream);
/* Frees plan->lt (and its descriptors) if set. */
void dfg_cuda_lt_release(const dfg_allocator *allocator,
                         dfg_cuda_step_plan *plan);

#endif
