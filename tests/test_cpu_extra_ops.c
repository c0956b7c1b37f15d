/* CPU kernels of the ops added for the ONNX front end (floor .. atanh,
 * mod, fmod, arg_max, arg_min, gather_elements, scatter_nd, resize,
 * top_k), each against a reference written here in double precision on
 * seeded random data: float results within 1e-5 relative error, integer
 * results (indices, integer mod, data movement) exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "cpu_kernel_check.h"
#include "kernels_extra.h"
#include "op_table.h"

#define DIMS(...) (int64_t[]){__VA_ARGS__}
#define N_DIMS(...) ((int32_t)(sizeof(DIMS(__VA_ARGS__)) / sizeof(int64_t)))
#define T(dt, ...) check_type(dt, N_DIMS(__VA_ARGS__), DIMS(__VA_ARGS__))

static dfg_attrs defaults(void)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    return a;
}

static int64_t random_below(int64_t n)
{
    return (int64_t)(check_next() % (uint64_t)n);
}

static dfg_type random_type(dfg_dtype dt, int32_t rank, int64_t max_dim)
{
    dfg_type t = {dt, rank, {0}};
    for (int32_t d = 0; d < rank; d++)
        t.shape[d] = 1 + random_below(max_dim);
    return t;
}

/* Element i of an integer tensor (i32 or i64). */
static int64_t int_at(const check_tensor *x, int64_t i)
{
    return x->type.dtype == DFG_I64 ? ((const int64_t *)x->data)[i]
                                    : ((const int32_t *)x->data)[i];
}

static void set_int(check_tensor *x, int64_t i, int64_t v)
{
    if (x->type.dtype == DFG_I64)
        ((int64_t *)x->data)[i] = v;
    else
        ((int32_t *)x->data)[i] = (int32_t)v;
}

/* Runs op with the shape rule's outputs, which the caller frees. */
static dfg_status run_op(dfg_op op, const dfg_attrs *a, int32_t n_in,
                         check_tensor *const *in, int32_t n_out,
                         check_tensor *outs)
{
    dfg_type types[2];
    check_infer(op, a, n_in, in, n_out, types);
    check_tensor *out[2];
    for (int32_t i = 0; i < n_out; i++) {
        outs[i] = check_empty(types[i]);
        out[i] = &outs[i];
    }
    return check_run(dfg_cpu_kernel_for(op), op, a, n_in, in, n_out, out,
                     NULL, 0);
}

static void expect_close(const check_tensor *y, const double *ref,
                         const char *what)
{
    double err = check_rel_error(y, ref);
    if (!(err < 1e-5))
        fail_msg("%s: relative error %g", what, err);
}

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
        dfg_type ut = {DFG_F32, 1 + rank - k, {tuples}};
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

/* ---- resize ---------------------------------------------------------------- */

/* The input coordinate, as ONNX's reference computes it (the resized
 * length is in * scale, not the rounded output size). */
static double ref_source(int32_t mode, int64_t x, double scale, int64_t in)
{
    double length = scale * (double)in;
    switch (mode) {
    case DFG_RESIZE_ALIGN_CORNERS:
        return length == 1 ? 0 : (double)x * (double)(in - 1) / (length - 1);
    case DFG_RESIZE_ASYMMETRIC: return (double)x / scale;
    case DFG_RESIZE_PYTORCH_HALF_PIXEL:
        return length > 1 ? ((double)x + 0.5) / scale - 0.5 : 0;
    case DFG_RESIZE_TF_HALF_PIXEL_FOR_NN: return ((double)x + 0.5) / scale;
    default: return ((double)x + 0.5) / scale - 0.5;
    }
}

/* ONNX reference style: ratio in (0, 1] (1 for an integer coordinate),
 * n neighbours that prefer the lower side, edge padding. */
static int ref_taps(const dfg_attrs *a, double x, int64_t in, int64_t *index,
                    double *w)
{
    double below = floor(x);
    int integer = below == x;
    double r = integer ? 1.0 : x - below;
    int n;
    if (a->resize_mode == DFG_RESIZE_NEAREST) {
        n = 2;
        if (integer) {
            w[0] = 0, w[1] = 1;
        } else {
            switch (a->nearest_rounding) {
            case DFG_RESIZE_ROUND_PREFER_CEIL: w[0] = r < 0.5, w[1] = r >= 0.5; break;
            case DFG_RESIZE_FLOOR: w[0] = 1, w[1] = 0; break;
            case DFG_RESIZE_CEIL: w[0] = 0, w[1] = 1; break;
            default: w[0] = r <= 0.5, w[1] = r > 0.5; break;
            }
        }
    } else if (a->resize_mode == DFG_RESIZE_LINEAR) {
        n = 2;
        w[0] = 1 - r, w[1] = r;
    } else {
        n = 4;
        double A = a->cubic_coeff_a, s = r + 1, t = 1 - r, u = 2 - r;
        w[0] = ((A * s - 5 * A) * s + 8 * A) * s - 4 * A;
        w[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
        w[2] = ((A + 2) * t - (A + 3)) * t * t + 1;
        w[3] = ((A * u - 5 * A) * u + 8 * A) * u - 4 * A;
    }
    int64_t first = (int64_t)(integer ? x : below) - n / 2 + (integer ? 0 : 1);
    double sum = 0;
    for (int i = 0; i < n; i++) {
        index[i] = first + i;
        if (a->exclude_outside && (index[i] < 0 || index[i] >= in))
            w[i] = 0;
        sum += w[i];
        index[i] = index[i] < 0 ? 0 : index[i] >= in ? in - 1 : index[i];
    }
    for (int i = 0; i < n && a->exclude_outside; i++)
        w[i] /= sum;
    return n;
}

/* The scale the transform uses on axis d. */
static double ref_scale(const dfg_attrs *a, const dfg_type *in,
                        const dfg_type *out, int32_t d)
{
    return a->n_scales ? (double)a->scales[d]
                       : (double)out->shape[d] / (double)in->shape[d];
}

/* nearest: the input element output element e copies. */
static int64_t ref_nearest_source(const dfg_attrs *a, const dfg_type *in,
                                  const dfg_type *out, int64_t e)
{
    int64_t pos[DFG_MAX_RANK], index[4];
    double w[4];
    check_unravel(e, out, pos);
    for (int32_t d = 0; d < in->rank; d++) {
        double x = ref_source(a->coordinates, pos[d], ref_scale(a, in, out, d),
                              in->shape[d]);
        ref_taps(a, x, in->shape[d], index, w);
        pos[d] = w[0] == 1 ? index[0] : index[1];
    }
    return check_ravel(pos, in);
}

static void ref_resize(const dfg_attrs *a, const check_tensor *x,
                       const dfg_type *out, double *ref)
{
    int32_t rank = x->type.rank;
    int64_t n = dfg_type_numel(out);
    for (int64_t e = 0; e < n; e++) {
        int64_t pos[DFG_MAX_RANK], idx[DFG_MAX_RANK][4], t[DFG_MAX_RANK] = {0};
        double w[DFG_MAX_RANK][4];
        int count[DFG_MAX_RANK];
        check_unravel(e, out, pos);
        for (int32_t d = 0; d < rank; d++) {
            int64_t in = x->type.shape[d];
            double scale = ref_scale(a, &x->type, out, d);
            count[d] = ref_taps(a, ref_source(a->coordinates, pos[d], scale, in),
                                in, idx[d], w[d]);
        }
        double acc = 0;
        for (;;) {
            double weight = 1;
            int64_t src[DFG_MAX_RANK];
            for (int32_t d = 0; d < rank; d++) {
                weight *= w[d][t[d]];
                src[d] = idx[d][t[d]];
            }
            if (weight != 0)
                acc += weight * check_get(x, check_ravel(src, &x->type));
            int32_t d = rank - 1;
            while (d >= 0 && ++t[d] == count[d])
                t[d--] = 0;
            if (d < 0)
                break;
        }
        ref[e] = acc;
    }
}

static void test_resize(void **state)
{
    (void)state;
    check_seed(7);
    int cases = 0;
    for (int mode = 0; mode < DFG_RESIZE_MODE_COUNT; mode++)
    for (int coords = 0; coords < DFG_RESIZE_COORDINATES_COUNT; coords++)
    for (int variant = 0; variant < 8; variant++) {
        /* [N, C, H, W] resizing H and W, or rank 3 resizing every axis */
        int32_t rank = variant % 4 == 3 ? 3 : 4;
        check_tensor x = check_random(random_type(DFG_F32, rank, 6));
        dfg_attrs a = defaults();
        a.resize_mode = mode;
        a.coordinates = coords;
        a.nearest_rounding = variant % DFG_RESIZE_NEAREST_COUNT;
        a.exclude_outside = mode == DFG_RESIZE_CUBIC && variant % 2;
        a.cubic_coeff_a = variant % 3 ? -0.75f : -0.5f;
        a.n_shape = rank;
        a.n_scales = variant < 4 ? rank : 0; /* scales, or sizes only */
        for (int32_t d = 0; d < rank; d++) {
            int64_t in = x.type.shape[d];
            int resized = rank == 3 || d >= 2;
            if (!a.n_scales) {
                a.shape[d] = resized ? 1 + random_below(9) : in;
                continue;
            }
            float s;
            do /* scales like 0.6 whose product is not a whole size */
                s = resized ? (float)(0.3 + 2.7 * (check_next() % 1000) / 1000.0)
                            : 1.0f;
            while (floor(in * (double)s) < 1);
            a.scales[d] = s;
            a.shape[d] = (int64_t)floor(in * (double)s);
        }
        check_tensor *in[1] = {&x}, y;
        assert_int_equal(run_op(DFG_OP_RESIZE, &a, 1, in, 1, &y), DFG_OK);
        double *ref = malloc((size_t)y.numel * sizeof *ref);
        ref_resize(&a, &x, &y.type, ref);
        if (mode == DFG_RESIZE_NEAREST) {
            for (int64_t i = 0; i < y.numel; i++)
                if (((float *)y.data)[i] !=
                    ((float *)x.data)[ref_nearest_source(&a, &x.type, &y.type, i)])
                    fail_msg("nearest (coordinates %d, rounding %d): element "
                             "%lld is %g, expected %g", coords,
                             a.nearest_rounding, (long long)i,
                             (double)((float *)y.data)[i], ref[i]);
        } else {
            char what[96];
            snprintf(what, sizeof what, "resize mode %d coordinates %d "
                     "variant %d", mode, coords, variant);
            expect_close(&y, ref, what);
        }
        free(ref);
        check_tensor_free(&x);
        check_tensor_free(&y);
        cases++;
    }
    assert_int_equal(cases, 3 * 5 * 8);
}

/* nearest moves bytes, so it takes integer dtypes too; narrow floats
 * interpolate in f32. */
static void test_resize_dtypes(void **state)
{
    (void)state;
    check_seed(8);
    const dfg_dtype dtypes[] = {DFG_U8, DFG_I64, DFG_F16, DFG_BF16};
    for (int i = 0; i < 4; i++) {
        check_tensor x = check_random(T(dtypes[i], 2, 3, 5));
        dfg_attrs a = defaults();
        a.resize_mode = i < 2 ? DFG_RESIZE_NEAREST : DFG_RESIZE_LINEAR;
        a.n_shape = 3;
        a.shape[0] = 2, a.shape[1] = 7, a.shape[2] = 3;
        check_tensor *in[1] = {&x}, y;
        assert_int_equal(run_op(DFG_OP_RESIZE, &a, 1, in, 1, &y), DFG_OK);
        size_t size = dfg_dtype_size(dtypes[i]);
        if (i < 2) {
            for (int64_t e = 0; e < y.numel; e++) {
                int64_t src = ref_nearest_source(&a, &x.type, &y.type, e);
                assert_memory_equal((char *)y.data + e * (int64_t)size,
                                    (char *)x.data + src * (int64_t)size, size);
            }
        } else {
            double *ref = malloc((size_t)y.numel * sizeof *ref), err = 0, norm = 0;
            ref_resize(&a, &x, &y.type, ref);
            for (int64_t e = 0; e < y.numel; e++) {
                err = fmax(err, fabs(check_get(&y, e) - ref[e]));
                norm = fmax(norm, fabs(ref[e]));
            }
            assert_true(err <= norm / 128);
            free(ref);
        }
        check_tensor_free(&x);
        check_tensor_free(&y);
    }
    /* linear on integers is refused by the shape rule */
    dfg_attrs a = defaults();
    a.resize_mode = DFG_RESIZE_LINEAR;
    a.n_shape = 1;
    a.shape[0] = 4;
    dfg_type in = T(DFG_I32, 2), out;
    assert_int_equal(dfg_op_get(DFG_OP_RESIZE)->shape(&a, &in, 1, &out, 1),
                     DFG_ERR_DTYPE);
}

static void test_resize_rejects(void **state)
{
    (void)state;
    const dfg_op_info *info = dfg_op_get(DFG_OP_RESIZE);
    dfg_type in = T(DFG_F32, 1, 2, 3, 4), out;
    dfg_attrs good = defaults();
    good.n_shape = 4;
    for (int d = 0; d < 4; d++)
        good.shape[d] = 2 * in.shape[d];
    assert_int_equal(info->shape(&good, &in, 1, &out, 1), DFG_OK);
    assert_int_equal(out.shape[3], 8);
    dfg_attrs a = good;
    a.n_shape = 3;
    assert_int_equal(info->shape(&a, &in, 1, &out, 1), DFG_ERR_INVALID_ARGUMENT);
    a = good;
    a.shape[2] = -1;
    assert_int_equal(info->shape(&a, &in, 1, &out, 1), DFG_ERR_SHAPE);
    a = good;
    a.resize_mode = DFG_RESIZE_MODE_COUNT;
    assert_int_equal(info->shape(&a, &in, 1, &out, 1), DFG_ERR_INVALID_ARGUMENT);
    a = good;
    a.coordinates = -1;
    assert_int_equal(info->shape(&a, &in, 1, &out, 1), DFG_ERR_INVALID_ARGUMENT);
    a = good;
    a.n_scales = 4;
    a.scales[0] = a.scales[1] = a.scales[2] = 1.0f;
    a.scales[3] = 0.0f;
    assert_int_equal(info->shape(&a, &in, 1, &out, 1), DFG_ERR_INVALID_ARGUMENT);
    a.scales[3] = NAN;
    assert_int_equal(info->shape(&a, &in, 1, &out, 1), DFG_ERR_INVALID_ARGUMENT);
    dfg_type scalar = {DFG_F32, 0, {0}};
    a = good;
    a.n_shape = 0;
    assert_int_equal(info->shape(&a, &scalar, 1, &out, 1), DFG_ERR_SHAPE);
}

/* ---- top_k ----------------------------------------------------------------- */

/* Stable order of a line: by value (largest or smallest first), ties by
 * the lower index. */
static void ref_top_k_line(const double *v, int64_t n, int largest,
                           int64_t *order)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t j = i;
        while (j > 0 && (largest ? v[i] > v[order[j - 1]]
                                 : v[i] < v[order[j - 1]])) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
}

static void test_top_k(void **state)
{
    (void)state;
    check_seed(9);
    for (int trial = 0; trial < 120; trial++) {
        int32_t rank = 1 + (int32_t)random_below(4);
        dfg_dtype dt = trial % 3 == 2 ? DFG_I64 : DFG_F32;
        check_tensor x = check_random(random_type(dt, rank, 7));
        /* Quantised values: ties on purpose. */
        for (int64_t i = 0; i < x.numel; i++) {
            if (dt == DFG_F32)
                ((float *)x.data)[i] = roundf(((float *)x.data)[i] * 4.0f);
            else
                set_int(&x, i, random_below(9) - 4);
        }
        int32_t axis = (int32_t)random_below(rank);
        int64_t n = x.type.shape[axis];
        dfg_attrs a = defaults();
        a.axis = random_below(2) ? axis : axis - rank;
        a.k = random_below(n + 1);
        a.largest = (int32_t)random_below(2);
        a.sorted = trial % 5 != 4;
        check_tensor *in[1] = {&x}, y[2];
        assert_int_equal(run_op(DFG_OP_TOP_K, &a, 1, in, 2, y), DFG_OK);
        assert_int_equal(y[1].type.dtype, DFG_I64);
        assert_int_equal(y[0].type.shape[axis], a.k);
        int64_t lines = x.numel / n;
        double *line = malloc((size_t)n * sizeof *line);
        int64_t *order = malloc((size_t)n * sizeof *order);
        for (int64_t l = 0; l < lines; l++) {
            /* line l: the position with axis = 0 in the output order */
            int64_t pos[DFG_MAX_RANK];
            dfg_type lt = x.type;
            lt.shape[axis] = 1;
            check_unravel(l, &lt, pos);
            for (int64_t j = 0; j < n; j++) {
                pos[axis] = j;
                int64_t at = check_ravel(pos, &x.type);
                line[j] = dt == DFG_F32 ? ((float *)x.data)[at]
                                        : (double)int_at(&x, at);
            }
            ref_top_k_line(line, n, a.largest, order);
            if (!a.sorted) /* the same k elements, in input order */
                for (int64_t i = 1; i < a.k; i++)
                    for (int64_t j = i; j > 0 && order[j] < order[j - 1]; j--) {
                        int64_t t = order[j];
                        order[j] = order[j - 1];
                        order[j - 1] = t;
                    }
            for (int64_t j = 0; j < a.k; j++) {
                pos[axis] = j;
                int64_t at = check_ravel(pos, &y[0].type);
                assert_int_equal(((int64_t *)y[1].data)[at], order[j]);
                double got = dt == DFG_F32 ? ((float *)y[0].data)[at]
                                           : (double)int_at(&y[0], at);
                assert_true(got == line[order[j]]);
            }
        }
        free(line);
        free(order);
        check_tensor_free(&x);
        check_tensor_free(&y[0]);
        check_tensor_free(&y[1]);
    }
}

/* NaN ranks below every number; k out of range is refused. */
static void test_top_k_nan_and_rejects(void **state)
{
    (void)state;
    const float v[] = {1.0f, NAN, 3.0f, 3.0f, -1.0f};
    check_tensor x = check_empty(T(DFG_F32, 5));
    memcpy(x.data, v, sizeof v);
    const int64_t want[2][4] = {{4, 0, 2, 3}, {2, 3, 0, 4}}; /* smallest, largest */
    for (int largest = 0; largest <= 1; largest++) {
        dfg_attrs a = defaults();
        a.axis = 0;
        a.k = 4;
        a.largest = largest;
        check_tensor *in[1] = {&x}, y[2];
        assert_int_equal(run_op(DFG_OP_TOP_K, &a, 1, in, 2, y), DFG_OK);
        assert_memory_equal(y[1].data, want[largest], sizeof want[0]);
        check_tensor_free(&y[0]);
        check_tensor_free(&y[1]);
    }
    dfg_attrs a = defaults();
    a.axis = 0;
    a.k = 6;
    dfg_type out[2];
    assert_int_equal(dfg_op_get(DFG_OP_TOP_K)->shape(&a, &x.type, 1, out, 2),
                     DFG_ERR_INVALID_ARGUMENT);
    a.k = 2;
    a.axis = 1;
    assert_int_equal(dfg_op_get(DFG_OP_TOP_K)->shape(&a, &x.type, 1, out, 2),
                     DFG_ERR_INVALID_ARGUMENT);
    check_tensor_free(&x);
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
        cmocka_unit_test(test_resize),
        cmocka_unit_test(test_resize_dtypes),
        cmocka_unit_test(test_resize_rejects),
        cmocka_unit_test(test_top_k),
        cmocka_unit_test(test_top_k_nan_and_rejects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
