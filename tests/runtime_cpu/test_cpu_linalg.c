/* CPU kernels for matmul, gemm, conv2d and the pools, against double
 * references on seeded random data. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "ir/geometry/conv_geometry.h"
#include "runtime/cpu_workspace_rule.h"
#include "tests/runtime_cpu/cpu_kernel_check.h"
#include "ir/op_table.h"

#define DIMS(...) (int64_t[]){__VA_ARGS__}
#define N_DIMS(...) ((int32_t)(sizeof(DIMS(__VA_ARGS__)) / sizeof(int64_t)))
#define T(dt, ...) check_type(dt, N_DIMS(__VA_ARGS__), DIMS(__VA_ARGS__))

static double tolerance(dfg_dtype dtype)
{
    /* f32 accumulates in f32; f16 and bf16 round the result to 11 and 8
     * significant bits. */
    return dtype == DFG_F32 ? 1e-5 : dtype == DFG_F16 ? 2e-3 : 1e-2;
}

static double max_error_seen = 0.0;

static void expect_close(const check_tensor *out, const double *ref,
                         const char *what)
{
    double err = check_rel_error(out, ref);
    if (out->type.dtype == DFG_F32 && err > max_error_seen)
        max_error_seen = err;
    if (!(err < tolerance(out->type.dtype)))
        fail_msg("%s (%s): relative error %g", what,
                 dfg_dtype_name(out->type.dtype), err);
}

/* ---- matmul ------------------------------------------------------------- */

/* Index, in matrices, of the batch entry of an operand whose batch dims
 * (rank own, dims) align right under the output's batch index idx. */
static int64_t batch_index(int32_t out_rank, const int64_t *idx,
                           int32_t own, const int64_t *dims)
{
    int64_t at = 0;
    for (int32_t d = 0; d < own; d++) {
        int64_t i = idx[out_rank - own + d];
        at = at * dims[d] + (dims[d] == 1 ? 0 : i);
    }
    return at;
}

static void matmul_ref(const check_tensor *a, const check_tensor *b,
                       const dfg_type *out, double *ref)
{
    int32_t ra = a->type.rank, rb = b->type.rank;
    int64_t m = ra >= 2 ? a->type.shape[ra - 2] : 1, k = a->type.shape[ra - 1];
    int64_t n = rb >= 2 ? b->type.shape[rb - 1] : 1;
    int32_t batch_rank = out->rank - (ra >= 2) - (rb >= 2);
    int64_t batches = 1;
    for (int32_t d = 0; d < batch_rank; d++)
        batches *= out->shape[d];
    for (int64_t t = 0; t < batches; t++) {
        int64_t idx[DFG_MAX_RANK], rest = t;
        for (int32_t d = batch_rank - 1; d >= 0; d--) {
            idx[d] = rest % out->shape[d];
            rest /= out->shape[d];
        }
        int64_t ia = batch_index(batch_rank, idx, ra > 2 ? ra - 2 : 0,
                                 a->type.shape);
        int64_t ib = batch_index(batch_rank, idx, rb > 2 ? rb - 2 : 0,
                                 b->type.shape);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double acc = 0.0;
                for (int64_t p = 0; p < k; p++)
                    acc += check_get(a, (ia * m + i) * k + p) *
                           check_get(b, (ib * k + p) * n + j);
                ref[(t * m + i) * n + j] = acc;
            }
    }
}

static void check_matmul(dfg_type ta, dfg_type tb)
{
    check_tensor a = check_random(ta), b = check_random(tb);
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    check_tensor *in[2] = {&a, &b};
    dfg_type to;
    check_infer(DFG_OP_MATMUL, &attrs, 2, in, 1, &to);
    check_tensor y = check_empty(to);
    check_tensor *out[1] = {&y};
    assert_int_equal(check_run(dfg_cpu_matmul, DFG_OP_MATMUL, &attrs, 2, in,
                               1, out, NULL, 0), DFG_OK);
    double *ref = malloc((size_t)y.numel * sizeof *ref);
    matmul_ref(&a, &b, &to, ref);
    expect_close(&y, ref, "matmul");
    free(ref);
    check_tensor_free(&a);
    check_tensor_free(&b);
    check_tensor_free(&y);
}

static void test_matmul(void **state)
{
    (void)state;
    check_seed(1);
    const dfg_dtype dtypes[3] = {DFG_F32, DFG_F16, DFG_BF16};
    for (int i = 0; i < 3; i++) {
        dfg_dtype dt = dtypes[i];
        check_matmul(T(dt, 3, 4), T(dt, 4, 5));
        check_matmul(T(dt, 2, 3, 7), T(dt, 7, 5));        /* shared b */
        check_matmul(T(dt, 2, 1, 3, 4), T(dt, 3, 4, 6));  /* broadcast */
        check_matmul(T(dt, 1, 3, 4), T(dt, 5, 2, 4, 3));  /* broadcast */
        check_matmul(T(dt, 3, 5), T(dt, 2, 5, 4));        /* batched b */
        check_matmul(T(dt, 4), T(dt, 4, 5));              /* 1-D a */
        check_matmul(T(dt, 2, 3, 4), T(dt, 4));           /* 1-D b */
        check_matmul(T(dt, 6), T(dt, 6));                 /* dot */
        check_matmul(T(dt, 4), T(dt, 3, 4, 2));           /* 1-D a, batch */
    }
    /* Crossing the 128-wide tiles of the narrow path, and a large f32. */
    check_matmul(T(DFG_F16, 130, 200), T(DFG_F16, 200, 140));
    check_matmul(T(DFG_F32, 2, 96, 300), T(DFG_F32, 2, 300, 80));
}

static void test_matmul_rejects_bad_shapes(void **state)
{
    (void)state;
    check_tensor a = check_random(T(DFG_F32, 3, 4));
    check_tensor b = check_random(T(DFG_F32, 5, 6));
    check_tensor y = check_empty(T(DFG_F32, 3, 6));
    check_tensor *in[2] = {&a, &b}, *out[1] = {&y};
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    assert_int_equal(check_run(dfg_cpu_matmul, DFG_OP_MATMUL, &attrs, 2, in,
                               1, out, NULL, 0), DFG_ERR_SHAPE);
    check_tensor_free(&a);
    check_tensor_free(&b);
    check_tensor_free(&y);
}

/* ---- gemm --------------------------------------------------------------- */

static void check_gemm(dfg_dtype dt, int trans_a, int trans_b, int64_t m,
                       int64_t k, int64_t n, const dfg_type *c_type)
{
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.trans_a = trans_a;
    attrs.trans_b = trans_b;
    attrs.alpha = 0.75f;
    attrs.beta = 1.25f;
    check_tensor a = check_random(trans_a ? T(dt, k, m) : T(dt, m, k));
    check_tensor b = check_random(trans_b ? T(dt, n, k) : T(dt, k, n));
    check_tensor c = {{0}, NULL, 0};
    if (c_type)
        c = check_random(*c_type);
    check_tensor *in[3] = {&a, &b, c_type ? &c : NULL};
    dfg_type to;
    check_infer(DFG_OP_GEMM, &attrs, 3, in, 1, &to);
    check_tensor y = check_empty(to);
    check_tensor *out[1] = {&y};
    assert_int_equal(check_run(dfg_cpu_gemm, DFG_OP_GEMM, &attrs, 3, in, 1,
                               out, NULL, 0), DFG_OK);
    double *ref = malloc((size_t)(m * n) * sizeof *ref);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double acc = 0.0;
            for (int64_t p = 0; p < k; p++)
                acc += check_get(&a, trans_a ? p * m + i : i * k + p) *
                       check_get(&b, trans_b ? j * k + p : p * n + j);
            double bias = 0.0;
            if (c_type) {
                int32_t r = c_type->rank;
                int64_t rows = r == 2 ? c_type->shape[0] : 1;
                int64_t cols = r >= 1 ? c_type->shape[r - 1] : 1;
                bias = check_get(&c, (rows == 1 ? 0 : i) * cols +
                                         (cols == 1 ? 0 : j));
            }
            ref[i * n + j] = 0.75 * acc + 1.25 * bias;
        }
    expect_close(&y, ref, "gemm");
    free(ref);
    check_tensor_free(&a);
    check_tensor_free(&b);
    check_tensor_free(&c);
    check_tensor_free(&y);
}

static void test_gemm(void **state)
{
    (void)state;
    check_seed(2);
    const int64_t m = 7, k = 9, n = 5;
    const dfg_type biases[5] = {T(DFG_F32, 5), T(DFG_F32, 7, 1),
                                T(DFG_F32, 7, 5), T(DFG_F32, 1, 5),
                                check_type(DFG_F32, 0, NULL)};
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            check_gemm(DFG_F32, ta, tb, m, k, n, NULL);
            for (int c = 0; c < 5; c++)
                check_gemm(DFG_F32, ta, tb, m, k, n, &biases[c]);
            dfg_type c16 = T(DFG_F16, m, n), cb16 = T(DFG_BF16, n);
            dfg_type c_large = T(DFG_F32, 150, 1);
            check_gemm(DFG_F16, ta, tb, m, k, n, &c16);
            check_gemm(DFG_BF16, ta, tb, m, k, n, &cb16);
            check_gemm(DFG_F32, ta, tb, 150, 260, 140, &c_large);
            /* One row or one column: matrix-vector products. */
            dfg_type row = T(DFG_F32, 1, 300), column = T(DFG_F32, 40, 1);
            check_gemm(DFG_F32, ta, tb, 1, 260, 300, &row);
            check_gemm(DFG_F32, ta, tb, 1, 260, 300, NULL);
            check_gemm(DFG_F32, ta, tb, 40, 33, 1, &column);
            check_gemm(DFG_F32, ta, tb, 1, 33, 1, NULL);
        }
}

/* ---- conv2d ------------------------------------------------------------- */

typedef struct conv_case {
    const char *name;
    int64_t n, c, h, w, m, kh, kw;
    int32_t stride[2], pads[4], dilation[2], group;
    int bias;
    int direct;      /* expects no workspace (1x1 direct, or depthwise) */
    int chunked;     /* expects im2col in several chunks */
} conv_case;

static void conv_ref(const check_tensor *x, const check_tensor *wt,
                     const check_tensor *b, const dfg_attrs *a,
                     const dfg_type *yt, double *ref)
{
    const int64_t *xs = x->type.shape, *ws = wt->type.shape, *ys = yt->shape;
    int64_t cg = ws[1], mg = ys[1] / a->group;
    for (int64_t n = 0; n < ys[0]; n++)
        for (int64_t m = 0; m < ys[1]; m++)
            for (int64_t oy = 0; oy < ys[2]; oy++)
                for (int64_t ox = 0; ox < ys[3]; ox++) {
                    double acc = b ? check_get(b, m) : 0.0;
                    int64_t g = m / mg;
                    for (int64_t c = 0; c < cg; c++)
                        for (int64_t ky = 0; ky < ws[2]; ky++)
                            for (int64_t kx = 0; kx < ws[3]; kx++) {
                                int64_t iy = oy * a->strides[0] - a->pads[0] +
                                             ky * a->dilations[0];
                                int64_t ix = ox * a->strides[1] - a->pads[1] +
                                             kx * a->dilations[1];
                                if (iy < 0 || iy >= xs[2] || ix < 0 ||
                                    ix >= xs[3])
                                    continue;
                                acc += check_get(x, ((n * xs[1] + g * cg + c) *
                                                         xs[2] + iy) * xs[3] +
                                                        ix) *
                                       check_get(wt, ((m * cg + c) * ws[2] +
                                                      ky) * ws[3] + kx);
                            }
                    ref[((n * ys[1] + m) * ys[2] + oy) * ys[3] + ox] = acc;
                }
}

#define GUARD 64

static void check_conv(const conv_case *cc, dfg_dtype dt)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.group = cc->group;
    memcpy(a.strides, cc->stride, sizeof a.strides);
    memcpy(a.dilations, cc->dilation, sizeof a.dilations);
    for (int i = 0; i < 4; i++)
        a.pads[i] = cc->pads[i];
    check_tensor x = check_random(T(dt, cc->n, cc->c, cc->h, cc->w));
    check_tensor wt = check_random(
        T(dt, cc->m, cc->c / cc->group, cc->kh, cc->kw));
    check_tensor b = {{0}, NULL, 0};
    if (cc->bias)
        b = check_random(T(dt, cc->m));
    check_tensor *in[3] = {&x, &wt, cc->bias ? &b : NULL};
    dfg_type yt;
    check_infer(DFG_OP_CONV2D, &a, 3, in, 1, &yt);
    check_tensor y = check_empty(yt);
    check_tensor *out[1] = {&y};

    dfg_type in_types[3] = {x.type, wt.type, b.type};
    if (!cc->bias)
        in_types[2].rank = -1;
    int64_t ws = dfg_workspace_conv2d(&a, in_types, 3, &yt, 1);
    int64_t k = cc->c / cc->group * cc->kh * cc->kw;
    /* at most one whole im2col matrix per slot (conv_geometry.h) */
    int64_t units = cc->n * cc->group;
    int64_t full = k * yt.shape[2] * yt.shape[3] * (int64_t)sizeof(float) *
                   (units < DFG_CONV_MAX_SLOTS ? units : DFG_CONV_MAX_SLOTS);
    int64_t bound = DFG_CONV_IM2COL_BUDGET_BYTES > k * 4
                        ? DFG_CONV_IM2COL_BUDGET_BYTES : k * 4;
    if (cc->direct)
        assert_int_equal(ws, 0);
    else
        assert_true(ws > 0 && ws <= bound && ws <= full);
    if (cc->chunked)
        assert_true(ws < full);

    /* Exactly the planned bytes, followed by a guard that must survive:
     * the kernel uses what the workspace rule promised, no more. */
    uint8_t *workspace = malloc((size_t)ws + GUARD);
    memset(workspace + ws, 0xa5, GUARD);
    /* Less than the least chunk (conv_geometry.h) is refused. */
    int64_t least = dfg_op_least_workspace(DFG_OP_CONV2D, &a, in_types, 3,
                                           &yt, 1);
    assert_true(least <= ws && (least > 0) == (ws > 0));
    /* (a conv of few filters runs a direct stencil, with none) */
    if (ws > 0 && !dfg_cpu_step_few_filters(DFG_OP_CONV2D, &a, in_types, 3,
                                            &yt, 1))
        assert_int_equal(check_run(dfg_cpu_conv2d, DFG_OP_CONV2D, &a, 3, in,
                                   1, out, workspace, least - 1),
                         DFG_ERR_INVALID_ARGUMENT);
    assert_int_equal(check_run(dfg_cpu_conv2d, DFG_OP_CONV2D, &a, 3, in, 1,
                               out, ws ? workspace : NULL, ws), DFG_OK);
    for (int i = 0; i < GUARD; i++)
        assert_int_equal(workspace[ws + i], 0xa5);

    double *ref = malloc((size_t)y.numel * sizeof *ref);
    conv_ref(&x, &wt, cc->bias ? &b : NULL, &a, &yt, ref);
    expect_close(&y, ref, cc->name);
    free(ref);
    free(workspace);
    check_tensor_free(&x);
    check_tensor_free(&wt);
    check_tensor_free(&b);
    check_tensor_free(&y);
}

static const conv_case conv_cases[] = {
    {"3x3 pad 1", 2, 3, 9, 8, 4, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, 1, 0, 0},
    {"stride 2, asymmetric pads", 1, 4, 11, 10, 6, 3, 3, {2, 2}, {0, 1, 2, 1},
     {1, 1}, 1, 0, 0, 0},
    {"stride (1,2), 5x3 kernel", 2, 3, 12, 13, 5, 5, 3, {1, 2}, {2, 0, 1, 1},
     {1, 1}, 1, 1, 0, 0},
    {"dilation 2", 1, 3, 12, 11, 4, 3, 3, {1, 1}, {2, 2, 2, 2}, {2, 2}, 1, 1,
     0, 0},
    {"dilation (2,1), stride 2", 2, 2, 13, 9, 3, 3, 2, {2, 2}, {1, 0, 0, 1},
     {2, 1}, 1, 0, 0, 0},
    {"group 2", 2, 6, 8, 7, 4, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 2, 1, 0, 0},
    /* Depthwise convs are direct stencils: no workspace either. */
    {"depthwise", 2, 5, 9, 9, 5, 3, 3, {2, 2}, {1, 1, 1, 1}, {1, 1}, 5, 1, 1,
     0},
    {"depthwise x2", 1, 4, 7, 8, 8, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 4, 0,
     1, 0},
    {"depthwise, dilation 2, asymmetric pads", 2, 6, 12, 11, 6, 3, 3, {1, 2},
     {2, 0, 1, 3}, {2, 2}, 6, 1, 1, 0},
    {"depthwise, row wider than a block", 1, 2, 5, 300, 2, 3, 5, {1, 1},
     {1, 2, 1, 2}, {1, 1}, 2, 1, 1, 0},
    {"1x1 direct", 2, 8, 6, 7, 5, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, 1, 1,
     0},
    {"1x1 direct, group 2", 2, 8, 5, 5, 6, 1, 1, {1, 1}, {0, 0, 0, 0},
     {1, 1}, 2, 0, 1, 0},
    {"1x1 stride 2", 1, 8, 7, 7, 5, 1, 1, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1, 1,
     0, 0},
    {"1x1 padded", 1, 3, 5, 5, 2, 1, 1, {1, 1}, {1, 0, 0, 1}, {1, 1}, 1, 1,
     0, 0},
    {"several im2col chunks", 2, 64, 33, 31, 8, 3, 3, {1, 1}, {1, 1, 1, 1},
     {1, 1}, 1, 1, 0, 1},
    {"one column over budget", 1, 30000, 3, 3, 2, 3, 3, {1, 1},
     {1, 1, 1, 1}, {1, 1}, 1, 0, 0, 1},
};

static void test_conv2d(void **state)
{
    (void)state;
    check_seed(3);
    for (size_t i = 0; i < sizeof conv_cases / sizeof conv_cases[0]; i++)
        check_conv(&conv_cases[i], DFG_F32);
    /* Narrow dtypes through the same paths (direct, im2col, groups). */
    const int narrow[] = {0, 1, 6, 9, 10, 14};
    for (size_t i = 0; i < sizeof narrow / sizeof narrow[0]; i++) {
        check_conv(&conv_cases[narrow[i]], DFG_F16);
        check_conv(&conv_cases[narrow[i]], DFG_BF16);
    }
}

static void test_conv2d_chunk_policy(void **state)
{
    (void)state;
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.pads[0] = a.pads[1] = a.pads[2] = a.pads[3] = 1;
    /* A ResNet-like 3x3 over 56x56x256: the full im2col would be 28 MiB. */
    dfg_type x = T(DFG_F32, 8, 256, 56, 56), w = T(DFG_F32, 256, 256, 3, 3);
    dfg_type y = T(DFG_F32, 8, 256, 56, 56);
    dfg_conv_geometry g;
    assert_int_equal(dfg_conv_geometry_make(&a, &x, &w, &y, &g), DFG_OK);
    assert_int_equal(g.k, 2304);
    assert_int_equal(g.chunk, DFG_CONV_IM2COL_BUDGET_BYTES / 4 / 2304);
    assert_true(dfg_conv_workspace_bytes(&g) <= DFG_CONV_IM2COL_BUDGET_BYTES);
    assert_true(dfg_conv_workspace_bytes(&g) < dfg_type_bytes(&y) / 8);
    assert_int_equal(g.slots, 1);
    assert_int_equal(dfg_conv_forward_workspace_bytes(&g),
                     dfg_conv_workspace_bytes(&g));

    /* Small images in a batch: several whole-image slots, in budget. */
    x = T(DFG_F32, 32, 16, 8, 8), w = T(DFG_F32, 16, 16, 3, 3);
    y = T(DFG_F32, 32, 16, 8, 8);
    assert_int_equal(dfg_conv_geometry_make(&a, &x, &w, &y, &g), DFG_OK);
    assert_int_equal(g.chunk, 64);
    assert_int_equal(g.slots, DFG_CONV_MAX_SLOTS);
    assert_int_equal(dfg_conv_forward_workspace_bytes(&g),
                     DFG_CONV_MAX_SLOTS * 144 * 64 * 4);

    /* Depthwise: a direct stencil, no workspace. */
    a.group = 16;
    w = T(DFG_F32, 16, 1, 3, 3);
    assert_int_equal(dfg_conv_geometry_make(&a, &x, &w, &y, &g), DFG_OK);
    assert_true(g.depthwise);
    assert_int_equal(dfg_conv_forward_workspace_bytes(&g), 0);
}

/* ---- pools -------------------------------------------------------------- */

typedef struct pool_case {
    int64_t n, c, h, w;
    int32_t kernel[2], stride[2], pads[4], dilation[2];
    int ceil_mode;
} pool_case;

static void pool_ref(const check_tensor *x, const dfg_attrs *a, int is_max,
                     const dfg_type *yt, double *ref)
{
    const int64_t *xs = x->type.shape, *ys = yt->shape;
    for (int64_t p = 0; p < ys[0] * ys[1]; p++)
        for (int64_t oy = 0; oy < ys[2]; oy++)
            for (int64_t ox = 0; ox < ys[3]; ox++) {
                double acc = is_max ? -INFINITY : 0.0;
                int64_t count = 0;
                for (int64_t ky = 0; ky < a->kernel[0]; ky++)
                    for (int64_t kx = 0; kx < a->kernel[1]; kx++) {
                        int64_t iy = oy * a->strides[0] - a->pads[0] +
                                     ky * a->dilations[0];
                        int64_t ix = ox * a->strides[1] - a->pads[1] +
                                     kx * a->dilations[1];
                        int in_padded = iy >= -a->pads[0] &&
                                        iy < xs[2] + a->pads[2] &&
                                        ix >= -a->pads[1] &&
                                        ix < xs[3] + a->pads[3];
                        int inside = iy >= 0 && iy < xs[2] && ix >= 0 &&
                                     ix < xs[3];
                        if (inside || (a->count_include_pad && in_padded))
                            count++;
                        if (!inside)
                            continue;
                        double v = check_get(x, (p * xs[2] + iy) * xs[3] + ix);
                        acc = is_max ? (v > acc ? v : acc) : acc + v;
                    }
                ref[(p * ys[2] + oy) * ys[3] + ox] =
                    is_max ? acc : acc / (double)count;
            }
}

static void check_pool(const pool_case *pc, dfg_op op, int count_include_pad,
                       dfg_dtype dt)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    memcpy(a.kernel, pc->kernel, sizeof a.kernel);
    memcpy(a.strides, pc->stride, sizeof a.strides);
    memcpy(a.dilations, pc->dilation, sizeof a.dilations);
    for (int i = 0; i < 4; i++)
        a.pads[i] = pc->pads[i];
    a.ceil_mode = pc->ceil_mode;
    a.count_include_pad = count_include_pad;
    check_tensor x = check_random(T(dt, pc->n, pc->c, pc->h, pc->w));
    check_tensor *in[1] = {&x};
    dfg_type yt;
    check_infer(op, &a, 1, in, 1, &yt);
    check_tensor y = check_empty(yt);
    check_tensor *out[1] = {&y};
    assert_int_equal(check_run(dfg_cpu_pool, op, &a, 1, in, 1, out, NULL, 0),
                     DFG_OK);
    double *ref = malloc((size_t)y.numel * sizeof *ref);
    pool_ref(&x, &a, op == DFG_OP_MAX_POOL, &yt, ref);
    expect_close(&y, ref, dfg_op_get(op)->name);
    free(ref);
    check_tensor_free(&x);
    check_tensor_free(&y);
}

static const pool_case pool_cases[] = {
    {2, 3, 8, 8, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, 0},
    {1, 2, 11, 10, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 0},
    {1, 2, 11, 10, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 1},
    {2, 2, 10, 9, {3, 2}, {2, 3}, {1, 0, 0, 1}, {1, 1}, 1},
    {1, 3, 12, 13, {3, 3}, {1, 2}, {2, 1, 2, 1}, {2, 2}, 0},
    {1, 3, 12, 13, {3, 3}, {2, 2}, {1, 1, 0, 1}, {2, 1}, 1},
    {1, 2, 7, 300, {1, 3}, {1, 1}, {0, 1, 0, 1}, {1, 1}, 0},
    {1, 4, 9, 9, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 0},   /* inception */
    {1, 3, 15, 15, {3, 3}, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1}, /* ceil overhang */
    {1, 2, 21, 30, {2, 10}, {1, 3}, {0, 2, 0, 2}, {1, 1}, 0}, /* > 8 columns, > 8 rows */
};

static void test_pools(void **state)
{
    (void)state;
    check_seed(4);
    for (size_t i = 0; i < sizeof pool_cases / sizeof pool_cases[0]; i++) {
        check_pool(&pool_cases[i], DFG_OP_MAX_POOL, 0, DFG_F32);
        check_pool(&pool_cases[i], DFG_OP_AVERAGE_POOL, 0, DFG_F32);
        check_pool(&pool_cases[i], DFG_OP_AVERAGE_POOL, 1, DFG_F32);
    }
    check_pool(&pool_cases[3], DFG_OP_MAX_POOL, 0, DFG_F16);
    check_pool(&pool_cases[3], DFG_OP_AVERAGE_POOL, 1, DFG_BF16);
}

/* NaN wins a max pool: exactly the outputs whose window holds the NaN
 * input are NaN (the f32 path folds one tap at a time over a row). */
static void test_max_pool_nan(void **state)
{
    (void)state;
    const pool_case pc = {1, 1, 9, 9, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 0};
    dfg_attrs a;
    dfg_attrs_init(&a);
    memcpy(a.kernel, pc.kernel, sizeof a.kernel);
    memcpy(a.strides, pc.stride, sizeof a.strides);
    memcpy(a.dilations, pc.dilation, sizeof a.dilations);
    for (int i = 0; i < 4; i++)
        a.pads[i] = pc.pads[i];
    check_seed(5);
    check_tensor x = check_random(T(DFG_F32, 1, 1, 9, 9));
    ((float *)x.data)[4 * 9 + 6] = NAN; /* row 4, column 6 */
    check_tensor y = check_empty(x.type);
    check_tensor *in[1] = {&x}, *out[1] = {&y};
    assert_int_equal(check_run(dfg_cpu_pool, DFG_OP_MAX_POOL, &a, 1, in, 1,
                               out, NULL, 0),
                     DFG_OK);
    for (int64_t oy = 0; oy < 9; oy++)
        for (int64_t ox = 0; ox < 9; ox++) {
            int covers = oy >= 3 && oy <= 5 && ox >= 5 && ox <= 7;
            assert_int_equal(isnan(((float *)y.data)[oy * 9 + ox]) != 0,
                             covers);
        }
    check_tensor_free(&x);
    check_tensor_free(&y);
}

static int report_max_error(void **state)
{
    (void)state;
    printf("max relative error (f32): %.3g\n", max_error_seen);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_matmul_rejects_bad_shapes),
        cmocka_unit_test(test_gemm),
        cmocka_unit_test(test_conv2d),
        cmocka_unit_test(test_conv2d_chunk_policy),
        cmocka_unit_test(test_pools),
        cmocka_unit_test(test_max_pool_nan),
    };
    return cmocka_run_group_tests(tests, NULL, report_max_error);
}
