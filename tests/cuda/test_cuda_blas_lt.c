/* blas_lt.c's cuBLASLt calls, checked on the host: blas_lt.c is compiled
 * against the real cublasLt.h and linked against the fake entry points
 * below (no libcublasLt, no device), which record the descriptors it sets
 * and run cublasLtMatmul on host memory as cuBLASLt's documentation
 * states it: D = epilogue(alpha op(A) op(B) + beta C + bias), column-major
 * layouts as given, the bias one value per row of D, GELU's tanh form.
 * Fused matmul and gemm steps (bias, residual, ReLU, tanh GELU, a
 * transposed operand, a gemm's C broadcast first) run through it and
 * through the emulated cuBLAS + epilogue kernel path (cuda_emulator.h),
 * which must agree; the compute type follows the step's TF32 permission;
 * when the heuristics offer no algorithm, or fail, the step keeps cuBLAS
 * and says why. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <cublasLt.h>

#include "dfg/attrs.h"
#include "runtime/cuda/blas_lt.h"
#include "runtime/cuda/plan/lt_mapping.h"
#include "tests/cuda/cuda_emulator.h"
#include "util/error.h"

/* ---- fake cuBLASLt and launches ---------------------------------------- */

typedef struct fake_desc {
    cublasComputeType_t compute;
    cudaDataType_t scale;
    cublasOperation_t trans_a, trans_b;
    cublasLtEpilogue_t epilogue;
    const float *bias;
} fake_desc;

typedef struct fake_layout {
    uint64_t rows, cols;
    int64_t ld;
} fake_layout;

static struct {
    int handles, descs, layouts;
    fake_desc desc;            /* the last one created */
    size_t max_workspace;      /* the last preference's */
    int no_algorithm;          /* the heuristics return none (1) or fail
                                  (2) */
    int matmuls;
} fake;

static int handle_token, algo_token;

cublasStatus_t cublasLtCreate(cublasLtHandle_t *handle)
{
    *handle = (cublasLtHandle_t)(void *)&handle_token;
    fake.handles++;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle)
{
    assert_ptr_equal(handle, &handle_token);
    fake.handles--;
    return CUBLAS_STATUS_SUCCESS;
}

const char *cublasGetStatusString(cublasStatus_t status)
{
    (void)status;
    return "fake status";
}

const char *cudaGetErrorString(cudaError_t error)
{
    (void)error;
    return "fake CUDA error";
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *desc,
                                        cublasComputeType_t compute,
                                        cudaDataType_t scale)
{
    fake_desc *d = calloc(1, sizeof *d);
    d->compute = compute;
    d->scale = scale;
    d->epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    *desc = (cublasLtMatmulDesc_t)(void *)d;
    fake.descs++;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc)
{
    free((void *)desc);
    fake.descs--;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                                              cublasLtMatmulDescAttributes_t a,
                                              const void *buf, size_t size)
{
    fake_desc *d = (fake_desc *)(void *)desc;
    void *field = a == CUBLASLT_MATMUL_DESC_TRANSA      ? (void *)&d->trans_a
                  : a == CUBLASLT_MATMUL_DESC_TRANSB    ? (void *)&d->trans_b
                  : a == CUBLASLT_MATMUL_DESC_EPILOGUE  ? (void *)&d->epilogue
                  : a == CUBLASLT_MATMUL_DESC_BIAS_POINTER ? (void *)&d->bias
                                                           : NULL;
    size_t want = a == CUBLASLT_MATMUL_DESC_BIAS_POINTER ? sizeof(void *) : 4;
    if (!field || size != want)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(field, buf, size);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *layout,
                                          cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld)
{
    assert_int_equal(type, CUDA_R_32F);
    fake_layout *l = calloc(1, sizeof *l);
    *l = (fake_layout){rows, cols, ld};
    *layout = (cublasLtMatrixLayout_t)(void *)l;
    fake.layouts++;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout)
{
    free((void *)layout);
    fake.layouts--;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref)
{
    *pref = (cublasLtMatmulPreference_t)(void *)&fake.max_workspace;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref)
{
    (void)pref;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(
    cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t a,
    const void *buf, size_t size)
{
    (void)pref;
    if (a != CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES || size != sizeof(size_t))
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(&fake.max_workspace, buf, size);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t h, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,
    cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c,
    cublasLtMatrixLayout_t d, cublasLtMatmulPreference_t pref, int requested,
    cublasLtMatmulHeuristicResult_t results[], int *returned)
{
    (void)h, (void)a, (void)b, (void)c, (void)d, (void)pref;
    fake.desc = *(const fake_desc *)(const void *)desc;
    assert_true(requested >= 1);
    if (fake.no_algorithm > 1)
        return CUBLAS_STATUS_INVALID_VALUE;
    *returned = fake.no_algorithm ? 0 : 1;
    memset(&results[0], 0, sizeof results[0]);
    memcpy(&results[0].algo, &algo_token, sizeof algo_token);
    results[0].state = CUBLAS_STATUS_SUCCESS;
    return CUBLAS_STATUS_SUCCESS;
}

/* Element (i, j) of op(X), X a column-major layout. */
static float op_at(const float *x, const fake_layout *l, cublasOperation_t t,
                   uint64_t i, uint64_t j)
{
    return t == CUBLAS_OP_N ? x[i + j * (uint64_t)l->ld]
                            : x[j + i * (uint64_t)l->ld];
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t desc,
                              const void *alpha, const void *a,
                              cublasLtMatrixLayout_t al, const void *b,
                              cublasLtMatrixLayout_t bl, const void *beta,
                              const void *c, cublasLtMatrixLayout_t cl,
                              void *d, cublasLtMatrixLayout_t dl,
                              const cublasLtMatmulAlgo_t *algo,
                              void *workspace, size_t workspace_bytes,
                              cudaStream_t stream)
{
    (void)h, (void)algo, (void)workspace, (void)workspace_bytes, (void)stream;
    const fake_desc *f = (const fake_desc *)(const void *)desc;
    const fake_layout *A = (const void *)al, *B = (const void *)bl,
                      *C = (const void *)cl, *D = (const void *)dl;
    uint64_t m = D->rows, n = D->cols;
    uint64_t k = f->trans_a == CUBLAS_OP_N ? A->cols : A->rows;
    assert_int_equal(f->trans_a == CUBLAS_OP_N ? A->rows : A->cols, m);
    assert_int_equal(f->trans_b == CUBLAS_OP_N ? B->rows : B->cols, k);
    assert_int_equal(f->trans_b == CUBLAS_OP_N ? B->cols : B->rows, n);
    assert_int_equal(C->rows, m);
    assert_int_equal(C->cols, n);
    int bias = f->epilogue == CUBLASLT_EPILOGUE_BIAS ||
               f->epilogue == CUBLASLT_EPILOGUE_RELU_BIAS ||
               f->epilogue == CUBLASLT_EPILOGUE_GELU_BIAS;
    int relu = f->epilogue == CUBLASLT_EPILOGUE_RELU ||
               f->epilogue == CUBLASLT_EPILOGUE_RELU_BIAS;
    int gelu = f->epilogue == CUBLASLT_EPILOGUE_GELU ||
               f->epilogue == CUBLASLT_EPILOGUE_GELU_BIAS;
    float al_ = *(const float *)alpha, be = *(const float *)beta;
    float *out = d;
    for (uint64_t j = 0; j < n; j++)
        for (uint64_t i = 0; i < m; i++) {
            float acc = 0.0f;
            for (uint64_t l = 0; l < k; l++)
                acc += op_at(a, A, f->trans_a, i, l) *
                       op_at(b, B, f->trans_b, l, j);
            float v = al_ * acc +
                      (be != 0.0f ? be * ((const float *)c)[i + j * C->ld]
                                  : 0.0f) +
                      (bias ? f->bias[i] : 0.0f);
            if (relu && !(v > 0.0f))
                v = 0.0f;
            if (gelu)
                v = 0.5f * v * (1.0f + tanhf(0.7978845608f *
                                             (v + 0.044715f * v * v * v)));
            out[i + j * D->ld] = v;
        }
    fake.matmuls++;
    return CUBLAS_STATUS_SUCCESS;
}

cudaError_t dfg_cuda_launch_strided_copy(const dfg_cuda_strided_copy *p,
                                         const void *src, void *dst,
                                         cudaStream_t stream)
{
    (void)stream;
    for (int64_t i = 0; i < p->n; i++) {
        int64_t s, d;
        dfg_cuda_strided_offsets(p, i, p->index32, &s, &d);
        dfg_cuda_copy_element(dst, d, src, s, p->element_size);
    }
    return cudaSuccess;
}

/* ---- steps --------------------------------------------------------- */

static uint32_t seed = 5;

static float next_value(void)
{
    seed = seed * 1664525u + 1013904223u;
    return (float)(seed >> 8) / (float)(1u << 24) - 0.5f;
}

static dfg_type type_of(int32_t rank, const int64_t *dims)
{
    dfg_type t;
    memset(&t, 0, sizeof t);
    t.dtype = DFG_F32;
    t.rank = rank;
    memcpy(t.shape, dims, (size_t)rank * sizeof *dims);
    return t;
}

/* One fused product step on random host buffers, planned twice: run by
 * blas_lt.c (lt) and by the emulated cuBLAS + epilogue path (ref). */
typedef struct step {
    dfg_attrs attrs;
    dfg_type in_types[4], out_type;
    void *in[4], *out[2], *workspace;
    dfg_step_args args[2];
    dfg_cuda_step_plan plan[2];
} step;

enum { WORKSPACE = 64 << 10 };

static void step_make(step *s, dfg_op op, const dfg_attrs *attrs,
                      int32_t n_in, const dfg_type *in)
{
    memset(s, 0, sizeof *s);
    s->attrs = *attrs;
    for (int32_t i = 0; i < n_in; i++) {
        s->in_types[i] = in[i];
        int64_t n = dfg_type_numel(&in[i]);
        float *v = malloc((size_t)n * sizeof *v);
        for (int64_t k = 0; k < n; k++)
            v[k] = 2.0f * next_value();
        s->in[i] = v;
    }
    const dfg_op_info *info = dfg_op_get(op);
    if (info->shape(&s->attrs, s->in_types, n_in, &s->out_type, 1) != DFG_OK)
        fail_msg("%s: %s", info->name, dfg_last_error());
    s->workspace = aligned_alloc(256, WORKSPACE);
    for (int k = 0; k < 2; k++) {
        s->out[k] = calloc(1, (size_t)dfg_type_bytes(&s->out_type));
        s->args[k] = (dfg_step_args){
            .op = op, .attrs = &s->attrs, .n_inputs = n_in,
            .in_types = s->in_types, .in = (const void *const *)s->in,
            .n_outputs = 1, .out_types = &s->out_type, .out = &s->out[k]};
        if (dfg_cuda_step_plan_make(&s->args[k], 0, &s->plan[k]) != DFG_OK)
            fail_msg("%s: %s", info->name, dfg_last_error());
        s->plan[k].blas_workspace = s->workspace;
        s->plan[k].blas_workspace_bytes = WORKSPACE;
    }
}

static void step_free(step *s)
{
    for (int i = 0; i < 4; i++)
        free(s->in[i]);
    free(s->out[0]), free(s->out[1]), free(s->workspace);
}

/* Runs s both ways; 1 if cuBLASLt took it. */
static int run_both(step *s)
{
    dfg_cuda_lt *lt = NULL;
    assert_int_equal(dfg_cuda_lt_create(NULL, &lt), DFG_OK);
    assert_int_equal(dfg_cuda_lt_take(lt, NULL, &s->plan[0]), DFG_OK);
    int taken = s->plan[0].lt != NULL;
    unsigned status = 0;
    if (taken)
        assert_int_equal(dfg_cuda_lt_run(lt, &s->plan[0], NULL), DFG_OK);
    assert_int_equal(cuda_emulate_step(&s->plan[1], &status), DFG_OK);
    dfg_cuda_lt_release(NULL, &s->plan[0]);
    dfg_cuda_lt_destroy(NULL, lt);
    assert_int_equal(fake.handles, 0);
    assert_int_equal(fake.descs, 0);
    assert_int_equal(fake.layouts, 0);
    return taken;
}

static void check_same(const step *s, const char *what)
{
    int64_t n = dfg_type_numel(&s->out_type);
    const float *a = s->out[0], *b = s->out[1];
    double diff = 0, norm = 0;
    for (int64_t i = 0; i < n; i++) {
        diff += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        norm += (double)b[i] * b[i];
    }
    if (!(sqrt(diff / norm) < 1e-6))
        fail_msg("%s: cuBLASLt's call vs cuBLAS + the epilogue kernel: "
                 "relative error %g", what, sqrt(diff / norm));
}

static dfg_attrs post_ops(int32_t n, const int32_t *ops)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.n_post_ops = n;
    for (int32_t i = 0; i < n; i++)
        a.post_ops[i] = ops[i];
    return a;
}

/* ---- the tests ------------------------------------------------------ */

/* Fused matmuls: every epilogue, a residual read as C, a transposed B. */
static void test_matmul_forms(void **state)
{
    (void)state;
    const int64_t xs[2] = {6, 10}, ws[2] = {10, 7}, wt[2] = {7, 10},
                  bs[1] = {7}, ys[2] = {6, 7};
    const struct {
        const char *what;
        int32_t n_ops, ops[2];
        int bias, residual, trans_b;
        cublasLtEpilogue_t epilogue;
    } cases[] = {
        {"bias", 0, {0}, 1, 0, 0, CUBLASLT_EPILOGUE_BIAS},
        {"relu", 1, {DFG_POST_RELU}, 0, 0, 0, CUBLASLT_EPILOGUE_RELU},
        {"bias+relu", 1, {DFG_POST_RELU}, 1, 0, 0,
         CUBLASLT_EPILOGUE_RELU_BIAS},
        {"gelu_tanh", 1, {DFG_POST_GELU_TANH}, 0, 0, 0,
         CUBLASLT_EPILOGUE_GELU},
        {"bias+gelu_tanh", 1, {DFG_POST_GELU_TANH}, 1, 0, 0,
         CUBLASLT_EPILOGUE_GELU_BIAS},
        {"bias+residual+relu", 2, {DFG_POST_SUM, DFG_POST_RELU}, 1, 1, 0,
         CUBLASLT_EPILOGUE_RELU_BIAS},
        {"b^T, bias+relu", 1, {DFG_POST_RELU}, 1, 0, 1,
         CUBLASLT_EPILOGUE_RELU_BIAS},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        dfg_attrs a = post_ops(cases[c].n_ops, cases[c].ops);
        a.trans_b = cases[c].trans_b;
        dfg_type in[4] = {type_of(2, xs), type_of(2, cases[c].trans_b ? wt : ws),
                          type_of(1, bs), type_of(2, ys)};
        if (!cases[c].bias)
            in[2].rank = -1;
        step s;
        step_make(&s, DFG_OP_MATMUL, &a, cases[c].residual ? 4 : 3, in);
        if (!cases[c].bias) {
            free(s.in[2]);
            s.in[2] = NULL;
        }
        memset(&fake, 0, sizeof fake);
        if (!run_both(&s))
            fail_msg("%s: not taken: %s", cases[c].what, s.plan[0].lt_why);
        assert_int_equal(fake.matmuls, 1);
        assert_int_equal(fake.desc.epilogue, cases[c].epilogue);
        assert_int_equal(fake.desc.compute, CUBLAS_COMPUTE_32F);
        assert_int_equal(fake.desc.scale, CUDA_R_32F);
        /* cuBLASLt's first operand is the row-major B. */
        assert_int_equal(fake.desc.trans_a,
                         cases[c].trans_b ? CUBLAS_OP_T : CUBLAS_OP_N);
        assert_int_equal(fake.desc.trans_b, CUBLAS_OP_N);
        assert_ptr_equal(fake.desc.bias, cases[c].bias ? s.in[2] : NULL);
        assert_int_equal(fake.max_workspace, WORKSPACE);
        check_same(&s, cases[c].what);
        step_free(&s);
    }
}

/* A gemm's C: N values with beta 1 are cuBLASLt's bias (no copy); [M, N]
 * is broadcast into the output first and read with beta. TF32 where the
 * step allows it. */
static void test_gemm_forms(void **state)
{
    (void)state;
    const int64_t as[2] = {5, 9}, bs[2] = {4, 9}, cv[1] = {4}, cm[2] = {5, 4};
    for (int matrix = 0; matrix < 2; matrix++) {
        const int32_t relu = DFG_POST_RELU;
        dfg_attrs a = post_ops(1, &relu);
        a.trans_b = 1;
        a.alpha = 0.5f;
        a.beta = matrix ? 0.25f : 1.0f;
        dfg_type in[3] = {type_of(2, as), type_of(2, bs),
                          matrix ? type_of(2, cm) : type_of(1, cv)};
        step s;
        step_make(&s, DFG_OP_GEMM, &a, 3, in);
        s.plan[0].tf32 = matrix;
        memset(&fake, 0, sizeof fake);
        assert_true(run_both(&s));
        assert_int_equal(fake.desc.epilogue, matrix ? CUBLASLT_EPILOGUE_RELU
                                                    : CUBLASLT_EPILOGUE_RELU_BIAS);
        assert_int_equal(fake.desc.compute, matrix
                                                ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                : CUBLAS_COMPUTE_32F);
        assert_int_equal(s.plan[0].lt_form.copy_c, matrix);
        check_same(&s, matrix ? "gemm, C [M, N]" : "gemm, C [N]");
        step_free(&s);
    }
}

/* No algorithm from the heuristics: cuBLAS and the epilogue kernel, with
 * the reason in the step's runner. */
static void test_no_algorithm(void **state)
{
    (void)state;
    const int64_t xs[2] = {3, 4}, ws[2] = {4, 5};
    const int32_t relu = DFG_POST_RELU;
    dfg_attrs a = post_ops(1, &relu);
    dfg_type in[2] = {type_of(2, xs), type_of(2, ws)};
    step s;
    step_make(&s, DFG_OP_MATMUL, &a, 2, in);
    memset(&fake, 0, sizeof fake);
    fake.no_algorithm = 1;
    assert_false(run_both(&s));
    assert_int_equal(fake.matmuls, 0);
    char buf[160];
    assert_string_equal(dfg_cuda_step_runs_on(&s.plan[0], buf, sizeof buf),
                        "cuBLAS + epilogue kernel (cuBLASLt: its heuristics "
                        "offer no algorithm for this form within the step's "
                        "workspace)");
    step_free(&s);
    /* Heuristics that fail leave the step to cuBLAS too, saying so. */
    step_make(&s, DFG_OP_MATMUL, &a, 2, in);
    memset(&fake, 0, sizeof fake);
    fake.no_algorithm = 2;
    assert_false(run_both(&s));
    assert_string_equal(s.plan[0].lt_why, "its heuristics failed on this "
                                          "form");
    step_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matmul_forms),
        cmocka_unit_test(test_gemm_forms),
        cmocka_unit_test(test_no_algorithm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
