/* cuBLAS products of the CUDA backend (see blas.h). */
#include "runtime/cuda/blas.h"

#include "runtime/cuda/plan/conv_forward.h"
#include "runtime/cuda/plan/conv_grad.h"
#include "util/error.h"
#include "runtime/cuda/kernels/kernels.h"

static dfg_status blas_error(cublasStatus_t status, const char *what)
{
    return dfg_error(DFG_ERR_DEVICE, "cuBLAS %s: %s", what,
                     cublasGetStatusString(status));
}

static dfg_status launch_error(cudaError_t e, const char *what)
{
    return dfg_error(DFG_ERR_DEVICE, "%s: %s", what, cudaGetErrorString(e));
}

dfg_status dfg_cuda_blas_create(dfg_cuda_blas *blas, cudaStream_t stream)
{
    blas->workspace = NULL;
    blas->workspace_bytes = 0;
    cublasStatus_t s = cublasCreate(&blas->handle);
    if (s != CUBLAS_STATUS_SUCCESS) {
        blas->handle = NULL;
        return blas_error(s, "create");
    }
    /* No workspace of cuBLAS's own: the planned one, step by step. The
     * default math mode lets f16 and bf16 products reduce split-K partial
     * sums in their own 16 bits; blas.h promises f32 accumulation. */
    if ((s = cublasSetStream(blas->handle, stream)) != CUBLAS_STATUS_SUCCESS ||
        (s = cublasSetWorkspace(blas->handle, NULL, 0)) != CUBLAS_STATUS_SUCCESS ||
        (s = cublasSetMathMode(blas->handle, CUBLAS_DEFAULT_MATH |
                               CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)) !=
            CUBLAS_STATUS_SUCCESS) {
        dfg_cuda_blas_destroy(blas);
        return blas_error(s, "setup");
    }
    return DFG_OK;
}

void dfg_cuda_blas_destroy(dfg_cuda_blas *blas)
{
    if (blas->handle)
        cublasDestroy(blas->handle);
    blas->handle = NULL;
}

static cudaDataType_t data_type(dfg_dtype dtype)
{
    return dtype == DFG_F16 ? CUDA_R_16F
           : dtype == DFG_BF16 ? CUDA_R_16BF
                               : CUDA_R_32F;
}

static cublasOperation_t op(int trans)
{
    return trans ? CUBLAS_OP_T : CUBLAS_OP_N;
}

dfg_status dfg_cuda_blas_product(dfg_cuda_blas *blas,
                                 const dfg_cuda_row_gemm *row, dfg_dtype dtype,
                                 const void *a, const void *b, void *c)
{
    dfg_cuda_blas_gemm g;
    dfg_status st = dfg_cuda_blas_gemm_from_row_major(row, &g);
    if (st != DFG_OK || g.m == 0 || g.n == 0 || g.batch == 0)
        return st;
    cudaDataType_t t = data_type(dtype);
    cublasComputeType_t compute = blas->tf32 && dtype == DFG_F32
                                      ? CUBLAS_COMPUTE_32F_FAST_TF32
                                      : CUBLAS_COMPUTE_32F;
    cublasStatus_t s;
    if (g.batch == 1)
        s = cublasGemmEx(blas->handle, op(g.trans_first), op(g.trans_second),
                         g.m, g.n, g.k, &g.alpha, b, t, g.ld_first, a, t,
                         g.ld_second, &g.beta, c, t, g.ldc,
                         compute, CUBLAS_GEMM_DEFAULT);
    else
        s = cublasGemmStridedBatchedEx(
            blas->handle, op(g.trans_first), op(g.trans_second), g.m, g.n,
            g.k, &g.alpha, b, t, g.ld_first, g.stride_first, a, t,
            g.ld_second, g.stride_second, &g.beta, c, t, g.ldc, g.stride_c,
            g.batch, compute, CUBLAS_GEMM_DEFAULT);
    return s == CUBLAS_STATUS_SUCCESS ? DFG_OK : blas_error(s, "GemmEx");
}

static const char *at(const void *base, int64_t elements, int64_t size)
{
    return (const char *)base + elements * size;
}

static dfg_status run_matmul(dfg_cuda_blas *blas, const dfg_cuda_step_plan *p)
{
    const dfg_step_args *s = p->args;
    dfg_dtype dtype = s->in_types[0].dtype;
    int64_t size = dfg_cuda_dtype_size(dtype);
    for (int64_t call = 0; call < p->u.matmul.calls; call++) {
        int64_t ia, ib, ic;
        dfg_cuda_matmul_call_offsets(&p->u.matmul, call, &ia, &ib, &ic);
        dfg_status st = dfg_cuda_blas_product(blas, &p->u.matmul.gemm, dtype,
                                at(s->in[0], ia, size), at(s->in[1], ib, size),
                                (char *)s->out[0] + ic * size);
        if (st != DFG_OK)
            return st;
    }
    return DFG_OK;
}

static dfg_status run_gemm(dfg_cuda_blas *blas, const dfg_cuda_step_plan *p,
                           cudaStream_t stream)
{
    const dfg_step_args *s = p->args;
    if (p->u.gemm.has_bias) {
        cudaError_t e = dfg_cuda_launch_strided_copy(&p->u.gemm.bias, s->in[2],
                                                     s->out[0], stream);
        if (e != cudaSuccess)
            return launch_error(e, "gemm: broadcasting C");
    }
    return dfg_cuda_blas_product(blas, &p->u.gemm.gemm, s->in_types[0].dtype, s->in[0],
                   s->in[1], s->out[0]);
}

/* The convolutions' primitives on the device (conv_ops.h). */
typedef struct conv_device {
    dfg_cuda_blas *blas;
    cudaStream_t stream;
} conv_device;

static dfg_status device_zero(void *ctx, void *dst, int64_t bytes)
{
    const conv_device *d = ctx;
    cudaError_t e = cudaMemsetAsync(dst, 0, (size_t)bytes, d->stream);
    return e == cudaSuccess ? DFG_OK : launch_error(e, "conv2d gradient: clear");
}

static dfg_status device_copy(void *ctx, const dfg_cuda_strided_copy *copy,
                              const void *src, void *dst)
{
    const conv_device *d = ctx;
    cudaError_t e = dfg_cuda_launch_strided_copy(copy, src, dst, d->stream);
    return e == cudaSuccess ? DFG_OK
                            : launch_error(e, "conv2d: broadcasting the bias");
}

static dfg_status device_product(void *ctx, const dfg_cuda_row_gemm *row,
                                 dfg_dtype dtype, const void *a,
                                 const void *b, void *c)
{
    const conv_device *d = ctx;
    return dfg_cuda_blas_product(d->blas, row, dtype, a, b, c);
}

static dfg_status device_im2col(void *ctx, const dfg_cuda_im2col *chunks,
                                const void *x, void *col)
{
    const conv_device *d = ctx;
    cudaError_t e = dfg_cuda_launch_im2col(chunks, x, col, d->stream);
    return e == cudaSuccess ? DFG_OK : launch_error(e, "conv2d: im2col");
}

static dfg_status device_col2im(void *ctx, const dfg_cuda_col2im *chunk,
                                const float *col, float *dx)
{
    const conv_device *d = ctx;
    cudaError_t e = dfg_cuda_launch_col2im(chunk, col, dx, d->stream);
    return e == cudaSuccess ? DFG_OK
                            : launch_error(e, "conv2d_grad_input: col2im");
}

static dfg_status run_conv(dfg_cuda_blas *blas, const dfg_cuda_step_plan *p,
                           cudaStream_t stream)
{
    conv_device device = {blas, stream};
    const dfg_cuda_conv_ops ops = {&device, device_zero, device_copy,
                                   device_product, device_im2col,
                                   device_col2im};
    return p->kind == DFG_CUDA_CONV2D ? dfg_cuda_conv_forward_run(p, &ops)
                                      : dfg_cuda_conv_grad_run(p, &ops);
}

dfg_status dfg_cuda_blas_set_workspace(dfg_cuda_blas *blas, void *workspace,
                                       size_t bytes)
{
    if (workspace == blas->workspace && bytes == blas->workspace_bytes)
        return DFG_OK;
    cublasStatus_t s = cublasSetWorkspace(blas->handle, workspace, bytes);
    if (s != CUBLAS_STATUS_SUCCESS)
        return blas_error(s, "SetWorkspace");
    blas->workspace = workspace;
    blas->workspace_bytes = bytes;
    return DFG_OK;
}

dfg_status dfg_cuda_blas_step(dfg_cuda_blas *blas,
                              const dfg_cuda_step_plan *plan,
                              cudaStream_t stream)
{
    dfg_status st = dfg_cuda_blas_set_workspace(blas, plan->blas_workspace,
                                                plan->blas_workspace_bytes);
    if (st != DFG_OK)
        return st;
    blas->tf32 = plan->tf32;
    switch (plan->kind) {
    case DFG_CUDA_MATMUL: return run_matmul(blas, plan);
    case DFG_CUDA_GEMM: return run_gemm(blas, plan, stream);
    case DFG_CUDA_CONV2D:
    case DFG_CUDA_CONV_GRAD_INPUT:
    case DFG_CUDA_CONV_GRAD_WEIGHT: return run_conv(blas, plan, stream);
    case DFG_CUDA_ATTENTION: return DFG_OK; /* its products: backend_steps.c */
    default:
        return dfg_error(DFG_ERR_INTERNAL, "cuBLAS: step kind %d is not a "
                         "product", (int)plan->kind);
    }
}
