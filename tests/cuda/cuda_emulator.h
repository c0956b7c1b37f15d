/* The CUDA backend's steps run on the CPU: what runtime/cuda/backend.c,
 * blas.c and the kernels do with a step plan, with every launch replaced
 * by a loop over the same per-element functions (elementwise_ops.h,
 * reduction_ops.h, layout_ops.h) and every cuBLAS call by a column-major
 * reference product with cuBLAS's argument conventions. The CPU tests
 * compare it with the CPU backend, which checks the step plans, the
 * row-major -> cuBLAS mapping, the strides and the per-element code on a
 * machine without a GPU. Block reductions fold in a different order on
 * the device; the sums here run in the same precision (f32), and a sum
 * spread over blocks (math/partial_sums.h) is split into the same partial
 * sums. */
#ifndef DFG_TEST_CUDA_EMULATOR_H
#define DFG_TEST_CUDA_EMULATOR_H

#include "runtime/cuda/plan/step_plan.h"

/* Runs plan on host memory. *status receives what the device's status
 * word would hold (a gather index out of range: step + 1). A product
 * whose plan->lt is set runs as cublasLtMatmul would (lt_mapping.h);
 * plan->lt is never read through. */
dfg_status cuda_emulate_step(const dfg_cuda_step_plan *plan,
                             unsigned int *status);

/* cuBLAS's GemmEx / GemmStridedBatchedEx on host memory: column-major,
 * first and second operands as dfg_cuda_blas_gemm names them, elements of
 * dtype (f32, f16, bf16), accumulation in f32. */
void cuda_emulate_gemm(const dfg_cuda_blas_gemm *g, dfg_dtype dtype,
                       const void *first, const void *second, void *c);

/* A backend ("cuda-emulator", cuda_emulator_backend.c) that runs whole
 * programs as the CUDA backend does, on host memory: every step through
 * its plan and cuda_emulate_step, cuBLASLt taking every product whose form
 * it has, no cuDNN (a convolution names why cuDNN's mapping would refuse
 * it, else that the emulator has none), the steps' runners reported as
 * the CUDA backend reports them, and at session creation the warm-up run
 * whose in-place writes (dfg_cuda_inplace_writes) are put back, as
 * backend.c does before a graph capture; its target is the CUDA backend's
 * (dfg_cuda_target). */
extern const dfg_backend cuda_emulator_backend;

#endif
