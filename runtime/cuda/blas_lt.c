/* Products with fused epilogues on cuBLASLt (see blas_lt.h). */
#include "runtime/cuda/blas_lt.h"

#include <cublasLt.h>

#include "runtime/cuda/kernels/kernels.h"
#include "runtime/cuda/plan/lt_mapping.h"
#include "util/error.h"
#include "util/memory.h"

struct dfg_cuda_lt {
    cublasLtHandle_t handle;
};

struct dfg_cuda_lt_step {
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t first, second, c;
    cublasLtMatmulAlgo_t algo;
    dfg_cuda_blas_gemm g;    /* the column-major call (gemm_mapping.h) */
};

static dfg_status lt_error(cublasStatus_t s, const char *what)
{
    return dfg_error(DFG_ERR_DEVICE, "cuBLASLt %s: %s", what,
                     cublasGetStatusString(s));
}

dfg_status dfg_cuda_lt_create(const dfg_allocator *allocator,
                              dfg_cuda_lt **out)
{
    *out = NULL;
    dfg_cuda_lt *lt = dfg_calloc(allocator, 1, sizeof *lt);
    if (!lt)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "cuda backend: out of memory for cuBLASLt's state");
    cublasStatus_t s = cublasLtCreate(&lt->handle);
    if (s != CUBLAS_STATUS_SUCCESS) {
        dfg_free(allocator, lt);
        return lt_error(s, "create");
    }
    *out = lt;
    return DFG_OK;
}

void dfg_cuda_lt_destroy(const dfg_allocator *allocator, dfg_cuda_lt *lt)
{
    if (!lt)
        return;
    cublasLtDestroy(lt->handle);
    dfg_free(allocator, lt);
}

void dfg_cuda_lt_release(const dfg_allocator *allocator,
                         dfg_cuda_step_plan *plan)
{
    struct dfg_cuda_lt_step *d = plan->lt;
    if (!d)
        return;
    if (d->first)
        cublasLtMatrixLayoutDestroy(d->first);
    if (d->second)
        cublasLtMatrixLayoutDestroy(d->second);
    if (d->c)
        cublasLtMatrixLayoutDestroy(d->c);
    if (d->desc)
        cublasLtMatmulDescDestroy(d->desc);
    dfg_free(allocator, d);
    plan->lt = NULL;
}

static cublasLtEpilogue_t epilogue(dfg_cuda_lt_epilogue e)
{
    switch (e) {
    case DFG_CUDA_LT_BIAS: return CUBLASLT_EPILOGUE_BIAS;
    case DFG_CUDA_LT_RELU: return CUBLASLT_EPILOGUE_RELU;
    case DFG_CUDA_LT_RELU_BIAS: return CUBLASLT_EPILOGUE_RELU_BIAS;
    case DFG_CUDA_LT_GELU: return CUBLASLT_EPILOGUE_GELU;
    case DFG_CUDA_LT_GELU_BIAS: return CUBLASLT_EPILOGUE_GELU_BIAS;
    default: return CUBLASLT_EPILOGUE_DEFAULT;
    }
}

/* A stored operand of the column-major call: rows x cols before op. */
static cublasStatus_t layout(cublasLtMatrixLayout_t *l, int trans,
                             int32_t rows, int32_t cols, int32_t ld)
{
    return cublasLtMatrixLayoutCreate(l, CUDA_R_32F,
                                      (uint64_t)(trans ? cols : rows),
                                      (uint64_t)(trans ? rows : cols), ld);
}

/* The descriptors of d->g with the plan's epilogue. */
static cublasStatus_t describe(struct dfg_cuda_lt_step *d,
                               const dfg_cuda_step_plan *plan)
{
    const dfg_cuda_blas_gemm *g = &d->g;
    cublasOperation_t ta = g->trans_first ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t tb = g->trans_second ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasLtEpilogue_t e = epilogue(plan->lt_form.epilogue);
    cublasStatus_t s;
    if ((s = cublasLtMatmulDescCreate(&d->desc,
                                      plan->tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                 : CUBLAS_COMPUTE_32F,
                                      CUDA_R_32F)) != CUBLAS_STATUS_SUCCESS ||
        (s = cublasLtMatmulDescSetAttribute(d->desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                            &ta, sizeof ta)) !=
            CUBLAS_STATUS_SUCCESS ||
        (s = cublasLtMatmulDescSetAttribute(d->desc, CUBLASLT_MATMUL_DESC_TRANSB,
                                            &tb, sizeof tb)) !=
            CUBLAS_STATUS_SUCCESS ||
        (s = cublasLtMatmulDescSetAttribute(
             d->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e)) !=
            CUBLAS_STATUS_SUCCESS)
        return s;
    if (plan->lt_form.bias_input >= 0) {
        const void *bias = plan->args->in[plan->lt_form.bias_input];
        if ((s = cublasLtMatmulDescSetAttribute(
                 d->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                 sizeof bias)) != CUBLAS_STATUS_SUCCESS)
            return s;
    }
    if ((s = layout(&d->first, g->trans_first, g->m, g->k, g->ld_first)) !=
            CUBLAS_STATUS_SUCCESS ||
        (s = layout(&d->second, g->trans_second, g->k, g->n, g->ld_second)) !=
            CUBLAS_STATUS_SUCCESS)
        return s;
    return layout(&d->c, 0, g->m, g->n, g->ldc);
}

/* The fastest of cuBLASLt's heuristic candidates within the workspace;
 * 0 when it offers none, or fails (*s: its status). */
static int choose(cublasLtHandle_t h, struct dfg_cuda_lt_step *d,
                  size_t workspace_bytes, cublasStatus_t *s)
{
    cublasLtMatmulPreference_t pref;
    if ((*s = cublasLtMatmulPreferenceCreate(&pref)) != CUBLAS_STATUS_SUCCESS)
        return 0;
    cublasLtMatmulHeuristicResult_t result;
    int found = 0;
    *s = cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
        sizeof workspace_bytes);
    if (*s == CUBLAS_STATUS_SUCCESS)
        *s = cublasLtMatmulAlgoGetHeuristic(h, d->desc, d->first, d->second,
                                            d->c, d->c, pref, 1, &result,
                                            &found);
    cublasLtMatmulPreferenceDestroy(pref);
    /* No heuristic for this form on this device: not an error, the
     * backend's own path runs it. */
    if (*s == CUBLAS_STATUS_NOT_SUPPORTED)
        *s = CUBLAS_STATUS_SUCCESS;
    if (*s != CUBLAS_STATUS_SUCCESS || found < 1 ||
        result.state != CUBLAS_STATUS_SUCCESS ||
        result.workspaceSize > workspace_bytes)
        return 0;
    d->algo = result.algo;
    return 1;
}

dfg_status dfg_cuda_lt_take(dfg_cuda_lt *lt, const dfg_allocator *allocator,
                            dfg_cuda_step_plan *plan)
{
    plan->lt = NULL;
    if (plan->lt_form.epilogue == DFG_CUDA_LT_OFF)
        return DFG_OK;
    struct dfg_cuda_lt_step *d = dfg_calloc(allocator, 1, sizeof *d);
    if (!d)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "cuda backend: out of memory for a cuBLASLt step");
    plan->lt = d;
    const dfg_cuda_row_gemm *row = plan->kind == DFG_CUDA_GEMM
                                       ? &plan->u.gemm.gemm
                                       : &plan->u.matmul.gemm;
    dfg_status st = dfg_cuda_blas_gemm_from_row_major(row, &d->g);
    d->g.beta = plan->lt_form.beta;
    cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
    if (st == DFG_OK && (s = describe(d, plan)) != CUBLAS_STATUS_SUCCESS)
        st = lt_error(s, "descriptors");
    if (st == DFG_OK &&
        choose(lt->handle, d, plan->blas_workspace_bytes, &s))
        return DFG_OK;
    /* Heuristics that fail or find nothing leave the step to cuBLAS. */
    plan->lt_why = s != CUBLAS_STATUS_SUCCESS
                       ? "its heuristics failed on this form"
                       : "its heuristics offer no algorithm for this form "
                         "within the step's workspace";
    dfg_cuda_lt_release(allocator, plan);
    return st;
}

dfg_status dfg_cuda_lt_run(dfg_cuda_lt *lt, const dfg_cuda_step_plan *plan,
                           cudaStream_t stream)
{
    const struct dfg_cuda_lt_step *d = plan->lt;
    const dfg_step_args *a = plan->args;
    const dfg_cuda_lt_form *f = &plan->lt_form;
    if (f->copy_c) {
        cudaError_t e = dfg_cuda_launch_strided_copy(&plan->u.gemm.bias,
                                                     a->in[2], a->out[0],
                                                     stream);
        if (e != cudaSuccess)
            return dfg_error(DFG_ERR_DEVICE, "gemm: broadcasting C: %s",
                             cudaGetErrorString(e));
    }
    if (d->g.m == 0 || d->g.n == 0)
        return DFG_OK;
    const void *c = f->c_input >= 0 ? a->in[f->c_input] : a->out[0];
    cublasStatus_t s = cublasLtMatmul(
        lt->handle, d->desc, &d->g.alpha, a->in[1], d->first, a->in[0],
        d->second, &d->g.beta, c, d->c, a->out[0], d->c, &d->algo,
        plan->blas_workspace, plan->blas_workspace_bytes, stream);
    return s == CUBLAS_STATUS_SUCCESS ? DFG_OK
                                      : lt_error(s, dfg_op_get(a->op)->name);
}
