/* Matrix products with their epilogue fused by cuBLASLt (blas_lt.h runs
 * them): which matmul and gemm steps cublasLtMatmul takes with one of its
 * epilogues, and why the others keep cuBLAS and the epilogue kernel.
 * Plain C, no cuBLASLt header: the CPU tests check the choice and run the
 * chosen form through an emulation of cuBLASLt's documented semantics,
 * D = epilogue(alpha op(A) op(B) + beta C + bias), the bias one value per
 * row of the column-major D (per column of dfg's row-major output). */
#ifndef DFG_CUDA_LT_MAPPING_H
#define DFG_CUDA_LT_MAPPING_H

#include <stddef.h>

#include "runtime/cuda/plan/step_plan_types.h"

/* cuBLASLt's name of the form ("RELU_BIAS"), "OFF" for none. */
const char *dfg_cuda_lt_epilogue_name(dfg_cuda_lt_epilogue e);

/* Fills plan->lt_form for a matmul or gemm plan whose product and
 * epilogue are planned (step_plan.c): the epilogue, the input holding the
 * bias vector (a matmul's fused bias; a gemm's C when it is N values added
 * with beta 1, which then needs no broadcast copy), the input read as C
 * (a residual read in place of a copy under the output) and beta. When
 * the product has an epilogue to fuse but cuBLASLt cannot take its form,
 * the form stays OFF and why_not says why (a static phrase): a batch of
 * products, a dtype other than f32, more than one post-op, a post-op
 * other than ReLU or tanh GELU. */
void dfg_cuda_lt_form_make(dfg_cuda_step_plan *plan);

/* What runs the step in reports (dfgc bench --profile's "runs on"), into
 * buf: "cuDNN", "cuBLASLt RELU_BIAS", "cuBLAS" (with the epilogue kernel
 * and why cuBLASLt did not take it), "cuBLAS im2col" (with why cuDNN did
 * not), "cuDNN fused attention" or "cuBLAS + softmax kernel" (with why
 * cuDNN's did not run it), from the step's library choices (plan->dnn,
 * plan->lt and their reasons); NULL for a step on the backend's own
 * kernels alone. */
const char *dfg_cuda_step_runs_on(const dfg_cuda_step_plan *plan, char *buf,
                                  size_t size);

#endif
