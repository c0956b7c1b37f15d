/* CPU kernels of the elementwise ops (unary, binary, compare, where, cast)
 * and the kernel table, against double-precision references on seeded
 * random data: relative error below 1e-5 for f32 and 1e-2 for f16/bf16,
 * exact results for integer dtypes, bool outputs and casts. */
#include <float.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "tests/runtime_cpu/elementwise_reference.h"
#include "runtime/cpu/kernels.h"

static const dfg_dtype int_dtypes[] = {DFG_I32, DFG_I64, DFG_U8, DFG_I8,
                                       DFG_I16, DFG_U16};

static dfg_status run(dfg_op op, const dfg_attrs *attrs, int32_t n_in,
                      check_tensor *const *in, check_tensor *out)
{
    return check_run(dfg_cpu_kernel_for(op), op, attrs, n_in, in, 1, &out, NULL, 0);
}

/* ---- unary ----------------------------------------------------------------- */

static double ref_unary(dfg_op op, const dfg_attrs *a, double x)
{
    switch (op) {
    case DFG_OP_NEG: return -x;
    case DFG_OP_ABS: return fabs(x);
    case DFG_OP_EXP: return exp(x);
    case DFG_OP_LOG: return log(x);
    case DFG_OP_SQRT: return sqrt(x);
    case DFG_OP_RECIPROCAL: return 1.0 / x;
    case DFG_OP_RELU: return x > 0 ? x : 0;
    case DFG_OP_LEAKY_RELU: return x > 0 ? x : a->alpha * x;
    case DFG_OP_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case DFG_OP_TANH: return tanh(x);
    case DFG_OP_GELU:
        if (a->approximate == DFG_GELU_TANH)
            return 0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
        return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case DFG_OP_ERF: return erf(x);
    case DFG_OP_CLIP: return fmin(fmax(x, a->clip_min), a->clip_max);
    default: return NAN;
    }
}

static void unary_attrs(dfg_attrs *a, int variant)
{
    dfg_attrs_init(a);
    a->alpha = 0.1f;
    a->clip_min = -0.5f;
    a->clip_max = 0.3f;
    a->approximate = variant ? DFG_GELU_TANH : DFG_GELU_ERF;
}

static void test_unary_float(void **state)
{
    (void)state;
    const int64_t small[] = {3, 5, 7, 11}, large[] = {70001};
    check_seed(1);
    for (size_t d = 0; d < 3; d++) {
        for (int size = 0; size < 2; size++) {
            dfg_type t = size ? check_type(check_float_dtypes[d], 1, large)
                              : check_type(check_float_dtypes[d], 4, small);
            for (dfg_op op = DFG_OP_NEG; op <= DFG_OP_CLIP; op++) {
                for (int variant = 0; variant < 2; variant++) {
                    dfg_attrs a;
                    unary_attrs(&a, variant);
                    int positive = op == DFG_OP_LOG || op == DFG_OP_SQRT;
                    check_tensor x = ref_scaled(t, 3.0, positive);
                    check_tensor y = check_empty(t), inplace = ref_copy(&x);
                    double *ref = malloc(sizeof(double) * (size_t)x.numel);
                    for (int64_t i = 0; i < x.numel; i++)
                        ref[i] = ref_unary(op, &a, check_get(&x, i));
                    check_tensor *in[] = {&x};
                    assert_int_equal(run(op, &a, 1, in, &y), DFG_OK);
                    check_expect_close(dfg_op_get(op)->name, &y, ref);
                    check_tensor *self[] = {&inplace};
                    assert_int_equal(run(op, &a, 1, self, &inplace), DFG_OK);
                    assert_memory_equal(inplace.data, y.data,
                                        (size_t)x.numel * dfg_dtype_size(t.dtype));
                    free(ref);
                    check_tensor_free(&x), check_tensor_free(&y);
                    check_tensor_free(&inplace);
                }
            }
        }
    }
}

/* GELU (erf form) on f32 element by element against double over a grid
 * of [-9, 9] and the specials: relative error within 1e-6 (1 + x^2), the
 * negative tail included, where 1 + erf(x / sqrt 2) cancels (x^2: erfc's
 * own condition there, 2 b^2 for b = -x / sqrt 2, times the rounding of
 * b), NaN kept, gelu(+inf) = +inf, gelu(-inf) NaN (-inf times 0, as
 * PyTorch's x * 0.5 * (1 + erf(x / sqrt 2)) gives). */
static void test_gelu_f32_relative_error(void **state)
{
    (void)state;
    const int64_t shape[] = {36003};
    dfg_attrs a;
    unary_attrs(&a, 0);
    check_tensor x = check_empty(check_type(DFG_F32, 1, shape));
    check_tensor y = check_empty(x.type);
    float *xv = x.data;
    for (int64_t i = 0; i < 36000; i++)
        xv[i] = -9.0f + 18.0f * (float)i / 36000.0f;
    xv[36000] = NAN, xv[36001] = INFINITY, xv[36002] = -INFINITY;
    check_tensor *in[] = {&x};
    assert_int_equal(run(DFG_OP_GELU, &a, 1, in, &y), DFG_OK);
    const float *yv = y.data;
    for (int64_t i = 0; i < 36000; i++) {
        double want = 0.5 * xv[i] * erfc(-xv[i] / sqrt(2.0));
        double err = fabs(yv[i] - want);
        if (err > 1e-6 * (1.0 + (double)xv[i] * xv[i]) * fabs(want) &&
            err > 1e-37) {
            print_error("gelu(%.9g) = %.9g, want %.9g\n", xv[i], yv[i], want);
            fail();
        }
    }
    assert_true(isnan(yv[36000]));
    assert_true(yv[36001] == INFINITY);
    assert_true(isnan(yv[36002]));
    check_tensor_free(&x), check_tensor_free(&y);
}

static int64_t ref_unary_int(dfg_op op, int64_t x)
{
    switch (op) {
    case DFG_OP_NEG: return (int64_t)(0 - (uint64_t)x);
    case DFG_OP_ABS: return x < 0 ? (int64_t)(0 - (uint64_t)x) : x;
    case DFG_OP_RELU: return x > 0 ? x : 0;
    default: return x < -100 ? -100 : x > 50 ? 50 : x; /* clip below */
    }
}

static void test_unary_integer_exact(void **state)
{
    (void)state;
    const dfg_op ops[] = {DFG_OP_NEG, DFG_OP_ABS, DFG_OP_RELU, DFG_OP_CLIP};
    const int64_t shape[] = {70003};
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.clip_min = -100.7f;
    a.clip_max = 50.2f;
    check_seed(2);
    for (size_t d = 0; d < sizeof int_dtypes / sizeof *int_dtypes; d++) {
        for (size_t o = 0; o < 4; o++) {
            check_tensor x = check_random(check_type(int_dtypes[d], 1, shape));
            check_tensor y = check_empty(x.type);
            check_tensor *in[] = {&x};
            assert_int_equal(run(ops[o], &a, 1, in, &y), DFG_OK);
            for (int64_t i = 0; i < x.numel; i++) {
                int64_t want = ref_wrap(x.type.dtype, ref_unary_int(ops[o], ref_get_int(&x, i)));
                if (ref_get_int(&y, i) != want)
                    fail_msg("%s on %s: element %lld = %lld, expected %lld",
                             dfg_op_get(ops[o])->name, dfg_dtype_name(x.type.dtype),
                             (long long)i, (long long)ref_get_int(&y, i),
                             (long long)want);
            }
            check_tensor_free(&x), check_tensor_free(&y);
        }
    }
}

/* ---- binary, compare, where ----------------------------------------------- */

typedef struct shape_pair {
    int32_t rank_a, rank_b;
    int64_t a[4], b[4];
} shape_pair;

static const shape_pair pairs[] = {
    {3, 2, {2, 1, 4}, {3, 1}},
    {0, 2, {0}, {4, 5}},          /* scalar of rank 0 */
    {1, 4, {1}, {5, 1, 1, 3}},
    {4, 1, {5, 1, 1, 3}, {1}},
    {2, 2, {4, 5}, {4, 5}},
    {2, 1, {300, 257}, {257}},    /* large: parallel, rows of many blocks */
    {2, 2, {300, 1}, {1, 257}},
    {4, 4, {2, 6, 5, 7}, {2, 6, 1, 1}}, /* squeeze-excite x * s[n, c] */
    {4, 3, {1, 6, 5, 7}, {6, 1, 1}},    /* a bias per channel */
    {1, 4, {1}, {1, 6, 5, 7}},          /* a scalar first */
};
#define N_PAIRS (sizeof pairs / sizeof pairs[0])

static double ref_binary(dfg_op op, double x, double y)
{
    switch (op) {
    case DFG_OP_ADD: return x + y;
    case DFG_OP_SUB: return x - y;
    case DFG_OP_MUL: return x * y;
    case DFG_OP_DIV: return x / y;
    case DFG_OP_POW: return pow(x, y);
    case DFG_OP_MAX: return fmax(x, y);
    default: return fmin(x, y);
    }
}

static int64_t ref_binary_int(dfg_op op, int64_t x, int64_t y)
{
    switch (op) {
    case DFG_OP_ADD: return (int64_t)((uint64_t)x + (uint64_t)y);
    case DFG_OP_SUB: return (int64_t)((uint64_t)x - (uint64_t)y);
    case DFG_OP_MUL: return (int64_t)((uint64_t)x * (uint64_t)y);
    case DFG_OP_DIV:
        if (y == 0)
            return 0;
        return y == -1 ? (int64_t)(0 - (uint64_t)x) : x / y;
    case DFG_OP_MAX: return x > y ? x : y;
    default: return x < y ? x : y;
    }
}

static void test_binary_float_broadcast(void **state)
{
    (void)state;
    dfg_attrs a;
    dfg_attrs_init(&a);
    check_seed(3);
    for (size_t d = 0; d < 3; d++) {
        for (size_t p = 0; p < N_PAIRS; p++) {
            for (dfg_op op = DFG_OP_ADD; op <= DFG_OP_MIN; op++) {
                dfg_type ta = check_type(check_float_dtypes[d], pairs[p].rank_a, pairs[p].a);
                dfg_type tb = check_type(check_float_dtypes[d], pairs[p].rank_b, pairs[p].b);
                check_tensor x = ref_scaled(ta, 2.0, op == DFG_OP_POW);
                check_tensor y = ref_scaled(tb, 2.0, 0);
                check_tensor out = check_empty(ref_broadcast_type(ta.dtype, &ta, &tb));
                double *ref = malloc(sizeof(double) * (size_t)out.numel);
                for (int64_t i = 0; i < out.numel; i++)
                    ref[i] = ref_binary(op, check_get(&x, ref_broadcast_offset(&out.type, &ta, i)),
                                        check_get(&y, ref_broadcast_offset(&out.type, &tb, i)));
                check_tensor *in[] = {&x, &y};
                assert_int_equal(run(op, &a, 2, in, &out), DFG_OK);
                char what[64];
                snprintf(what, sizeof what, "%s (pair %zu)", dfg_op_get(op)->name, p);
                check_expect_close(what, &out, ref);
                if (dfg_type_equal(&ta, &out.type)) { /* out over input 0 */
                    check_tensor *self[] = {&x, &y};
                    assert_int_equal(run(op, &a, 2, self, &x), DFG_OK);
                    assert_memory_equal(x.data, out.data,
                                        (size_t)out.numel * dfg_dtype_size(ta.dtype));
                }
                free(ref);
                check_tensor_free(&x), check_tensor_free(&y), check_tensor_free(&out);
            }
        }
    }
}

/* The f32 runs where IEEE special values decide: pow by the constants 2
 * and 0.5 (a square, a square root) equals powf bit for bit, -0 and -inf
 * included; max and min return NaN when either operand is NaN, whether
 * the operands are contiguous or one is broadcast. */
static void test_binary_f32_special_values(void **state)
{
    (void)state;
    const float values[] = {-INFINITY, -2.5f, -0.0f, 0.0f, 0x1p-149f, 0.25f,
                            3.0f, 1e30f, INFINITY, NAN, -1e-30f};
    const float exponents[] = {2.0f, 0.5f, 3.0f, -0.5f};
    const int64_t n = sizeof values / sizeof values[0], one = 1;
    dfg_attrs a;
    dfg_attrs_init(&a);
    check_tensor x = check_empty(check_type(DFG_F32, 1, &n));
    check_tensor out = check_empty(x.type);
    memcpy(x.data, values, sizeof values);
    for (size_t e = 0; e < sizeof exponents / sizeof exponents[0]; e++) {
        check_tensor y = check_empty(check_type(DFG_F32, 1, &one));
        ((float *)y.data)[0] = exponents[e];
        check_tensor *in[] = {&x, &y};
        assert_int_equal(run(DFG_OP_POW, &a, 2, in, &out), DFG_OK);
        for (int64_t i = 0; i < n; i++) {
            float got = ((float *)out.data)[i];
            float want = powf(values[i], exponents[e]);
            if (isnan(want) ? !isnan(got) : memcmp(&got, &want, sizeof got))
                fail_msg("pow(%a, %a) = %a, powf gives %a", (double)values[i],
                         (double)exponents[e], (double)got, (double)want);
        }
        check_tensor_free(&y);
    }
    const dfg_op ops[] = {DFG_OP_MAX, DFG_OP_MIN};
    for (size_t o = 0; o < 2; o++) {
        for (int broadcast = 0; broadcast < 2; broadcast++) {
            check_tensor y = check_empty(check_type(DFG_F32, 1, broadcast ? &one : &n));
            for (int64_t i = 0; i < y.numel; i++)
                ((float *)y.data)[i] = i % 3 == 1 ? NAN : 1.0f;
            check_tensor *in[] = {&x, &y};
            assert_int_equal(run(ops[o], &a, 2, in, &out), DFG_OK);
            for (int64_t i = 0; i < n; i++) {
                float u = values[i], v = ((float *)y.data)[broadcast ? 0 : i];
                float got = ((float *)out.data)[i];
                if (isnan(u) || isnan(v))
                    assert_true(isnan(got));
                else
                    assert_true(got == (o ? fminf(u, v) : fmaxf(u, v)));
            }
            check_tensor_free(&y);
        }
    }
    check_tensor_free(&x), check_tensor_free(&out);
}

static void test_binary_integer_exact(void **state)
{
    (void)state;
    const dfg_op ops[] = {DFG_OP_ADD, DFG_OP_SUB, DFG_OP_MUL, DFG_OP_DIV,
                          DFG_OP_MAX, DFG_OP_MIN};
    dfg_attrs a;
    dfg_attrs_init(&a);
    check_seed(4);
    for (size_t d = 0; d < sizeof int_dtypes / sizeof *int_dtypes; d++) {
        for (size_t p = 0; p < N_PAIRS; p++) {
            for (size_t o = 0; o < 6; o++) {
                dfg_type ta = check_type(int_dtypes[d], pairs[p].rank_a, pairs[p].a);
                dfg_type tb = check_type(int_dtypes[d], pairs[p].rank_b, pairs[p].b);
                /* Full-range values exercise wrap-around; small ones give
                 * divisions with non-trivial quotients, and zeros. */
                int lo = int_dtypes[d] == DFG_U8 || int_dtypes[d] == DFG_U16 ? 0 : -9;
                check_tensor x = o == 3 ? ref_small_ints(ta, 10 * lo, 200) : check_random(ta);
                check_tensor y = o == 3 ? ref_small_ints(tb, lo, 9) : check_random(tb);
                check_tensor out = check_empty(ref_broadcast_type(ta.dtype, &ta, &tb));
                check_tensor *in[] = {&x, &y};
                assert_int_equal(run(ops[o], &a, 2, in, &out), DFG_OK);
                for (int64_t i = 0; i < out.numel; i++) {
                    int64_t u = ref_get_int(&x, ref_broadcast_offset(&out.type, &ta, i));
                    int64_t v = ref_get_int(&y, ref_broadcast_offset(&out.type, &tb, i));
                    int64_t want = ref_wrap(ta.dtype, ref_binary_int(ops[o], u, v));
                    if (ref_get_int(&out, i) != want)
                        fail_msg("%s on %s: %lld, %lld -> %lld, expected %lld",
                                 dfg_op_get(ops[o])->name, dfg_dtype_name(ta.dtype),
                                 (long long)u, (long long)v,
                                 (long long)ref_get_int(&out, i), (long long)want);
                }
                check_tensor_free(&x), check_tensor_free(&y), check_tensor_free(&out);
            }
        }
    }
}

static void test_compare_exact(void **state)
{
    (void)state;
    const dfg_dtype dtypes[] = {DFG_F32, DFG_F16, DFG_BF16, DFG_I32, DFG_I64,
                                DFG_U8, DFG_BOOL, DFG_I8, DFG_I16, DFG_U16};
    dfg_attrs a;
    dfg_attrs_init(&a);
    check_seed(5);
    for (size_t d = 0; d < sizeof dtypes / sizeof *dtypes; d++) {
        int lo = dtypes[d] == DFG_U8 || dtypes[d] == DFG_BOOL ||
                 dtypes[d] == DFG_U16 ? 0 : -2;
        int hi = dtypes[d] == DFG_BOOL ? 1 : 2;
        for (dfg_op op = DFG_OP_EQUAL; op <= DFG_OP_GREATER; op++) {
            int64_t hits = 0, total = 0; /* both outcomes must occur */
            for (size_t p = 0; p < N_PAIRS; p++) {
                dfg_type ta = check_type(dtypes[d], pairs[p].rank_a, pairs[p].a);
                dfg_type tb = check_type(dtypes[d], pairs[p].rank_b, pairs[p].b);
                check_tensor x = ref_small_ints(ta, lo, hi), y = ref_small_ints(tb, lo, hi);
                check_tensor out = check_empty(ref_broadcast_type(DFG_BOOL, &ta, &tb));
                check_tensor *in[] = {&x, &y};
                assert_int_equal(run(op, &a, 2, in, &out), DFG_OK);
                total += out.numel;
                for (int64_t i = 0; i < out.numel; i++) {
                    double u = ref_get(&x, ref_broadcast_offset(&out.type, &ta, i));
                    double v = ref_get(&y, ref_broadcast_offset(&out.type, &tb, i));
                    int want = op == DFG_OP_EQUAL ? u == v : op == DFG_OP_LESS ? u < v : u > v;
                    assert_int_equal(ref_get_int(&out, i), want);
                    hits += want;
                }
                check_tensor_free(&x), check_tensor_free(&y), check_tensor_free(&out);
            }
            assert_true(hits > 0 && hits < total);
        }
    }
}

static void test_where_broadcasts_all_three(void **state)
{
    (void)state;
    const dfg_dtype dtypes[] = {DFG_F32, DFG_F16, DFG_I64, DFG_U8};
    const int64_t c1[] = {2, 1, 4}, x1[] = {3, 1}, y1[] = {1};
    const int64_t c2[] = {300, 257}, x2[] = {257}, y2[] = {300, 1};
    const int64_t c3[] = {5, 67}, x3[] = {5, 1}, y3[] = {67};
    /* the runs walked: general strides; cond and x contiguous, y one
     * value along them; all three contiguous; x one value */
    const dfg_type shapes[4][3] = {
        {check_type(DFG_BOOL, 3, c1), check_type(DFG_F32, 2, x1), check_type(DFG_F32, 0, y1)},
        {check_type(DFG_BOOL, 2, c2), check_type(DFG_F32, 1, x2), check_type(DFG_F32, 2, y2)},
        {check_type(DFG_BOOL, 2, c3), check_type(DFG_F32, 2, c3), check_type(DFG_F32, 2, c3)},
        {check_type(DFG_BOOL, 2, c3), check_type(DFG_F32, 2, x3), check_type(DFG_F32, 1, y3)},
    };
    dfg_attrs a;
    dfg_attrs_init(&a);
    check_seed(6);
    for (size_t d = 0; d < 4; d++) {
        for (int s = 0; s < 4; s++) {
            dfg_type tc = shapes[s][0], tx = shapes[s][1], ty = shapes[s][2];
            tx.dtype = ty.dtype = dtypes[d];
            check_tensor cond = ref_small_ints(tc, 0, 1);
            check_tensor x = ref_small_ints(tx, 1, 100), y = ref_small_ints(ty, 101, 200);
            dfg_type txy = ref_broadcast_type(dtypes[d], &tx, &ty);
            check_tensor out = check_empty(ref_broadcast_type(dtypes[d], &tc, &txy));
            check_tensor *in[] = {&cond, &x, &y};
            assert_int_equal(run(DFG_OP_WHERE, &a, 3, in, &out), DFG_OK);
            for (int64_t i = 0; i < out.numel; i++) {
                int c = (int)ref_get_int(&cond, ref_broadcast_offset(&out.type, &tc, i));
                double want = c ? ref_get(&x, ref_broadcast_offset(&out.type, &tx, i))
                                : ref_get(&y, ref_broadcast_offset(&out.type, &ty, i));
                assert_true(ref_get(&out, i) == want);
            }
            check_tensor_free(&cond), check_tensor_free(&x);
            check_tensor_free(&y), check_tensor_free(&out);
        }
    }
}

/* relu_grad(y, dy) (passes/remat/relu_grad.c) is where(y > 0, dy, 0): dy
 * where y > 0, 0 at y = 0 (either sign), below 0 and at NaN. */
static void test_relu_grad_is_dy_where_y_is_positive(void **state)
{
    (void)state;
    const int64_t shape[] = {3, 67};
    dfg_attrs a;
    dfg_attrs_init(&a);
    check_seed(12);
    check_tensor y = check_random(check_type(DFG_F32, 2, shape));
    check_tensor dy = check_random(check_type(DFG_F32, 2, shape));
    check_tensor out = check_empty(check_type(DFG_F32, 2, shape));
    ref_set(&y, 0, 0.0), ref_set(&y, 1, -0.0), ref_set(&y, 2, NAN);
    ref_set(&y, 3, FLT_MIN), ref_set(&y, 4, -FLT_MIN);
    check_tensor *in[] = {&y, &dy};
    assert_int_equal(run(DFG_OP_RELU_GRAD, &a, 2, in, &out), DFG_OK);
    int positive = 0;
    for (int64_t i = 0; i < out.numel; i++) {
        double want = ref_get(&y, i) > 0.0 ? ref_get(&dy, i) : 0.0;
        positive += ref_get(&y, i) > 0.0;
        assert_true(ref_get(&out, i) == want);
    }
    assert_true(positive > 10 && positive < out.numel - 10);
    check_tensor_free(&y), check_tensor_free(&dy), check_tensor_free(&out);
}

static void test_bad_broadcast_is_an_error(void **state)
{
    (void)state;
    const int64_t sa[] = {3, 4}, sb[] = {5};
    dfg_attrs a;
    dfg_attrs_init(&a);
    check_tensor x = check_random(check_type(DFG_F32, 2, sa));
    check_tensor y = check_random(check_type(DFG_F32, 1, sb));
    check_tensor out = check_empty(check_type(DFG_F32, 2, sa));
    check_tensor *in[] = {&x, &y};
    assert_int_equal(run(DFG_OP_ADD, &a, 2, in, &out), DFG_ERR_SHAPE);
    assert_non_null(strstr(dfg_last_error(), "broadcast"));
    check_tensor_free(&x), check_tensor_free(&y), check_tensor_free(&out);
}

/* ---- cast -------------------------------------------------------------------- */

/* The value cast must produce for source value v, stored into element i
 * of `want` (the rules of dtype_access.h, written out). */
static void ref_cast(check_tensor *want, int64_t i, const check_tensor *src)
{
    dfg_dtype to = want->type.dtype;
    if (!ref_is_float(src->type.dtype)) {
        int64_t k = ref_get_int(src, i);
        if (to == DFG_F64)
            ref_set(want, i, (double)k);
        else if (ref_is_float(to))
            ref_set(want, i, (double)(float)k);
        else
            ref_set(want, i, (double)ref_wrap(to, k));
        if (to == DFG_I64)
            ((int64_t *)want->data)[i] = k;
        return;
    }
    double v = check_get(src, i);
    if (ref_is_float(to)) {
        ref_set(want, i, v);
        return;
    }
    if (to == DFG_BOOL) {
        ref_set(want, i, v != 0);
        return;
    }
    double lo = to == DFG_U8 || to == DFG_U16 ? 0
                : to == DFG_I8 ? INT8_MIN : to == DFG_I16 ? INT16_MIN
                : to == DFG_I32 ? INT32_MIN : -9223372036854775808.0;
    double hi = to == DFG_U8 ? UINT8_MAX : to == DFG_U16 ? UINT16_MAX
                : to == DFG_I8 ? INT8_MAX : to == DFG_I16 ? INT16_MAX
                : to == DFG_I32 ? INT32_MAX : 9223372036854775807.0;
    double t = isnan(v) ? 0 : trunc(v);
    if (to == DFG_I64 && t >= hi)
        ((int64_t *)want->data)[i] = INT64_MAX;
    else
        ref_set(want, i, t < lo ? lo : t > hi ? hi : t);
}

static void test_cast_every_pair(void **state)
{
    (void)state;
    const int64_t shape[] = {40000};
    const float specials[] = {NAN, INFINITY, -INFINITY, 1e10f, -1e10f, 255.9f,
                              -0.7f, 0.5f, 3e9f, -3e9f, 65519.0f, 1e20f};
    dfg_attrs a;
    dfg_attrs_init(&a);
    check_seed(7);
    for (dfg_dtype from = 0; from < DFG_DTYPE_COUNT; from++) {
        dfg_type tf = check_type(from, 1, shape);
        check_tensor src = ref_is_float(from) ? ref_scaled(tf, 300.0, 0)
                           : from == DFG_BOOL ? ref_small_ints(tf, 0, 1)
                                              : check_random(tf);
        for (size_t s = 0; ref_is_float(from) && s < sizeof specials / sizeof *specials; s++)
            ref_set(&src, (int64_t)s, specials[s]);
        for (dfg_dtype to = 0; to < DFG_DTYPE_COUNT; to++) {
            a.to = to;
            check_tensor out = check_empty(check_type(to, 1, shape));
            check_tensor want = check_empty(out.type);
            for (int64_t i = 0; i < src.numel; i++)
                ref_cast(&want, i, &src);
            check_tensor *in[] = {&src};
            assert_int_equal(run(DFG_OP_CAST, &a, 1, in, &out), DFG_OK);
            for (int64_t i = 0; i < out.numel; i++) {
                size_t size = dfg_dtype_size(to);
                if (memcmp((char *)out.data + (size_t)i * size,
                           (char *)want.data + (size_t)i * size, size) != 0)
                    fail_msg("cast %s -> %s: element %lld (source %g) = %g, expected %g",
                             dfg_dtype_name(from), dfg_dtype_name(to), (long long)i,
                             ref_get(&src, i), ref_get(&out, i), ref_get(&want, i));
            }
            check_tensor_free(&out), check_tensor_free(&want);
        }
        check_tensor_free(&src);
    }
}

/* ---- kernel table -------------------------------------------------------------- */

static void test_kernel_table_covers_every_op(void **state)
{
    (void)state;
    for (int op = 0; op < DFG_OP_COUNT; op++)
        if (dfg_cpu_kernel_for((dfg_op)op) == NULL)
            fail_msg("no CPU kernel for %s", dfg_op_get((dfg_op)op)->name);
    assert_null(dfg_cpu_kernel_for(DFG_OP_COUNT));
    assert_null(dfg_cpu_kernel_for((dfg_op)-1));
    assert_ptr_equal(dfg_cpu_kernel_for(DFG_OP_GELU), dfg_cpu_unary);
    assert_ptr_equal(dfg_cpu_kernel_for(DFG_OP_POW), dfg_cpu_binary);
    assert_ptr_equal(dfg_cpu_kernel_for(DFG_OP_GLOBAL_AVERAGE_POOL), dfg_cpu_reduce);
    assert_ptr_equal(dfg_cpu_kernel_for(DFG_OP_AVERAGE_POOL), dfg_cpu_pool);
    assert_ptr_equal(dfg_cpu_kernel_for(DFG_OP_IDENTITY), dfg_cpu_copy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unary_float),
        cmocka_unit_test(test_gelu_f32_relative_error),
        cmocka_unit_test(test_unary_integer_exact),
        cmocka_unit_test(test_binary_float_broadcast),
        cmocka_unit_test(test_binary_f32_special_values),
        cmocka_unit_test(test_binary_integer_exact),
        cmocka_unit_test(test_compare_exact),
        cmocka_unit_test(test_where_broadcasts_all_three),
        cmocka_unit_test(test_relu_grad_is_dy_where_y_is_positive),
        cmocka_unit_test(test_bad_broadcast_is_an_error),
        cmocka_unit_test(test_cast_every_pair),
        cmocka_unit_test(test_kernel_table_covers_every_op),
    };
    return cmocka_run_group_tests(tests, NULL, check_report_worst);
}
