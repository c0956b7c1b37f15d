/* CPU kernels of the reductions (reduce_sum/mean/max, global_average_pool),
 * softmax/log_softmax and the normalisations (layer_norm, batch_norm),
 * against double-precision references on seeded random data: relative
 * error below 1e-5 for f32 and 1e-2 for f16/bf16, exact for integers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "tests/runtime_cpu/elementwise_reference.h"
#include "runtime/cpu/kernels.h"


static dfg_status run(dfg_op op, const dfg_attrs *attrs, int32_t n_in,
                      check_tensor *const *in, check_tensor *out)
{
    return check_run(dfg_cpu_kernel_for(op), op, attrs, n_in, in, 1, &out, NULL, 0);
}

static double *alloc_ref(int64_t n) { return calloc((size_t)n, sizeof(double)); }

/* ---- reductions ------------------------------------------------------------ */

/* Output index of input element `linear` when the axes in `reduced` are
 * reduced, and the output type (keepdims or not). */
static int64_t reduced_index(const dfg_type *in, const int *reduced, int64_t linear)
{
    int64_t index = 0, stride = 1;
    for (int32_t d = in->rank - 1; d >= 0; d--) {
        int64_t i = linear % in->shape[d];
        linear /= in->shape[d];
        if (!reduced[d]) {
            index += i * stride;
            stride *= in->shape[d];
        }
    }
    return index;
}

static dfg_type reduced_type(const dfg_type *in, const int *reduced, int keepdims)
{
    dfg_type out = {in->dtype, 0, {0}, 0};
    for (int32_t d = 0; d < in->rank; d++)
        if (!reduced[d] || keepdims)
            out.shape[out.rank++] = reduced[d] ? 1 : in->shape[d];
    return out;
}

/* Runs op on x reducing the axes in `reduced` (through attrs) and checks
 * the result against a reference accumulated in double / int64. */
static void check_reduction(dfg_op op, const dfg_attrs *a, check_tensor *x,
                            const int *reduced)
{
    dfg_type out_type = reduced_type(&x->type, reduced, a->keepdims);
    check_tensor out = check_empty(out_type);
    int64_t count = x->numel / out.numel;
    double *ref = alloc_ref(out.numel);
    int64_t *iref = calloc((size_t)out.numel, sizeof(int64_t));
    int is_max = op == DFG_OP_REDUCE_MAX;
    for (int64_t o = 0; o < out.numel; o++)
        ref[o] = is_max ? -INFINITY : 0, iref[o] = is_max ? INT64_MIN : 0;
    for (int64_t i = 0; i < x->numel; i++) {
        int64_t o = reduced_index(&x->type, reduced, i);
        if (ref_is_float(x->type.dtype)) {
            double v = check_get(x, i);
            ref[o] = is_max ? fmax(ref[o], v) : ref[o] + v;
        } else {
            int64_t v = ref_get_int(x, i);
            iref[o] = is_max ? (v > iref[o] ? v : iref[o]) : iref[o] + v;
        }
    }
    check_tensor *in[] = {x};
    assert_int_equal(run(op, a, 1, in, &out), DFG_OK);
    char what[96];
    snprintf(what, sizeof what, "%s over mask %d%d%d%d keepdims %d",
             dfg_op_get(op)->name, reduced[0], reduced[1], reduced[2], reduced[3],
             a->keepdims);
    if (ref_is_float(x->type.dtype)) {
        for (int64_t o = 0; op != DFG_OP_REDUCE_SUM && !is_max && o < out.numel; o++)
            ref[o] /= (double)count;
        check_expect_close(what, &out, ref);
    } else {
        for (int64_t o = 0; o < out.numel; o++) {
            int64_t want = op == DFG_OP_REDUCE_MEAN ? iref[o] / count : iref[o];
            want = ref_wrap(x->type.dtype, want);
            if (ref_get_int(&out, o) != want)
                fail_msg("%s on %s: output %lld = %lld, expected %lld", what,
                         dfg_dtype_name(x->type.dtype), (long long)o,
                         (long long)ref_get_int(&out, o), (long long)want);
        }
    }
    free(ref), free(iref);
    check_tensor_free(&out);
}

static void test_reduce_every_axis_combination(void **state)
{
    (void)state;
    const dfg_dtype dtypes[] = {DFG_F32, DFG_F16, DFG_BF16, DFG_I32, DFG_I64, DFG_U8};
    const int64_t shape[] = {3, 4, 5, 6};
    check_seed(11);
    for (size_t d = 0; d < 6; d++) {
        check_tensor x = ref_is_float(dtypes[d]) ? check_random(check_type(dtypes[d], 4, shape))
                                                 : ref_small_ints(check_type(dtypes[d], 4, shape),
                                                                  dtypes[d] == DFG_U8 ? 0 : -1000, 1000);
        for (dfg_op op = DFG_OP_REDUCE_SUM; op <= DFG_OP_REDUCE_MAX; op++) {
            for (int mask = 0; mask < 16; mask++) {
                for (int keepdims = 0; keepdims < 2; keepdims++) {
                    dfg_attrs a;
                    dfg_attrs_init(&a);
                    a.keepdims = keepdims;
                    int reduced[4];
                    for (int32_t axis = 0; axis < 4; axis++) {
                        reduced[axis] = mask == 0 || (mask >> axis & 1);
                        /* Alternate between positive and negative axes. */
                        if (mask >> axis & 1)
                            a.axes[a.n_axes++] = (mask + axis) % 2 ? axis - 4 : axis;
                    }
                    check_reduction(op, &a, &x, reduced);
                }
            }
        }
        check_tensor_free(&x);
    }
}

static void test_reduce_large_and_wrapping(void **state)
{
    (void)state;
    const int64_t wide[] = {64, 1024}, deep[] = {2, 300, 257};
    check_seed(12);
    for (dfg_op op = DFG_OP_REDUCE_SUM; op <= DFG_OP_REDUCE_MAX; op++) {
        for (int which = 0; which < 2; which++) {
            check_tensor x = check_random(which ? check_type(DFG_F32, 3, deep)
                                                : check_type(DFG_F32, 2, wide));
            for (int axis = 0; axis < x.type.rank; axis++) {
                dfg_attrs a;
                dfg_attrs_init(&a);
                a.n_axes = 1;
                a.axes[0] = axis;
                int reduced[4] = {0};
                reduced[axis] = 1;
                check_reduction(op, &a, &x, reduced);
            }
            check_tensor_free(&x);
        }
        /* Full-range i32: the int64 sums exceed i32 and wrap on store. */
        check_tensor xi = check_random(check_type(DFG_I32, 2, wide));
        dfg_attrs a;
        dfg_attrs_init(&a);
        int reduced[4] = {0, 1};
        a.n_axes = 1;
        a.axes[0] = 1;
        check_reduction(op, &a, &xi, reduced);
        check_tensor_free(&xi);
    }
}

static void test_global_average_pool(void **state)
{
    (void)state;
    const int64_t small[] = {2, 3, 5, 7}, large[] = {4, 16, 32, 32};
    dfg_attrs a;
    dfg_attrs_init(&a);
    check_seed(13);
    for (size_t d = 0; d < 3; d++) {
        for (int size = 0; size < 2; size++) {
            check_tensor x = check_random(check_type(check_float_dtypes[d], 4, size ? large : small));
            int64_t n = x.type.shape[0], c = x.type.shape[1];
            int64_t plane = x.numel / (n * c);
            const int64_t out_shape[] = {n, c, 1, 1};
            check_tensor out = check_empty(check_type(check_float_dtypes[d], 4, out_shape));
            double *ref = alloc_ref(n * c);
            for (int64_t i = 0; i < x.numel; i++)
                ref[i / plane] += check_get(&x, i) / (double)plane;
            check_tensor *in[] = {&x};
            assert_int_equal(run(DFG_OP_GLOBAL_AVERAGE_POOL, &a, 1, in, &out), DFG_OK);
            check_expect_close("global_average_pool", &out, ref);
            free(ref);
            check_tensor_free(&x), check_tensor_free(&out);
        }
    }
}

/* ---- softmax ------------------------------------------------------------------ */

static void ref_softmax(const check_tensor *x, int32_t axis, int log_form, double *ref)
{
    int64_t n = x->type.shape[axis], inner = 1;
    for (int32_t d = axis + 1; d < x->type.rank; d++)
        inner *= x->type.shape[d];
    for (int64_t o = 0; o < x->numel / (n * inner); o++) {
        for (int64_t l = 0; l < inner; l++) {
            int64_t base = o * n * inner + l;
            double max = -INFINITY, sum = 0;
            for (int64_t j = 0; j < n; j++)
                max = fmax(max, check_get(x, base + j * inner));
            for (int64_t j = 0; j < n; j++)
                sum += exp(check_get(x, base + j * inner) - max);
            for (int64_t j = 0; j < n; j++) {
                double shifted = check_get(x, base + j * inner) - max;
                ref[base + j * inner] = log_form ? shifted - log(sum) : exp(shifted) / sum;
            }
        }
    }
}

static void check_softmax(check_tensor *x, int32_t axis)
{
    for (int log_form = 0; log_form < 2; log_form++) {
        dfg_op op = log_form ? DFG_OP_LOG_SOFTMAX : DFG_OP_SOFTMAX;
        dfg_attrs a;
        dfg_attrs_init(&a);
        a.axis = axis;
        double *ref = alloc_ref(x->numel);
        ref_softmax(x, axis < 0 ? axis + x->type.rank : axis, log_form, ref);
        check_tensor out = check_empty(x->type), inplace = ref_copy(x);
        check_tensor *in[] = {x}, *self[] = {&inplace};
        assert_int_equal(run(op, &a, 1, in, &out), DFG_OK);
        char what[64];
        snprintf(what, sizeof what, "%s axis %d", dfg_op_get(op)->name, (int)axis);
        check_expect_close(what, &out, ref);
        assert_int_equal(run(op, &a, 1, self, &inplace), DFG_OK);
        assert_memory_equal(inplace.data, out.data,
                            (size_t)x->numel * dfg_dtype_size(x->type.dtype));
        free(ref);
        check_tensor_free(&out), check_tensor_free(&inplace);
    }
}

static void test_softmax_every_axis(void **state)
{
    (void)state;
    const int64_t shape[] = {3, 4, 5, 6};
    check_seed(14);
    for (size_t d = 0; d < 3; d++) {
        check_tensor x = ref_scaled(check_type(check_float_dtypes[d], 4, shape), 3.0, 0);
        for (int32_t axis = -4; axis < 4; axis++)
            check_softmax(&x, axis);
        check_tensor_free(&x);
    }
}

static void test_softmax_large_inputs(void **state)
{
    (void)state;
    const int64_t wide[] = {64, 1024}, lanes[] = {8, 300, 40};
    check_seed(15);
    /* |x| up to 1000: exp without the max subtracted overflows. */
    check_tensor x = ref_scaled(check_type(DFG_F32, 2, wide), 1000.0, 0);
    check_softmax(&x, 1);
    check_softmax(&x, 0);
    check_tensor_free(&x);
    x = ref_scaled(check_type(DFG_F32, 3, lanes), 50.0, 0);
    check_softmax(&x, 1);
    check_tensor_free(&x);
    x = ref_scaled(check_type(DFG_BF16, 2, wide), 1000.0, 0);
    check_softmax(&x, 1);
    check_tensor_free(&x);
}

/* ---- normalisation --------------------------------------------------------------- */

static void check_layer_norm(check_tensor *x, int32_t axis, int with_bias)
{
    int32_t first = axis < 0 ? axis + x->type.rank : axis;
    dfg_type pt = {x->type.dtype, x->type.rank - first, {0}, 0};
    for (int32_t d = first; d < x->type.rank; d++)
        pt.shape[d - first] = x->type.shape[d];
    check_tensor scale = check_random(pt), bias = check_random(pt);
    int64_t width = scale.numel;
    double *ref = alloc_ref(x->numel);
    for (int64_t row = 0; row < x->numel / width; row++) {
        double mean = 0, var = 0;
        for (int64_t j = 0; j < width; j++)
            mean += check_get(x, row * width + j) / (double)width;
        for (int64_t j = 0; j < width; j++) {
            double c = check_get(x, row * width + j) - mean;
            var += c * c / (double)width;
        }
        for (int64_t j = 0; j < width; j++)
            ref[row * width + j] = (check_get(x, row * width + j) - mean) /
                                       sqrt(var + 1e-5) * check_get(&scale, j) +
                                   (with_bias ? check_get(&bias, j) : 0);
    }
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.axis = axis;
    check_tensor out = check_empty(x->type), inplace = ref_copy(x);
    check_tensor *in[] = {x, &scale, with_bias ? &bias : NULL};
    assert_int_equal(run(DFG_OP_LAYER_NORM, &a, 3, in, &out), DFG_OK);
    char what[64];
    snprintf(what, sizeof what, "layer_norm axis %d bias %d", (int)axis, with_bias);
    check_expect_close(what, &out, ref);
    in[0] = &inplace;
    assert_int_equal(run(DFG_OP_LAYER_NORM, &a, 3, in, &inplace), DFG_OK);
    assert_memory_equal(inplace.data, out.data,
                        (size_t)x->numel * dfg_dtype_size(x->type.dtype));
    free(ref);
    check_tensor_free(&scale), check_tensor_free(&bias);
    check_tensor_free(&out), check_tensor_free(&inplace);
}

/* Rows of f32 with a NaN (rows 0 and 2, at different lane positions) or
 * an infinity (row 1) over the last axis: reduce_max gives NaN, inf, NaN
 * and the row's maximum; softmax gives NaN on rows 0 to 2 (inf - inf is
 * NaN, as in the ONNX reference) and a finite row 3. Odd length 13, so
 * lanes and tail both hold specials. */
static void test_last_axis_specials(void **state)
{
    (void)state;
    const int64_t shape[] = {4, 13}, reduced_shape[] = {4, 1};
    check_seed(16);
    check_tensor x = ref_scaled(check_type(DFG_F32, 2, shape), 3.0, 0);
    float *v = x.data;
    v[0 * 13 + 3] = NAN, v[2 * 13 + 12] = NAN, v[1 * 13 + 9] = INFINITY;
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.n_axes = 1, a.axes[0] = 1, a.keepdims = 1, a.axis = 1;
    check_tensor max = check_empty(check_type(DFG_F32, 2, reduced_shape));
    check_tensor soft = check_empty(x.type);
    check_tensor *in[] = {&x};
    assert_int_equal(run(DFG_OP_REDUCE_MAX, &a, 1, in, &max), DFG_OK);
    assert_int_equal(run(DFG_OP_SOFTMAX, &a, 1, in, &soft), DFG_OK);
    const float *m = max.data, *s = soft.data;
    assert_true(isnan(m[0]) && isnan(m[2]) && m[1] == INFINITY);
    float want = -INFINITY;
    for (int64_t j = 0; j < 13; j++)
        want = v[3 * 13 + j] > want ? v[3 * 13 + j] : want;
    assert_true(m[3] == want);
    for (int64_t j = 0; j < 13; j++) {
        assert_true(isnan(s[j]) && isnan(s[13 + j]) && isnan(s[2 * 13 + j]));
        assert_true(!isnan(s[3 * 13 + j]) && s[3 * 13 + j] > 0.0f);
    }
    check_tensor_free(&x), check_tensor_free(&max), check_tensor_free(&soft);
}

static void test_layer_norm(void **state)
{
    (void)state;
    const int64_t shape[] = {3, 4, 5, 6}, large[] = {256, 300};
    const int32_t axes[] = {-1, 1, 2, 0, -3};
    check_seed(16);
    for (size_t d = 0; d < 3; d++) {
        check_tensor x = check_random(check_type(check_float_dtypes[d], 4, shape));
        for (size_t i = 0; i < 5; i++)
            for (int with_bias = 0; with_bias < 2; with_bias++)
                check_layer_norm(&x, axes[i], with_bias);
        check_tensor_free(&x);
    }
    /* A mean far from zero against a spread of about 1. */
    check_tensor x = ref_scaled(check_type(DFG_F32, 2, large), 1.0, 0);
    for (int64_t i = 0; i < x.numel; i++)
        ((float *)x.data)[i] += 100.0f;
    check_layer_norm(&x, -1, 1);
    check_tensor_free(&x);
}

static void test_batch_norm(void **state)
{
    (void)state;
    const int64_t s4[] = {2, 3, 4, 5}, s2[] = {4, 3}, large[] = {2, 8, 64, 64};
    /* BatchNorm1d's [rows, C] on threads: channel runs of 256 and a
     * partial one, by blocks of rows */
    const int64_t rows_c[] = {300, 600};
    const dfg_type shapes[] = {check_type(DFG_F32, 4, s4), check_type(DFG_F32, 2, s2),
                               check_type(DFG_F32, 4, large),
                               check_type(DFG_F32, 2, rows_c)};
    check_seed(17);
    for (size_t d = 0; d < 3; d++) {
        for (size_t s = 0; s < 4; s++) {
            dfg_type t = shapes[s];
            t.dtype = check_float_dtypes[d];
            int64_t channels = t.shape[1];
            dfg_type pt = check_type(t.dtype, 1, &channels);
            check_tensor x = check_random(t), scale = check_random(pt);
            check_tensor bias = check_random(pt), mean = check_random(pt);
            check_tensor var = ref_scaled(pt, 2.0, 1);
            int64_t plane = x.numel / (t.shape[0] * channels);
            double *ref = alloc_ref(x.numel);
            for (int64_t i = 0; i < x.numel; i++) {
                int64_t c = i / plane % channels;
                ref[i] = (check_get(&x, i) - check_get(&mean, c)) /
                             sqrt(check_get(&var, c) + 1e-5) * check_get(&scale, c) +
                         check_get(&bias, c);
            }
            dfg_attrs a;
            dfg_attrs_init(&a);
            check_tensor out = check_empty(t);
            check_tensor *in[] = {&x, &scale, &bias, &mean, &var};
            assert_int_equal(run(DFG_OP_BATCH_NORM, &a, 5, in, &out), DFG_OK);
            check_expect_close("batch_norm", &out, ref);
            assert_int_equal(run(DFG_OP_BATCH_NORM, &a, 5, in, &x), DFG_OK);
            assert_memory_equal(x.data, out.data, (size_t)x.numel * dfg_dtype_size(t.dtype));
            free(ref);
            check_tensor_free(&x), check_tensor_free(&scale), check_tensor_free(&bias);
            check_tensor_free(&mean), check_tensor_free(&var), check_tensor_free(&out);
        }
    }
}

static void test_bad_axes_are_errors(void **state)
{
    (void)state;
    const int64_t shape[] = {3, 4};
    check_tensor x = check_random(check_type(DFG_F32, 2, shape));
    check_tensor out = check_empty(x.type);
    check_tensor *in[] = {&x};
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.n_axes = 1;
    a.axes[0] = 2;
    assert_int_equal(run(DFG_OP_REDUCE_SUM, &a, 1, in, &out), DFG_ERR_INVALID_ARGUMENT);
    a.axis = -3;
    assert_int_equal(run(DFG_OP_SOFTMAX, &a, 1, in, &out), DFG_ERR_SHAPE);
    check_tensor_free(&x), check_tensor_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reduce_every_axis_combination),
        cmocka_unit_test(test_reduce_large_and_wrapping),
        cmocka_unit_test(test_global_average_pool),
        cmocka_unit_test(test_softmax_every_axis),
        cmocka_unit_test(test_softmax_large_inputs),
        cmocka_unit_test(test_last_axis_specials),
        cmocka_unit_test(test_layer_norm),
        cmocka_unit_test(test_batch_norm),
        cmocka_unit_test(test_bad_axes_are_errors),
    };
    return cmocka_run_group_tests(tests, NULL, check_report_worst);
}
