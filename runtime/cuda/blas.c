/* cuBLAS products of the CUDA backend (see blas.h). */
#include "blas.h"

#include "conv_grad.h"
#include "error.h"
#include "kernels.h"

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

/* One row-major product on operands of dtype (offsets already applied). */
static dfg_status product(dfg_cuda_blas *blas, const dfg_cuda_row_gemm *row,
                          dfg_dtype dtype, const void *a, const void *b,
                          void *c)
{
    dfg_cuda_blas_gemm g;
    dfg_status st = dfg_cuda_blas_gemm_from_row_major(row, &g);
    if (st != DFG_OK || g.m == 0 || g.n == 0 || g.batch == 0)
        return st;
    cudaDataType_t t = data_type(dtype);
    cublasStatus_t s;
    if (g.batch == 1)
        s = cublasGemmEx(blas->handle, op(g.trans_first), op(g.trans_second),
                         g.m, g.n, g.k, &g.alpha, b, t, g.ld_first, a, t,
                         g.ld_second, &g.beta, c, t, g.ldc,
                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    else
        s = cublasGemmStridedBatchedEx(
            blas->handle, op(g.trans_first), op(g.trans_second), g.m, g.n,
            g.k, &g.alpha, b, t, g.ld_first, g.stride_first, a, t,
            g.ld_second, g.stride_second, &g.beta, c, t, g.ldc, g.stride_c,
            g.batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
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
        dfg_status st = product(blas, &p->u.matmul.gemm, dtype,
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
    return product(blas, &p->u.gemm.gemm, s->in_types[0].dtype, s->in[0],
                   s->in[1], s->out[0]);
}

/* Per image, group and chunk of output pixels: im2col into the step's
 * workspace, then weights x chunk into the output's rows. */
static dfg_status run_conv_chunks(dfg_cuda_blas *blas,
                                  const dfg_cuda_step_plan *p, float beta,
                                  cudaStream_t stream)
{
    const dfg_step_args *s = p->args;
    const dfg_conv_geometry *g = &p->u.conv.g;
    dfg_dtype dtype = s->in_types[0].dtype;
    int64_t size = dfg_cuda_dtype_size(dtype);
    dfg_cuda_im2col chunk = {p->u.conv.dims, g->k, 0, 0, size};
    for (int64_t n = 0; n < g->batch; n++)
        for (int64_t grp = 0; grp < g->group; grp++) {
            int64_t x_at = (n * g->in_channels + grp * g->channels_per_group) *
                           g->in_h * g->in_w;
            int64_t y_at = (n * g->out_channels + grp * g->filters_per_group) *
                           g->pixels;
            const char *w = at(s->in[1], grp * g->filters_per_group * g->k, size);
            for (int64_t p0 = 0; p0 < g->pixels; p0 += g->chunk) {
                chunk.first_pixel = p0;
                chunk.cols = g->pixels - p0 < g->chunk ? g->pixels - p0 : g->chunk;
                cudaError_t e = dfg_cuda_launch_im2col(
                    &chunk, at(s->in[0], x_at, size), s->workspace, stream);
                if (e != cudaSuccess)
                    return launch_error(e, "conv2d: im2col");
                dfg_cuda_row_gemm row = dfg_cuda_conv_chunk_gemm(g, chunk.cols,
                                                                 beta);
                dfg_status st = product(blas, &row, dtype, w, s->workspace,
                                        (char *)s->out[0] + (y_at + p0) * size);
                if (st != DFG_OK)
                    return st;
            }
        }
    return DFG_OK;
}

static dfg_status run_conv(dfg_cuda_blas *blas, const dfg_cuda_step_plan *p,
                           cudaStream_t stream)
{
    const dfg_step_args *s = p->args;
    const dfg_conv_geometry *g = &p->u.conv.g;
    if (p->u.conv.has_bias) {
        cudaError_t e = dfg_cuda_launch_strided_copy(&p->u.conv.bias, s->in[2],
                                                     s->out[0], stream);
        if (e != cudaSuccess)
            return launch_error(e, "conv2d: broadcasting the bias");
    }
    float beta = p->u.conv.has_bias ? 1.0f : 0.0f;
    if (!g->direct)
        return run_conv_chunks(blas, p, beta, stream);
    dfg_dtype dtype = s->in_types[0].dtype;
    int64_t size = dfg_cuda_dtype_size(dtype);
    for (int64_t grp = 0; grp < g->group; grp++) {
        int64_t w_at, x_at, y_at;
        dfg_cuda_row_gemm row = dfg_cuda_conv_direct_gemm(g, grp, beta, &w_at,
                                                          &x_at, &y_at);
        dfg_status st = product(blas, &row, dtype, at(s->in[1], w_at, size),
                                at(s->in[0], x_at, size),
                                (char *)s->out[0] + y_at * size);
        if (st != DFG_OK)
            return st;
    }
    return DFG_OK;
}

/* The conv2d gradients' primitives on the device (conv_grad.h). */
typedef struct conv_grad_device {
    dfg_cuda_blas *blas;
    cudaStream_t stream;
} conv_grad_device;

static dfg_status device_zero(void *ctx, void *dst, int64_t bytes)
{
    const conv_grad_device *d = ctx;
    cudaError_t e = cudaMemsetAsync(dst, 0, (size_t)bytes, d->stream);
    return e == cudaSuccess ? DFG_OK : launch_error(e, "conv2d gradient: clear");
}

static dfg_status device_product(void *ctx, const dfg_cuda_row_gemm *row,
                                 const float *a, const float *b, float *c)
{
    const conv_grad_device *d = ctx;
    return product(d->blas, row, DFG_F32, a, b, c);
}

static dfg_status device_im2col(void *ctx, const dfg_cuda_im2col *chunk,
                                const float *x, float *col)
{
    const conv_grad_device *d = ctx;
    cudaError_t e = dfg_cuda_launch_im2col(chunk, x, col, d->stream);
    return e == cudaSuccess ? DFG_OK
                            : launch_error(e, "conv2d_grad_weight: im2col");
}

static dfg_status device_col2im(void *ctx, const dfg_cuda_col2im *chunk,
                                const float *col, float *dx)
{
    const conv_grad_device *d = ctx;
    cudaError_t e = dfg_cuda_launch_col2im(chunk, col, dx, d->stream);
    return e == cudaSuccess ? DFG_OK
                            : launch_error(e, "conv2d_grad_input: col2im");
}

static dfg_status run_conv_grad(dfg_cuda_blas *blas,
                                const dfg_cuda_step_plan *p,
                                cudaStream_t stream)
{
    conv_grad_device device = {blas, stream};
    const dfg_cuda_conv_grad_ops ops = {&device, device_zero, device_product,
                                        device_im2col, device_col2im};
    return dfg_cuda_conv_grad_run(p, &ops);
}

dfg_status dfg_cuda_blas_step(dfg_cuda_blas *blas,
                              const dfg_cuda_step_plan *plan,
                              cudaStream_t stream)
{
    if (plan->blas_workspace != blas->workspace ||
        plan->blas_workspace_bytes != blas->workspace_bytes) {
        cublasStatus_t s = cublasSetWorkspace(blas->handle, plan->blas_workspace,
                                              plan->blas_workspace_bytes);
        if (s != CUBLAS_STATUS_SUCCESS)
            return blas_error(s, "SetWorkspace");
        blas->workspace = plan->blas_workspace;
        blas->workspace_bytes = plan->blas_workspace_bytes;
    }
    switch (plan->kind) {
    case DFG_CUDA_MATMUL: return run_matmul(blas, plan);
    case DFG_CUDA_GEMM: return run_gemm(blas, plan, stream);
    case DFG_CUDA_CONV2D: return run_conv(blas, plan, stream);
    case DFG_CUDA_CONV_GRAD_INPUT:
    case DFG_CUDA_CONV_GRAD_WEIGHT: return run_conv_grad(blas, plan, stream);
    default:
        return dfg_error(DFG_ERR_INTERNAL, "cuBLAS: step kind %d is not a "
                         "product", (int)plan->kind);
    }
}
