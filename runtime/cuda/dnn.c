/* Convolutions on cuDNN 9's convolution API (see dnn.h). */
#include "runtime/cuda/dnn.h"

#include <stdlib.h>
#include <cudnn.h>

#include "runtime/cuda/dnn_attention.h"
#include "runtime/cuda/plan/dnn_mapping.h"
#include "util/error.h"
#include "util/memory.h"

struct dfg_cuda_dnn {
    cudnnHandle_t handle;
    cudnnActivationDescriptor_t relu;
};

struct dfg_cuda_dnn_step {
    dfg_cuda_sdpa_plan *sdpa; /* an attention step's; else a conv's: */
    dfg_cuda_dnn_conv conv;
    cudnnTensorDescriptor_t x, y, bias;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t desc;
    int algo;
    void *workspace;
    size_t workspace_bytes;
};

static dfg_status dnn_error(cudnnStatus_t s, const char *what)
{
    return dfg_error(DFG_ERR_DEVICE, "cuDNN %s: %s", what,
                     cudnnGetErrorString(s));
}

dfg_status dfg_cuda_dnn_create(const dfg_allocator *allocator,
                               cudaStream_t stream, dfg_cuda_dnn **out)
{
    *out = NULL;
    if (!dfg_cuda_dnn_enabled(getenv(DFG_CUDA_CUDNN_ENV)))
        return DFG_OK;
    dfg_cuda_dnn *dnn = dfg_calloc(allocator, 1, sizeof *dnn);
    if (!dnn)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "cuda backend: out of memory for cuDNN's state");
    cudnnStatus_t s = cudnnCreate(&dnn->handle);
    if (s != CUDNN_STATUS_SUCCESS) {
        dnn->handle = NULL;
        dfg_cuda_dnn_destroy(allocator, dnn);
        return dnn_error(s, "create (libcudnn found, but it cannot start "
                         "here; " DFG_CUDA_CUDNN_ENV "=0 runs without it)");
    }
    if ((s = cudnnSetStream(dnn->handle, stream)) != CUDNN_STATUS_SUCCESS ||
        (s = cudnnCreateActivationDescriptor(&dnn->relu)) !=
            CUDNN_STATUS_SUCCESS ||
        (s = cudnnSetActivationDescriptor(dnn->relu, CUDNN_ACTIVATION_RELU,
                                          CUDNN_PROPAGATE_NAN, 0.0)) !=
            CUDNN_STATUS_SUCCESS) {
        dfg_cuda_dnn_destroy(allocator, dnn);
        return dnn_error(s, "setup");
    }
    *out = dnn;
    return DFG_OK;
}

void dfg_cuda_dnn_destroy(const dfg_allocator *allocator, dfg_cuda_dnn *dnn)
{
    if (!dnn)
        return;
    if (dnn->relu)
        cudnnDestroyActivationDescriptor(dnn->relu);
    if (dnn->handle)
        cudnnDestroy(dnn->handle);
    dfg_free(allocator, dnn);
}

void dfg_cuda_dnn_release(const dfg_allocator *allocator,
                          dfg_cuda_step_plan *plan)
{
    struct dfg_cuda_dnn_step *d = plan->dnn;
    if (!d)
        return;
    if (d->x)
        cudnnDestroyTensorDescriptor(d->x);
    if (d->y)
        cudnnDestroyTensorDescriptor(d->y);
    if (d->bias)
        cudnnDestroyTensorDescriptor(d->bias);
    if (d->w)
        cudnnDestroyFilterDescriptor(d->w);
    if (d->desc)
        cudnnDestroyConvolutionDescriptor(d->desc);
    dfg_cuda_sdpa_free(allocator, d->sdpa);
    dfg_free(allocator, d);
    plan->dnn = NULL;
}

static cudnnDataType_t data_type(dfg_dtype dtype)
{
    return dtype == DFG_F16 ? CUDNN_DATA_HALF
           : dtype == DFG_BF16 ? CUDNN_DATA_BFLOAT16
                               : CUDNN_DATA_FLOAT;
}

static cudnnStatus_t tensor(cudnnTensorDescriptor_t *t,
                            cudnnTensorFormat_t format, cudnnDataType_t type,
                            const int32_t *d)
{
    cudnnStatus_t s = cudnnCreateTensorDescriptor(t);
    return s != CUDNN_STATUS_SUCCESS
               ? s
               : cudnnSetTensor4dDescriptor(*t, format, type, d[0], d[1],
                                            d[2], d[3]);
}

/* The descriptors of d->conv. f32 computes in strict FP32 (FMA math),
 * the 16-bit types on tensor cores, always accumulating in f32. A
 * channels-last conv describes x, y, the bias and the filter (KRSC) as
 * NHWC, the layout cuDNN's tensor-core kernels read without a transpose. */
static cudnnStatus_t describe(struct dfg_cuda_dnn_step *d)
{
    const dfg_cuda_dnn_conv *c = &d->conv;
    cudnnDataType_t type = data_type(c->dtype);
    cudnnTensorFormat_t f = c->nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    const int32_t bias[4] = {1, c->y[1], 1, 1};
    cudnnStatus_t s;
    if ((s = tensor(&d->x, f, type, c->x)) != CUDNN_STATUS_SUCCESS ||
        (s = tensor(&d->y, f, type, c->y)) != CUDNN_STATUS_SUCCESS ||
        (c->has_bias &&
         (s = tensor(&d->bias, f, type, bias)) != CUDNN_STATUS_SUCCESS) ||
        (s = cudnnCreateFilterDescriptor(&d->w)) != CUDNN_STATUS_SUCCESS ||
        (s = cudnnSetFilter4dDescriptor(d->w, type, f,
                                        c->w[0], c->w[1], c->w[2], c->w[3])) !=
            CUDNN_STATUS_SUCCESS ||
        (s = cudnnCreateConvolutionDescriptor(&d->desc)) !=
            CUDNN_STATUS_SUCCESS ||
        (s = cudnnSetConvolution2dDescriptor(
             d->desc, c->pad[0], c->pad[1], c->stride[0], c->stride[1],
             c->dilation[0], c->dilation[1], CUDNN_CROSS_CORRELATION,
             CUDNN_DATA_FLOAT)) != CUDNN_STATUS_SUCCESS ||
        (s = cudnnSetConvolutionGroupCount(d->desc, c->groups)) !=
            CUDNN_STATUS_SUCCESS)
        return s;
    return cudnnSetConvolutionMathType(
        d->desc, c->dtype == DFG_F32 && !c->tf32 ? CUDNN_FMA_MATH
                                                 : CUDNN_TENSOR_OP_MATH);
}

#define MAX_CANDIDATES 16

static int is_tensor_math(cudnnMathType_t m)
{
    return m == CUDNN_TENSOR_OP_MATH ||
           m == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
}

/* cuDNN's heuristic candidates for d's direction, into c. */
#define TAKE_CANDIDATES(perf, n, c)                                         \
    for (int i_ = 0; i_ < (n); i_++) {                                      \
        (c)[i_].algo = (int)(perf)[i_].algo;                                \
        (c)[i_].ok = (perf)[i_].status == CUDNN_STATUS_SUCCESS;             \
        (c)[i_].deterministic = (perf)[i_].determinism == CUDNN_DETERMINISTIC; \
        (c)[i_].tensor_math = is_tensor_math((perf)[i_].mathType);          \
        (c)[i_].workspace_bytes = (perf)[i_].memory;                        \
    }

static cudnnStatus_t candidates(cudnnHandle_t h,
                                const struct dfg_cuda_dnn_step *d,
                                dfg_cuda_dnn_candidate *c, int *n)
{
    cudnnStatus_t s;
    *n = 0;
    switch (d->conv.direction) {
    case DFG_CUDA_DNN_FORWARD: {
        cudnnConvolutionFwdAlgoPerf_t perf[MAX_CANDIDATES];
        s = cudnnGetConvolutionForwardAlgorithm_v7(
            h, d->x, d->w, d->desc, d->y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, n,
            perf);
        TAKE_CANDIDATES(perf, *n, c);
        return s;
    }
    case DFG_CUDA_DNN_BACKWARD_DATA: {
        cudnnConvolutionBwdDataAlgoPerf_t perf[MAX_CANDIDATES];
        s = cudnnGetConvolutionBackwardDataAlgorithm_v7(
            h, d->w, d->y, d->desc, d->x, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
            n, perf);
        TAKE_CANDIDATES(perf, *n, c);
        return s;
    }
    default: {
        cudnnConvolutionBwdFilterAlgoPerf_t perf[MAX_CANDIDATES];
        s = cudnnGetConvolutionBackwardFilterAlgorithm_v7(
            h, d->x, d->y, d->desc, d->w,
            CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, n, perf);
        TAKE_CANDIDATES(perf, *n, c);
        return s;
    }
    }
}

/* The workspace the chosen algorithm asks for (the heuristics' figure,
 * checked). */
static cudnnStatus_t workspace_size(cudnnHandle_t h,
                                    const struct dfg_cuda_dnn_step *d,
                                    size_t *bytes)
{
    switch (d->conv.direction) {
    case DFG_CUDA_DNN_FORWARD:
        return cudnnGetConvolutionForwardWorkspaceSize(
            h, d->x, d->w, d->desc, d->y, (cudnnConvolutionFwdAlgo_t)d->algo,
            bytes);
    case DFG_CUDA_DNN_BACKWARD_DATA:
        return cudnnGetConvolutionBackwardDataWorkspaceSize(
            h, d->w, d->y, d->desc, d->x,
            (cudnnConvolutionBwdDataAlgo_t)d->algo, bytes);
    default:
        return cudnnGetConvolutionBackwardFilterWorkspaceSize(
            h, d->x, d->y, d->desc, d->w,
            (cudnnConvolutionBwdFilterAlgo_t)d->algo, bytes);
    }
}

/* d's algorithm, or -1 with *why when no candidate fits. */
static dfg_status choose(cudnnHandle_t h, struct dfg_cuda_dnn_step *d,
                         size_t bytes, const char **why)
{
    dfg_cuda_dnn_candidate c[MAX_CANDIDATES];
    int n = 0;
    cudnnStatus_t s = candidates(h, d, c, &n);
    if (s != CUDNN_STATUS_SUCCESS)
        return dnn_error(s, "algorithm heuristics");
    int32_t at = dfg_cuda_dnn_pick(c, n, bytes,
                                   d->conv.dtype != DFG_F32 || d->conv.tf32,
                                   -1);
    d->algo = at < 0 ? -1 : c[at].algo;
    size_t needed = 0;
    if (at >= 0 &&
        ((s = workspace_size(h, d, &needed)) != CUDNN_STATUS_SUCCESS ||
         needed > bytes))
        d->algo = -1;
    if (d->algo < 0)
        *why = "none of its algorithms is deterministic, of the math the "
               "program allows (f32 strict unless tf32) and within the "
               "step's workspace";
    d->workspace_bytes = needed;
    return DFG_OK;
}

/* An attention step on cuDNN's fused attention where the mapping and
 * cuDNN's engines allow; else plan->dnn_why says why not. */
static dfg_status take_attention(dfg_cuda_dnn *dnn,
                                 const dfg_allocator *allocator,
                                 dfg_cuda_step_plan *plan, void *workspace,
                                 size_t bytes)
{
    dfg_cuda_sdpa sdpa;
    const char *why = NULL;
    if (!dfg_cuda_sdpa_make(plan, &sdpa, &why)) {
        plan->dnn_why = why;
        return DFG_OK;
    }
    struct dfg_cuda_dnn_step *d = dfg_calloc(allocator, 1, sizeof *d);
    if (!d)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "cuda backend: out of memory for a cuDNN step");
    dfg_cuda_blas_workspace(workspace, (int64_t)bytes, 0, &d->workspace,
                            &bytes);
    dfg_status st = dfg_cuda_sdpa_build(dnn->handle, allocator, &sdpa,
                                        plan->args, d->workspace, bytes,
                                        &d->sdpa, &why);
    if (st != DFG_OK || !d->sdpa) {
        dfg_free(allocator, d);
        plan->dnn_why = why;
        return st;
    }
    plan->dnn = d;
    plan->dnn_why = NULL;
    return DFG_OK;
}

dfg_status dfg_cuda_dnn_take(dfg_cuda_dnn *dnn, const dfg_allocator *allocator,
                             dfg_cuda_step_plan *plan, void *workspace,
                             size_t bytes)
{
    plan->dnn = NULL;
    if (plan->kind == DFG_CUDA_ATTENTION && dnn)
        return take_attention(dnn, allocator, plan, workspace, bytes);
    if (plan->kind != DFG_CUDA_CONV2D && plan->kind != DFG_CUDA_CONV_GRAD_INPUT &&
        plan->kind != DFG_CUDA_CONV_GRAD_WEIGHT)
        return DFG_OK;
    if (!dnn) {
        plan->dnn_why = "turned off (" DFG_CUDA_CUDNN_ENV "=0)";
        return DFG_OK;
    }
    dfg_cuda_dnn_conv conv;
    const char *why = NULL;
    if (!dfg_cuda_dnn_conv_make(plan, &conv, &why)) {
        plan->dnn_why = why; /* the backend's own path runs it */
        return DFG_OK;
    }
    struct dfg_cuda_dnn_step *d = dfg_calloc(allocator, 1, sizeof *d);
    if (!d)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "cuda backend: out of memory for a cuDNN step");
    d->conv = conv;
    plan->dnn = d;
    /* cuBLAS's rule serves cuDNN too: 256-byte aligned, none below the
     * floor (gemm_mapping.h). */
    dfg_cuda_blas_workspace(workspace, (int64_t)bytes, 0, &d->workspace,
                            &bytes);
    cudnnStatus_t s = describe(d);
    dfg_status st = s == CUDNN_STATUS_SUCCESS
                        ? choose(dnn->handle, d, bytes, &why)
                        : dnn_error(s, "descriptors");
    if (st == DFG_OK && d->algo >= 0)
        return DFG_OK;
    plan->dnn_why = why;
    dfg_cuda_dnn_release(allocator, plan);
    return st; /* no algorithm fits: the backend's own path runs it */
}

static const float one = 1.0f, zero = 0.0f;

static cudnnStatus_t forward(const dfg_cuda_dnn *dnn,
                             const struct dfg_cuda_dnn_step *d,
                             const dfg_step_args *a, cudaStream_t stream)
{
    const dfg_cuda_dnn_conv *c = &d->conv;
    cudnnHandle_t h = dnn->handle;
    cudnnConvolutionFwdAlgo_t algo = (cudnnConvolutionFwdAlgo_t)d->algo;
    void *y = a->out[0];
    if (c->fused)
        return cudnnConvolutionBiasActivationForward(
            h, &one, d->x, a->in[0], d->w, a->in[1], d->desc, algo,
            d->workspace, d->workspace_bytes, c->residual ? &one : &zero, d->y,
            c->residual ? a->in[3] : y, d->bias, a->in[2], dnn->relu, d->y, y);
    if (c->residual && a->in[3] != y &&
        cudaMemcpyAsync(y, a->in[3], (size_t)dfg_type_bytes(&a->out_types[0]),
                        cudaMemcpyDeviceToDevice, stream) != cudaSuccess)
        return CUDNN_STATUS_EXECUTION_FAILED;
    cudnnStatus_t s = cudnnConvolutionForward(
        h, &one, d->x, a->in[0], d->w, a->in[1], d->desc, algo, d->workspace,
        d->workspace_bytes, c->residual ? &one : &zero, d->y, y);
    if (s == CUDNN_STATUS_SUCCESS && c->has_bias)
        s = cudnnAddTensor(h, &one, d->bias, a->in[2], &one, d->y, y);
    if (s == CUDNN_STATUS_SUCCESS && c->relu)
        s = cudnnActivationForward(h, dnn->relu, &one, d->y, y, &zero, d->y, y);
    return s;
}

dfg_status dfg_cuda_dnn_run(dfg_cuda_dnn *dnn, const dfg_cuda_step_plan *plan,
                            cudaStream_t stream)
{
    const struct dfg_cuda_dnn_step *d = plan->dnn;
    const dfg_step_args *a = plan->args;
    cudnnStatus_t s;
    if (d->sdpa) {
        s = dfg_cuda_sdpa_run(dnn->handle, d->sdpa);
        return s == CUDNN_STATUS_SUCCESS ? DFG_OK
                                         : dnn_error(s, "fused attention");
    }
    switch (d->conv.direction) {
    case DFG_CUDA_DNN_FORWARD: s = forward(dnn, d, a, stream); break;
    case DFG_CUDA_DNN_BACKWARD_DATA:
        s = cudnnConvolutionBackwardData(
            dnn->handle, &one, d->w, a->in[1], d->y, a->in[0], d->desc,
            (cudnnConvolutionBwdDataAlgo_t)d->algo, d->workspace,
            d->workspace_bytes, &zero, d->x, a->out[0]);
        break;
    default:
        s = cudnnConvolutionBackwardFilter(
            dnn->handle, &one, d->x, a->in[1], d->y, a->in[0], d->desc,
            (cudnnConvolutionBwdFilterAlgo_t)d->algo, d->workspace,
            d->workspace_bytes, &zero, d->w, a->out[0]);
        break;
    }
    return s == CUDNN_STATUS_SUCCESS ? DFG_OK
                                     : dnn_error(s, dfg_op_get(a->op)->name);
}
