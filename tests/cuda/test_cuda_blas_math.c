/* blas.h's promise of f32 accumulation, checked on the host: blas.c is
 * compiled against the real cuBLAS header and linked against the fake
 * cuBLAS entry points below (no libcublas, no device), which record their
 * arguments. A handle is created with a math mode that forbids reduced-
 * precision split-K reductions and allows no TF32; every f16 and bf16
 * product (matmul single and strided-batched, gemm, conv2d) asks for
 * CUBLAS_COMPUTE_32F on operands of its own data type, with the leading
 * dimensions and strides of gemm_mapping.h's row-major -> column-major
 * mapping; a failing cuBLAS call is a DFG_ERR_DEVICE naming it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dfg/attrs.h"
#include "runtime/cuda/blas.h"
#include "util/error.h"

/* ---- fake cuBLAS, cudart and kernel launches -------------------------- */

#define MAX_CALLS 64

typedef struct gemm_call {
    int batched;
    cublasOperation_t trans_a, trans_b;
    int m, n, k, lda, ldb, ldc, batch;
    long long stride_a, stride_b, stride_c;
    const void *a, *b;
    void *c;
    cudaDataType a_type, b_type, c_type;
    cublasComputeType_t compute;
    cublasGemmAlgo_t algo;
    float alpha, beta;
    void *workspace;           /* the handle's when it was called */
} gemm_call;

static struct {
    int handles;               /* created and not destroyed */
    cudaStream_t stream;
    void *workspace;
    size_t workspace_bytes;
    int math_mode_set;         /* calls to SetMathMode */
    cublasMath_t math_mode;
    int products_before_mode;  /* products queued before SetMathMode */
    gemm_call calls[MAX_CALLS];
    int n_calls;
    int launches;              /* im2col, copies, clears */
    cublasStatus_t fail_create, fail_math_mode;
} fake;

static int handle_token;

static void fake_reset(void)
{
    memset(&fake, 0, sizeof fake);
}

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
    if (fake.fail_create != CUBLAS_STATUS_SUCCESS)
        return fake.fail_create;
    *handle = (cublasHandle_t)(void *)&handle_token;
    fake.handles++;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
{
    assert_ptr_equal(handle, &handle_token);
    fake.handles--;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream)
{
    assert_ptr_equal(handle, &handle_token);
    fake.stream = stream;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace,
                                     size_t bytes)
{
    assert_ptr_equal(handle, &handle_token);
    fake.workspace = workspace;
    fake.workspace_bytes = bytes;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
    assert_ptr_equal(handle, &handle_token);
    if (fake.fail_math_mode != CUBLAS_STATUS_SUCCESS)
        return fake.fail_math_mode;
    fake.math_mode_set++;
    fake.math_mode = mode;
    fake.products_before_mode = fake.n_calls;
    return CUBLAS_STATUS_SUCCESS;
}

const char *cublasGetStatusString(cublasStatus_t status)
{
    return status == CUBLAS_STATUS_NOT_INITIALIZED ? "fake: not initialized"
                                                   : "fake: some status";
}

static gemm_call *record(cublasHandle_t handle, cublasOperation_t ta,
                         cublasOperation_t tb, int m, int n, int k,
                         const void *alpha, const void *a, cudaDataType at,
                         int lda, const void *b, cudaDataType bt, int ldb,
                         const void *beta, void *c, cudaDataType ct, int ldc,
                         cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
    assert_ptr_equal(handle, &handle_token);
    assert_true(fake.n_calls < MAX_CALLS);
    gemm_call *g = &fake.calls[fake.n_calls++];
    /* alpha and beta are read as the compute type's scalars: f32 here. */
    *g = (gemm_call){
        .trans_a = ta, .trans_b = tb, .m = m, .n = n, .k = k, .lda = lda,
        .ldb = ldb, .ldc = ldc, .batch = 1, .a = a, .b = b, .c = c,
        .a_type = at, .b_type = bt, .c_type = ct, .compute = compute,
        .algo = algo, .alpha = *(const float *)alpha,
        .beta = *(const float *)beta, .workspace = fake.workspace};
    return g;
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t ta,
                            cublasOperation_t tb, int m, int n, int k,
                            const void *alpha, const void *a, cudaDataType at,
                            int lda, const void *b, cudaDataType bt, int ldb,
                            const void *beta, void *c, cudaDataType ct,
                            int ldc, cublasComputeType_t compute,
                            cublasGemmAlgo_t algo)
{
    record(handle, ta, tb, m, n, k, alpha, a, at, lda, b, bt, ldb, beta, c,
           ct, ldc, compute, algo);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, int m,
    int n, int k, const void *alpha, const void *a, cudaDataType at, int lda,
    long long stride_a, const void *b, cudaDataType bt, int ldb,
    long long stride_b, const void *beta, void *c, cudaDataType ct, int ldc,
    long long stride_c, int batch, cublasComputeType_t compute,
    cublasGemmAlgo_t algo)
{
    gemm_call *g = record(handle, ta, tb, m, n, k, alpha, a, at, lda, b, bt,
                          ldb, beta, c, ct, ldc, compute, algo);
    g->batched = 1;
    g->stride_a = stride_a;
    g->stride_b = stride_b;
    g->stride_c = stride_c;
    g->batch = batch;
    return CUBLAS_STATUS_SUCCESS;
}

const char *cudaGetErrorString(cudaError_t error)
{
    (void)error;
    return "fake CUDA error";
}

cudaError_t cudaMemsetAsync(void *dst, int value, size_t bytes,
                            cudaStream_t stream)
{
    (void)dst, (void)value, (void)bytes, (void)stream;
    fake.launches++;
    return cudaSuccess;
}

cudaError_t dfg_cuda_launch_strided_copy(const dfg_cuda_strided_copy *p,
                                         const void *src, void *dst,
                                         cudaStream_t stream)
{
    (void)p, (void)src, (void)dst, (void)stream;
    fake.launches++;
    return cudaSuccess;
}

cudaError_t dfg_cuda_launch_im2col(const dfg_cuda_im2col *p, const void *x,
                                   void *col, cudaStream_t stream)
{
    (void)p, (void)x, (void)col, (void)stream;
    fake.launches++;
    return cudaSuccess;
}

cudaError_t dfg_cuda_launch_col2im(const dfg_cuda_col2im *p, const float *col,
                                   float *dx, cudaStream_t stream)
{
    (void)p, (void)col, (void)dx, (void)stream;
    fake.launches++;
    return cudaSuccess;
}

/* ---- steps --------------------------------------------------------- */

static dfg_type type_of(dfg_dtype dtype, int32_t rank, const int64_t *dims)
{
    dfg_type t;
    memset(&t, 0, sizeof t);
    t.dtype = dtype;
    t.rank = rank;
    memcpy(t.shape, dims, (size_t)rank * sizeof *dims);
    return t;
}

/* One step of op on host buffers of the given input types (the fakes
 * never read them), its output typed by the op's shape rule, its
 * workspace by the op's rule plus 64 KiB for cuBLAS (a planned one). */
typedef struct step {
    dfg_attrs attrs;
    dfg_type in_types[3], out_type;
    void *in[3], *out, *workspace;
    dfg_step_args args;
    dfg_cuda_step_plan plan;
} step;

static void step_make(step *s, dfg_op op, const dfg_attrs *attrs,
                      int32_t n_in, const dfg_type *in)
{
    memset(s, 0, sizeof *s);
    s->attrs = *attrs;
    for (int32_t i = 0; i < n_in; i++) {
        s->in_types[i] = in[i];
        s->in[i] = calloc(1, (size_t)dfg_type_bytes(&in[i]));
        assert_non_null(s->in[i]);
    }
    const dfg_op_info *info = dfg_op_get(op);
    assert_int_equal(info->shape(&s->attrs, s->in_types, n_in, &s->out_type,
                                 1), DFG_OK);
    s->out = calloc(1, (size_t)dfg_type_bytes(&s->out_type));
    int64_t bytes = info->workspace ? info->workspace(&s->attrs, s->in_types,
                                                      n_in, &s->out_type, 1)
                                    : 0;
    bytes += 64 << 10;
    s->workspace = calloc(1, (size_t)bytes);
    assert_non_null(s->out);
    assert_non_null(s->workspace);
    s->args = (dfg_step_args){
        .op = op, .attrs = &s->attrs, .n_inputs = n_in,
        .in_types = s->in_types, .in = (const void *const *)s->in,
        .n_outputs = 1, .out_types = &s->out_type, .out = &s->out,
        .workspace = s->workspace, .workspace_bytes = bytes};
    if (dfg_cuda_step_plan_make(&s->args, 0, &s->plan) != DFG_OK)
        fail_msg("%s: %s", info->name, dfg_last_error());
}

static void step_free(step *s)
{
    for (int i = 0; i < 3; i++)
        free(s->in[i]);
    free(s->out);
    free(s->workspace);
}

static cudaStream_t test_stream(void)
{
    static int token;
    return (cudaStream_t)(void *)&token;
}

/* Runs s through a fresh handle; fake.calls holds its products. */
static void run_step(step *s)
{
    fake_reset();
    dfg_cuda_blas blas;
    assert_int_equal(dfg_cuda_blas_create(&blas, test_stream()), DFG_OK);
    if (dfg_cuda_blas_step(&blas, &s->plan, test_stream()) != DFG_OK)
        fail_msg("%s", dfg_last_error());
    dfg_cuda_blas_destroy(&blas);
    assert_int_equal(fake.handles, 0);
    assert_true(fake.n_calls > 0);
}

static cudaDataType cuda_type(dfg_dtype dtype)
{
    return dtype == DFG_F16 ? CUDA_R_16F : CUDA_R_16BF;
}

/* Every product of the step: f32 accumulation on operands of dtype, f32
 * scalars, the default algorithm, inside the step's own workspace. */
static void check_products(const step *s, dfg_dtype dtype)
{
    for (int i = 0; i < fake.n_calls; i++) {
        const gemm_call *g = &fake.calls[i];
        assert_int_equal(g->compute, CUBLAS_COMPUTE_32F);
        assert_int_equal(g->a_type, cuda_type(dtype));
        assert_int_equal(g->b_type, cuda_type(dtype));
        assert_int_equal(g->c_type, cuda_type(dtype));
        assert_int_equal(g->algo, CUBLAS_GEMM_DEFAULT);
        char *ws = s->workspace, *at = g->workspace;
        assert_true(at >= ws && at < ws + s->args.workspace_bytes);
    }
    assert_int_equal(fake.products_before_mode, 0);
}

/* ---- the tests ------------------------------------------------------ */

static void test_handle_math_mode(void **state)
{
    (void)state;
    fake_reset();
    dfg_cuda_blas blas;
    assert_int_equal(dfg_cuda_blas_create(&blas, test_stream()), DFG_OK);
    assert_int_equal(fake.handles, 1);
    assert_ptr_equal(fake.stream, test_stream());
    /* No workspace of cuBLAS's own until a step sets one. */
    assert_null(fake.workspace);
    assert_int_equal(fake.workspace_bytes, 0);
    assert_int_equal(fake.math_mode_set, 1);
    assert_true(fake.math_mode & CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
    /* The base mode: default, neither TF32 (f32 products match the CPU
     * within 1e-5) nor pedantic. */
    assert_int_equal(fake.math_mode & 0xf, CUBLAS_DEFAULT_MATH);
    dfg_cuda_blas_destroy(&blas);
    assert_int_equal(fake.handles, 0);
}

static void test_handle_errors(void **state)
{
    (void)state;
    dfg_cuda_blas blas;
    fake_reset();
    fake.fail_create = CUBLAS_STATUS_NOT_INITIALIZED;
    assert_int_equal(dfg_cuda_blas_create(&blas, test_stream()),
                     DFG_ERR_DEVICE);
    assert_non_null(strstr(dfg_last_error(), "cuBLAS create: fake: not "
                                             "initialized"));
    assert_null(blas.handle);
    /* A handle whose math mode cannot be set is destroyed, not used. */
    fake_reset();
    fake.fail_math_mode = CUBLAS_STATUS_NOT_SUPPORTED;
    assert_int_equal(dfg_cuda_blas_create(&blas, test_stream()),
                     DFG_ERR_DEVICE);
    assert_non_null(strstr(dfg_last_error(), "cuBLAS setup"));
    assert_int_equal(fake.handles, 0);
    assert_null(blas.handle);
}

/* Row-major a[M, K] x b[K, N] is column-major C^T = B^T A^T: cuBLAS gets
 * b first (ld N), a second (ld K), m = N, n = M, C's ld N. */
enum { M = 3, K = 5, N = 7, BATCH = 4 };

static void test_matmul_single(void **state)
{
    (void)state;
    static const dfg_dtype dtypes[] = {DFG_F16, DFG_BF16};
    dfg_attrs a;
    dfg_attrs_init(&a);
    for (int d = 0; d < 2; d++) {
        const dfg_type in[2] = {type_of(dtypes[d], 2, (int64_t[]){M, K}),
                                type_of(dtypes[d], 2, (int64_t[]){K, N})};
        step s;
        step_make(&s, DFG_OP_MATMUL, &a, 2, in);
        run_step(&s);
        check_products(&s, dtypes[d]);
        assert_int_equal(fake.n_calls, 1);
        const gemm_call *g = &fake.calls[0];
        assert_false(g->batched);
        assert_int_equal(g->trans_a, CUBLAS_OP_N);
        assert_int_equal(g->trans_b, CUBLAS_OP_N);
        assert_int_equal(g->m, N);
        assert_int_equal(g->n, M);
        assert_int_equal(g->k, K);
        assert_int_equal(g->lda, N);
        assert_int_equal(g->ldb, K);
        assert_int_equal(g->ldc, N);
        assert_ptr_equal(g->a, s.in[1]);
        assert_ptr_equal(g->b, s.in[0]);
        assert_ptr_equal(g->c, s.out);
        assert_true(g->alpha == 1.0f && g->beta == 0.0f);
        step_free(&s);
    }
}

static void test_matmul_batched(void **state)
{
    (void)state;
    static const dfg_dtype dtypes[] = {DFG_F16, DFG_BF16};
    dfg_attrs a;
    dfg_attrs_init(&a);
    for (int d = 0; d < 2; d++) {
        const dfg_type in[2] = {
            type_of(dtypes[d], 3, (int64_t[]){BATCH, M, K}),
            type_of(dtypes[d], 3, (int64_t[]){BATCH, K, N})};
        step s;
        step_make(&s, DFG_OP_MATMUL, &a, 2, in);
        run_step(&s);
        check_products(&s, dtypes[d]);
        assert_int_equal(fake.n_calls, 1);
        const gemm_call *g = &fake.calls[0];
        assert_true(g->batched);
        assert_int_equal(g->batch, BATCH);
        assert_int_equal(g->m, N);
        assert_int_equal(g->n, M);
        assert_int_equal(g->k, K);
        assert_int_equal(g->lda, N);
        assert_int_equal(g->ldb, K);
        assert_int_equal(g->ldc, N);
        assert_int_equal(g->stride_a, K * N);
        assert_int_equal(g->stride_b, M * K);
        assert_int_equal(g->stride_c, M * N);
        step_free(&s);
    }
}

/* ONNX Gemm with transB: b stored [N, K], which cuBLAS transposes (ld K),
 * and the bias broadcast into C first (beta 1). */
static void test_gemm_transposed(void **state)
{
    (void)state;
    static const dfg_dtype dtypes[] = {DFG_F16, DFG_BF16};
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.trans_b = 1;
    for (int d = 0; d < 2; d++) {
        const dfg_type in[3] = {type_of(dtypes[d], 2, (int64_t[]){M, K}),
                                type_of(dtypes[d], 2, (int64_t[]){N, K}),
                                type_of(dtypes[d], 1, (int64_t[]){N})};
        step s;
        step_make(&s, DFG_OP_GEMM, &a, 3, in);
        run_step(&s);
        check_products(&s, dtypes[d]);
        assert_int_equal(fake.n_calls, 1);
        const gemm_call *g = &fake.calls[0];
        assert_int_equal(g->trans_a, CUBLAS_OP_T);
        assert_int_equal(g->trans_b, CUBLAS_OP_N);
        assert_int_equal(g->m, N);
        assert_int_equal(g->n, M);
        assert_int_equal(g->k, K);
        assert_int_equal(g->lda, K);
        assert_int_equal(g->ldb, K);
        assert_int_equal(g->ldc, N);
        assert_true(g->beta == 1.0f);
        assert_int_equal(fake.launches, 1); /* the bias broadcast */
        step_free(&s);
    }
}

/* conv2d through im2col chunks: every product of the step accumulates in
 * f32 too. */
static void test_conv2d(void **state)
{
    (void)state;
    static const dfg_dtype dtypes[] = {DFG_F16, DFG_BF16};
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.pads[0] = a.pads[1] = a.pads[2] = a.pads[3] = 1;
    for (int d = 0; d < 2; d++) {
        const dfg_type in[2] = {
            type_of(dtypes[d], 4, (int64_t[]){2, 3, 8, 8}),
            type_of(dtypes[d], 4, (int64_t[]){4, 3, 3, 3})};
        step s;
        step_make(&s, DFG_OP_CONV2D, &a, 2, in);
        assert_int_equal(s.plan.kind, DFG_CUDA_CONV2D);
        run_step(&s);
        check_products(&s, dtypes[d]);
        assert_true(fake.launches > 0); /* im2col */
        step_free(&s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_handle_math_mode),
        cmocka_unit_test(test_handle_errors),
        cmocka_unit_test(test_matmul_single),
        cmocka_unit_test(test_matmul_batched),
        cmocka_unit_test(test_gemm_transposed),
        cmocka_unit_test(test_conv2d),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
