/* CPU kernels of resize and top_k, ops added for the ONNX front end (the
 * others are in test_cpu_extra_ops.c), each against a reference written
 * here in double precision on seeded random data: float results within
 * 1e-5 relative error, nearest resizing and top_k's values and indices
 * exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "tests/runtime_cpu/cpu_extra_ops_check.h"

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
    /* Rows wider than the columns whose taps are computed together (256),
     * on the threads: [1, 3, 40, 150] to [1, 3, 80, 300], each mode. */
    for (int mode = 0; mode < DFG_RESIZE_MODE_COUNT; mode++) {
        check_tensor x = check_random(T(DFG_F32, 1, 3, 40, 150));
        dfg_attrs a = defaults();
        a.resize_mode = mode;
        a.n_shape = 4;
        a.shape[0] = 1, a.shape[1] = 3, a.shape[2] = 80, a.shape[3] = 300;
        check_tensor *in[1] = {&x}, y;
        assert_int_equal(run_op(DFG_OP_RESIZE, &a, 1, in, 1, &y), DFG_OK);
        double *ref = malloc((size_t)y.numel * sizeof *ref);
        ref_resize(&a, &x, &y.type, ref);
        expect_close(&y, ref, "a wide resize");
        free(ref);
        check_tensor_free(&x);
        check_tensor_free(&y);
    }
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
    dfg_type scalar = {DFG_F32, 0, {0}, 0};
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
        cmocka_unit_test(test_resize),
        cmocka_unit_test(test_resize_dtypes),
        cmocka_unit_test(test_resize_rejects),
        cmocka_unit_test(test_top_k),
        cmocka_unit_test(test_top_k_nan_and_rejects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
