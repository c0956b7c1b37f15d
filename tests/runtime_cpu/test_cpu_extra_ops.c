/* CPU kernels of the ops added for the ONNX front end, elementwise and
 * indexing: floor .. atanh, mod, fmod, arg_max, arg_min, gather_elements,
 * scatter_nd (resize and top_k are in test_cpu_resize_top_k.c), each
 * against a reference written here in double precision on seeded random
 * data: float results within 1e-5 relative error, integer results
 * (indices, integer mod, data movement) exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "tests/runtime_cpu/cpu_extra_ops_check.h"

/* ---- rounding and trigonometry ------------------------------------------ */

/* ONNX Round: half to even. */
static double round_half_even(double x)
{
    double r = floor(x), f = x - r;
    if (f > 0.5 || (f == 0.5 && fmod(r, 2.0) != 0.0))
        r += 1.0;
    return r;
}

static void test_unary_math(void **state)
{
    (void)state;
    static const struct {
        dfg_op op;
        double (*ref)(double);
        double scale, shift; /* the input: scale * uniform + shift */
    } cases[] = {
        {DFG_OP_FLOOR, floor, 10, 0}, {DFG_OP_CEIL, ceil, 10, 0},
        {DFG_OP_ROUND, round_half_even, 10, 0},
        {DFG_OP_SIN, sin, 4, 0},      {DFG_OP_COS, cos, 4, 0},
        {DFG_OP_TAN, tan, 1.2, 0},    {DFG_OP_ASIN, asin, 1, 0},
        {DFG_OP_ACOS, acos, 1, 0},    {DFG_OP_ATAN, atan, 5, 0},
        {DFG_OP_SINH, sinh, 3, 0},    {DFG_OP_COSH, cosh, 3, 0},
        {DFG_OP_ASINH, asinh, 5, 0},  {DFG_OP_ACOSH, acosh, 3, 4},
        {DFG_OP_ATANH, atanh, 0.99, 0},
    };
    check_seed(1);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        check_tensor x = check_random(T(DFG_F32, 3, 7, 11));
        float *xs = x.data;
        for (int64_t i = 0; i < x.numel; i++)
            xs[i] = (float)(cases[c].scale * xs[i] + cases[c].shift);
        if (cases[c].op == DFG_OP_ROUND) /* exact halves of both parities */
            for (int64_t i = 0; i < 8; i++)
                xs[i] = (float)i - 3.5f;
        check_tensor *in[1] = {&x}, y;
        dfg_attrs a = defaults();
        assert_int_equal(run_op(cases[c].op, &a, 1, in, 1, &y), DFG_OK);
        double *ref = malloc((size_t)x.numel * sizeof *ref);
        for (int64_t i = 0; i < x.numel; i++)
            ref[i] = cases[c].ref(xs[i]);
        expect_close(&y, ref, dfg_op_get(cases[c].op)->name);
        if (cases[c].op == DFG_OP_FLOOR || cases[c].op == DFG_OP_CEIL ||
            cases[c].op == DFG_OP_ROUND)
            for (int64_t i = 0; i < x.numel; i++)
                assert_true(((float *)y.data)[i] == (float)ref[i]);
        free(ref);
        check_tensor_free(&x);
        check_tensor_free(&y);
    }
}

/* f16 and bf16 are computed in f32 and stored narrow. */
static void test_unary_math_narrow(void **state)
{
    (void)state;
    check_seed(2);
    const dfg_dtype narrow[] = {DFG_F16, DFG_BF16};
    for (int n = 0; n < 2; n++) {
        check_tensor x = check_random(T(narrow[n], 5, 13));
        check_tensor *in[1] = {&x}, y;
        dfg_attrs a = defaults();
        assert_int_equal(run_op(DFG_OP_SIN, &a, 1, in, 1, &y), DFG_OK);
        double err = 0, norm = 0;
        for (int64_t i = 0; i < x.numel; i++) {
            double want = sin(check_get(&x, i));
            err = fmax(err, fabs(check_get(&y, i) - want));
            norm = fmax(norm, fabs(want));
        }
        /* One rounding to the narrow type: 2^-11 (f16), 2^-8 (bf16). */
        assert_true(err <= norm * (n == 0 ? 1.0 / 2048 : 1.0 / 256));
        check_tensor_free(&x);
        check_tensor_free(&y);
    }
}

/* ---- mod, fmod ----------------------------------------------------------- */

/* ONNX Mod: fmod = 0 takes the divisor's sign (a - floor(a / b) * b),
 * fmod = 1 the dividend's (a - trunc(a / b) * b). */
static int64_t ref_int_mod(int64_t a, int64_t b, int python)
{
    int64_t q = a / b; /* truncated */
    if (python && (a % b != 0) && ((a < 0) != (b < 0)))
        q -= 1;        /* floored */
    return a - q * b;
}

static double ref_float_mod(double a, double b, int python)
{
    double r = fmod(a, b);
    if (python && r != 0 && ((r < 0) != (b < 0)))
        r += b;
    return r;
}

static void test_mod(void **state)
{
    (void)state;
    check_seed(3);
    const dfg_dtype dtypes[] = {DFG_I32, DFG_I64, DFG_F32};
    for (int d = 0; d < 3; d++) {
        for (int python = 0; python <= 1; python++) {
            /* a [3,4,5] broadcast against b [4,1] */
            check_tensor a = check_random(T(dtypes[d], 3, 4, 5));
            check_tensor b = check_random(T(dtypes[d], 4, 1));
            for (int64_t i = 0; i < a.numel; i++) {
                if (dtypes[d] == DFG_F32)
                    ((float *)a.data)[i] *= 20.0f;
                else
                    set_int(&a, i, random_below(201) - 100);
            }
            for (int64_t i = 0; i < b.numel; i++) {
                if (dtypes[d] == DFG_F32)
                    ((float *)b.data)[i] *= 7.0f;
                else /* non-zero divisors of both signs */
                    set_int(&b, i, (1 + random_below(9)) * (i % 2 ? -1 : 1));
            }
            check_tensor *in[2] = {&a, &b}, y;
            dfg_attrs attrs = defaults();
            dfg_op op = python ? DFG_OP_MOD : DFG_OP_FMOD;
            assert_int_equal(run_op(op, &attrs, 2, in, 1, &y), DFG_OK);
            double *ref = malloc((size_t)y.numel * sizeof *ref);
            for (int64_t i = 0; i < y.numel; i++) {
                int64_t ia = i, ib = (i / 5) % 4;
                if (dtypes[d] == DFG_F32) {
                    ref[i] = ref_float_mod(((float *)a.data)[ia],
                                           ((float *)b.data)[ib], python);
                } else {
                    int64_t want = ref_int_mod(int_at(&a, ia), int_at(&b, ib),
                                               python);
                    assert_int_equal(int_at(&y, i), want);
                    /* the sign rule itself */
                    if (want != 0)
                        assert_true((want < 0) == ((python ? int_at(&b, ib)
                                                           : int_at(&a, ia)) < 0));
                }
            }
            if (dtypes[d] == DFG_F32)
                expect_close(&y, ref, python ? "mod f32" : "fmod f32");
            free(ref);
            check_tensor_free(&a);
            check_tensor_free(&b);
            check_tensor_free(&y);
        }
    }
    /* ONNX's own examples: Mod([-4, 7, 5, 4, -7, 8], [2, -3, 8, -2, 3, 5]) */
    const int64_t xa[] = {-4, 7, 5, 4, -7, 8}, xb[] = {2, -3, 8, -2, 3, 5};
    const int64_t mod_want[] = {0, -2, 5, 0, 2, 3};
    const int64_t fmod_want[] = {0, 1, 5, 0, -1, 3};
    check_tensor a = check_empty(T(DFG_I64, 6)), b = check_empty(T(DFG_I64, 6));
    memcpy(a.data, xa, sizeof xa);
    memcpy(b.data, xb, sizeof xb);
    for (int python = 0; python <= 1; python++) {
        check_tensor *in[2] = {&a, &b}, y;
        dfg_attrs attrs = defaults();
        assert_int_equal(run_op(python ? DFG_OP_MOD : DFG_OP_FMOD, &attrs, 2,
                                in, 1, &y), DFG_OK);
        assert_memory_equal(y.data, python ? mod_want : fmod_want,
                            sizeof mod_want);
        check_tensor_free(&y);
    }
    check_tensor_free(&a);
    check_tensor_free(&b);
}

/* ---- arg_max, arg_min ---------------------------------------------------- */

static void test_arg_reduce(void **state)
{
    (void)state;
    check_seed(4);
    for (int trial = 0; trial < 60; trial++) {
        int32_t rank = 1 + (int32_t)random_below(4);
        /* i32 from a small range gives many ties; f32 gives none. */
        dfg_dtype dt = trial % 2 ? DFG_I32 : DFG_F32;
        check_tensor x = check_random(random_type(dt, rank, 6));
        if (dt == DFG_I32)
            for (int64_t i = 0; i < x.numel; i++)
                set_int(&x, i, random_below(3) - 1);
        dfg_attrs a = defaults();
        int32_t axis = (int32_t)random_below(rank);
        a.axis = random_below(2) ? axis : axis - rank;
        a.keepdims = (int32_t)random_below(2);
        for (int want_max = 0; want_max <= 1; want_max++) {
            check_tensor *in[1] = {&x}, y;
            dfg_op op = want_max ? DFG_OP_ARG_MAX : DFG_OP_ARG_MIN;
            assert_int_equal(run_op(op, &a, 1, in, 1, &y), DFG_OK);
            assert_int_equal(y.numel, x.numel / x.type.shape[axis]);
            /* Each output position: scan its line of x. */
            for (int64_t o = 0; o < y.numel; o++) {
                int64_t idx[DFG_MAX_RANK] = {0}, out_idx[DFG_MAX_RANK];
                check_unravel(o, &y.type, out_idx);
                for (int32_t d = 0, k = 0; d < rank; d++) {
                    if (d != axis)
                        idx[d] = out_idx[k];
                    if (d != axis || a.keepdims)
                        k++;
                }
                int64_t best = 0;
                double best_value = 0;
                for (int64_t j = 0; j < x.type.shape[axis]; j++) {
                    idx[axis] = j;
                    int64_t at = check_ravel(idx, &x.type);
                    double v = dt == DFG_I32 ? (double)int_at(&x, at)
                                             : ((float *)x.data)[at];
                    if (j == 0 || (want_max ? v > best_value : v < best_value)) {
                        best = j;
                        best_value = v;
                    }
                }
                assert_int_equal(((int64_t *)y.data)[o], best);
            }
            check_tensor_free(&y);
        }
        check_tensor_free(&x);
    }
}

/* ---- gather_elements, scatter_nd ------------------------------------------ */

static void test_gather_elements(void **state)
{
    (void)state;
    check_seed(5);
    for (int trial = 0; trial < 60; trial++) {
        int32_t rank = 1 + (int32_t)random_below(4);
        check_tensor data = check_random(random_type(DFG_F32, rank, 5));
        int32_t axis = (int32_t)random_below(rank);
        dfg_type it = data.type;
        it.dtype = trial % 2 ? DFG_I64 : DFG_I32;
        for (int32_t d = 0; d < rank; d++) /* fits inside data off the axis */
            it.shape[d] = d == axis ? 1 + random_below(6)
                                    : 1 + random_below(data.type.shape[d]);
        check_tensor idx = check_empty(it);
        int64_t n = data.type.shape[axis];
        for (int64_t i = 0; i < idx.numel; i++) /* [-n, n) */
            set_int(&idx, i, random_below(2 * n) - n);
        dfg_attrs a = defaults();
        a.axis = random_below(2) ? axis : axis - rank;
        check_tensor *in[2] = {&data, &idx}, y;
        assert_int_equal(run_op(DFG_OP_GATHER_ELEMENTS, &a, 2, in, 1, &y),
                         DFG_OK);
        for (int64_t i = 0; i < y.numel; i++) {
            int64_t pos[DFG_MAX_RANK];
            check_unravel(i, &idx.type, pos);
            int64_t k = int_at(&idx, i);
            pos[axis] = k < 0 ? k + n : k;
            assert_true(((float *)y.data)[i] ==
                        ((float *)data.data)[check_ravel(pos, &data.type)]);
        }
        /* An index outside [-n, n) is an error, not a read past data. */
        set_int(&idx, random_below(idx.numel), trial % 4 < 2 ? n : -n - 1);
        check_tensor *out[1] = {&y};
        dfg_status st = check_run(dfg_cpu_gather_elements,
                                  DFG_OP_GATHER_ELEMENTS, &a, 2, in, 1, out,
                                  NULL, 0);
        assert_int_equal(st, DFG_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(dfg_last_error(), "outside"));
        check_tensor_free(&data);
        check_tensor_free(&idx);
        check_tensor_free(&y);
    }
}

static void test_scatter_nd(void **state)
{
    (void)state;
    check_seed(6);
    for (int trial = 0; trial < 60; trial++) {
        int32_t rank = 1 + (int32_t)random_below(4);
        check_tensor data = check_random(random_type(DFG_F32, rank, 5));
        int32_t k = 1 + (int32_t)random_below(rank);
        int64_t cells = 1, slice = 1;
        for (int32_t d = 0; d < k; d++)
            cells *= data.type.shape[d];
        for (int32_t d = k; d < rank; d++)
            slice *= data.type.shape[d];
        /* distinct tuples (order of duplicates is unspecified) */
        int64_t tuples = 1 + random_below(cells);
        int64_t *chosen = malloc((size_t)cells * sizeof *chosen);
        for (int64_t c = 0; c < cells; c++)
            chosen[c] = c;
        for (int64_t c = cells - 1; c > 0; c--) {
            int64_t j = random_below(c + 1), t = chosen[c];
            chosen[c] = chosen[j];
            chosen[j] = t;
        }
        check_tensor idx = check_empty(T(trial % 2 ? DFG_I64 : DFG_I32,
                                         tuples, k));
        dfg_type ut = {DFG_F32, 1 + rank - k, {tuples}, 0};
        for (int32_t d = k; d < rank; d++)
            ut.shape[1 + d - k] = data.type.shape[d];
        check_tensor upd = check_random(ut);
        double *ref = malloc((size_t)data.numel * sizeof *ref);
        for (int64_t i = 0; i < data.numel; i++)
            ref[i] = ((float *)data.data)[i];
        for (int64_t t = 0; t < tuples; t++) {
            int64_t cell = chosen[t], at = chosen[t] * slice;
            for (int32_t d = k - 1; d >= 0; d--) { /* sometimes negative */
                int64_t dim = data.type.shape[d], v = cell % dim;
                cell /= dim;
                set_int(&idx, t * k + d, random_below(2) ? v - dim : v);
            }
            for (int64_t s = 0; s < slice; s++)
                ref[at + s] = ((float *)upd.data)[t * slice + s];
        }
        check_tensor *in[3] = {&data, &idx, &upd}, y;
        dfg_attrs a = defaults();
        assert_int_equal(run_op(DFG_OP_SCATTER_ND, &a, 3, in, 1, &y), DFG_OK);
        for (int64_t i = 0; i < y.numel; i++)
            assert_true(((float *)y.data)[i] == (float)ref[i]);
        /* Out of range: an error, never a write outside the output. */
        int32_t d = (int32_t)random_below(k);
        set_int(&idx, random_below(tuples) * k + d,
                trial % 3 ? data.type.shape[d] : -data.type.shape[d] - 1);
        check_tensor *out[1] = {&y};
        assert_int_equal(check_run(dfg_cpu_scatter_nd, DFG_OP_SCATTER_ND, &a,
                                   3, in, 1, out, NULL, 0),
                         DFG_ERR_INVALID_ARGUMENT);
        free(chosen);
        free(ref);
        check_tensor_free(&data);
        check_tensor_free(&idx);
        check_tensor_free(&upd);
        check_tensor_free(&y);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unary_math),
        cmocka_unit_test(test_unary_math_narrow),
        cmocka_unit_test(test_mod),
        cmocka_unit_test(test_arg_reduce),
        cmocka_unit_test(test_gather_elements),
        cmocka_unit_test(test_scatter_nd),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
