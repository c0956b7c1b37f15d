/* Shape rules and FLOP counts of every op, called through the op table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dfg/status.h"
#include "ir/op_table.h"
#include "ir/shape_rules.h"

#define DIMS(...) (int64_t[]){__VA_ARGS__}
#define N_DIMS(...) ((int32_t)(sizeof(DIMS(__VA_ARGS__)) / sizeof(int64_t)))
/* A type of dtype dt with the listed dims. */
#define T(dt, ...) make_type(dt, N_DIMS(__VA_ARGS__), DIMS(__VA_ARGS__))
#define SCALAR(dt) make_type(dt, 0, NULL)
#define ABSENT make_type(DFG_F32, -1, NULL)
#define EXPECT_SHAPE(type, ...) \
    expect_shape(&(type), N_DIMS(__VA_ARGS__), DIMS(__VA_ARGS__))

static dfg_type make_type(dfg_dtype dt, int32_t rank, const int64_t *dims)
{
    dfg_type t = {dt, rank, {0}, 0};
    for (int32_t i = 0; i < rank; i++)
        t.shape[i] = dims[i];
    return t;
}

static void expect_shape(const dfg_type *t, int32_t rank, const int64_t *dims)
{
    assert_int_equal(t->rank, rank);
    for (int32_t i = 0; i < rank; i++)
        assert_int_equal(t->shape[i], dims[i]);
}

static dfg_attrs defaults(void)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    return a;
}

/* Runs op's shape rule on n_in inputs into out[0..n_out). */
static dfg_status infer_n(dfg_op op, const dfg_attrs *a, const dfg_type *in,
                          int32_t n_in, dfg_type *out, int32_t n_out)
{
    memset(out, 0x5a, (size_t)n_out * sizeof *out);
    return dfg_op_get(op)->shape(a, in, n_in, out, n_out);
}

#define INFER(op, attrs, out, ...)                                           \
    infer_n(op, attrs, (dfg_type[]){__VA_ARGS__},                            \
            (int32_t)(sizeof((dfg_type[]){__VA_ARGS__}) / sizeof(dfg_type)), \
            out, 1)

static void test_binary_broadcast(void **state)
{
    (void)state;
    dfg_attrs a = defaults();
    dfg_type out;
    assert_int_equal(INFER(DFG_OP_ADD, &a, &out, T(DFG_F32, 2, 1, 4),
                           T(DFG_F32, 3, 1)), DFG_OK);
    EXPECT_SHAPE(out, 2, 3, 4);
    assert_int_equal(out.dtype, DFG_F32);
    assert_int_equal(INFER(DFG_OP_MUL, &a, &out, SCALAR(DFG_I32),
                           T(DFG_I32, 5)), DFG_OK);
    EXPECT_SHAPE(out, 5);
    assert_int_equal(INFER(DFG_OP_SUB, &a, &out, T(DFG_F32, 2, 3),
                           T(DFG_F32, 4)), DFG_ERR_SHAPE);
    assert_non_null(strstr(dfg_last_error(), "[2,3]"));
    assert_non_null(strstr(dfg_last_error(), "3 vs 4"));
    assert_int_equal(INFER(DFG_OP_ADD, &a, &out, T(DFG_F32, 2),
                           T(DFG_F16, 2)), DFG_ERR_DTYPE);
    assert_non_null(strstr(dfg_last_error(), "f16"));
    assert_int_equal(INFER(DFG_OP_ADD, &a, &out,
                           T(DFG_F32, (int64_t)1 << 40, 1),
                           T(DFG_F32, (int64_t)1 << 40)), DFG_ERR_OVERFLOW);
}

static void test_compare_where_cast_unary(void **state)
{
    (void)state;
    dfg_attrs a = defaults();
    dfg_type out;
    assert_int_equal(INFER(DFG_OP_LESS, &a, &out, T(DFG_I64, 4, 1),
                           T(DFG_I64, 3)), DFG_OK);
    EXPECT_SHAPE(out, 4, 3);
    assert_int_equal(out.dtype, DFG_BOOL);
    /* f64 is moved and cast, never compared (the kernels would round) */
    assert_int_equal(INFER(DFG_OP_EQUAL, &a, &out, T(DFG_F64, 4, 1),
                           T(DFG_F64, 3)), DFG_ERR_DTYPE);
    assert_int_equal(INFER(DFG_OP_WHERE, &a, &out, T(DFG_BOOL, 2, 1),
                           T(DFG_F16, 1, 3), T(DFG_F16, 3)), DFG_OK);
    EXPECT_SHAPE(out, 2, 3);
    assert_int_equal(out.dtype, DFG_F16);
    assert_int_equal(INFER(DFG_OP_WHERE, &a, &out, T(DFG_BOOL, 2),
                           T(DFG_F32, 2), T(DFG_I32, 2)), DFG_ERR_DTYPE);
    assert_int_equal(INFER(DFG_OP_WHERE, &a, &out, T(DFG_BOOL, 5),
                           T(DFG_F32, 2, 1), T(DFG_F32, 3)), DFG_ERR_SHAPE);
    a.to = DFG_I64;
    assert_int_equal(INFER(DFG_OP_CAST, &a, &out, T(DFG_F32, 7, 2)), DFG_OK);
    EXPECT_SHAPE(out, 7, 2);
    assert_int_equal(out.dtype, DFG_I64);
    a.to = (dfg_dtype)99;
    assert_int_equal(INFER(DFG_OP_CAST, &a, &out, T(DFG_F32, 7)),
                     DFG_ERR_INVALID_ARGUMENT);
    a = defaults();
    assert_int_equal(INFER(DFG_OP_GELU, &a, &out, T(DFG_BF16, 3, 5)), DFG_OK);
    EXPECT_SHAPE(out, 3, 5);
    assert_int_equal(out.dtype, DFG_BF16);
    assert_int_equal(INFER(DFG_OP_IDENTITY, &a, &out, SCALAR(DFG_U8)), DFG_OK);
    EXPECT_SHAPE(out);
}

static void test_matmul(void **state)
{
    (void)state;
    dfg_attrs a = defaults();
    dfg_type out;
    assert_int_equal(INFER(DFG_OP_MATMUL, &a, &out, T(DFG_F32, 2, 3),
                           T(DFG_F32, 3, 4)), DFG_OK);
    EXPECT_SHAPE(out, 2, 4);
    assert_int_equal(INFER(DFG_OP_MATMUL, &a, &out, T(DFG_F32, 3),
                           T(DFG_F32, 3, 4)), DFG_OK);
    EXPECT_SHAPE(out, 4);
    assert_int_equal(INFER(DFG_OP_MATMUL, &a, &out, T(DFG_F32, 2, 3),
                           T(DFG_F32, 3)), DFG_OK);
    EXPECT_SHAPE(out, 2);
    assert_int_equal(INFER(DFG_OP_MATMUL, &a, &out, T(DFG_F32, 3),
                           T(DFG_F32, 3)), DFG_OK);
    EXPECT_SHAPE(out);
    assert_int_equal(INFER(DFG_OP_MATMUL, &a, &out, T(DFG_F32, 5, 1, 2, 3),
                           T(DFG_F32, 4, 3, 6)), DFG_OK);
    EXPECT_SHAPE(out, 5, 4, 2, 6);
    assert_int_equal(INFER(DFG_OP_MATMUL, &a, &out, T(DFG_F32, 7, 2, 3),
                           T(DFG_F32, 3)), DFG_OK);
    EXPECT_SHAPE(out, 7, 2);
    assert_int_equal(INFER(DFG_OP_MATMUL, &a, &out, T(DFG_F32, 2, 3),
                           T(DFG_F32, 4, 5)), DFG_ERR_SHAPE);
    assert_non_null(strstr(dfg_last_error(), "3 columns"));
    assert_int_equal(INFER(DFG_OP_MATMUL, &a, &out, T(DFG_F32, 2, 2, 3),
                           T(DFG_F32, 3, 3, 4)), DFG_ERR_SHAPE);
    assert_int_equal(INFER(DFG_OP_MATMUL, &a, &out, SCALAR(DFG_F32),
                           T(DFG_F32, 3)), DFG_ERR_SHAPE);
}

static void test_gemm(void **state)
{
    (void)state;
    dfg_attrs a = defaults();
    dfg_type out;
    assert_int_equal(INFER(DFG_OP_GEMM, &a, &out, T(DFG_F32, 3, 4),
                           T(DFG_F32, 4, 5), ABSENT), DFG_OK);
    EXPECT_SHAPE(out, 3, 5);
    a.trans_a = a.trans_b = 1;
    assert_int_equal(INFER(DFG_OP_GEMM, &a, &out, T(DFG_F32, 4, 3),
                           T(DFG_F32, 5, 4), T(DFG_F32, 5)), DFG_OK);
    EXPECT_SHAPE(out, 3, 5);
    assert_int_equal(INFER(DFG_OP_GEMM, &a, &out, T(DFG_F32, 4, 3),
                           T(DFG_F32, 5, 4), T(DFG_F32, 3, 1)), DFG_OK);
    assert_int_equal(INFER(DFG_OP_GEMM, &a, &out, T(DFG_F32, 4, 3),
                           T(DFG_F32, 5, 4), T(DFG_F32, 2, 5)), DFG_ERR_SHAPE);
    assert_int_equal(INFER(DFG_OP_GEMM, &a, &out, T(DFG_F32, 4, 3),
                           T(DFG_F32, 5, 4), T(DFG_F32, 1, 3, 5)),
                     DFG_ERR_SHAPE);
    assert_int_equal(INFER(DFG_OP_GEMM, &a, &out, T(DFG_F32, 4, 3),
                           T(DFG_F32, 4, 5), ABSENT), DFG_ERR_SHAPE);
    assert_non_null(strstr(dfg_last_error(), "trans_b = 1"));
    assert_int_equal(INFER(DFG_OP_GEMM, &a, &out, T(DFG_F32, 2, 4, 3),
                           T(DFG_F32, 5, 4), ABSENT), DFG_ERR_SHAPE);
}

static void test_conv2d(void **state)
{
    (void)state;
    dfg_attrs a = defaults();
    dfg_type out;
    a.pads[0] = 1, a.pads[1] = 2, a.pads[2] = 0, a.pads[3] = 1;
    a.strides[0] = 2;
    a.dilations[1] = 2;
    /* H: (10+1+0-3)/2+1 = 5; W: (12+2+1-5)/1+1 = 11. */
    assert_int_equal(INFER(DFG_OP_CONV2D, &a, &out, T(DFG_F32, 1, 3, 10, 12),
                           T(DFG_F32, 8, 3, 3, 3), T(DFG_F32, 8)), DFG_OK);
    EXPECT_SHAPE(out, 1, 8, 5, 11);

    a = defaults();
    a.group = 2;
    assert_int_equal(INFER(DFG_OP_CONV2D, &a, &out, T(DFG_F32, 2, 6, 7, 7),
                           T(DFG_F32, 4, 3, 3, 3), ABSENT), DFG_OK);
    EXPECT_SHAPE(out, 2, 4, 5, 5);
    a.group = 1;
    assert_int_equal(INFER(DFG_OP_CONV2D, &a, &out, T(DFG_F32, 2, 6, 7, 7),
                           T(DFG_F32, 4, 3, 3, 3), ABSENT), DFG_ERR_SHAPE);
    assert_non_null(strstr(dfg_last_error(),
                           "3 channels per group, expected 6 (C=6, group=1)"));
    a.group = 4;
    assert_int_equal(INFER(DFG_OP_CONV2D, &a, &out, T(DFG_F32, 2, 6, 7, 7),
                           T(DFG_F32, 4, 3, 3, 3), ABSENT),
                     DFG_ERR_INVALID_ARGUMENT);
    a.group = 2;
    assert_int_equal(INFER(DFG_OP_CONV2D, &a, &out, T(DFG_F32, 2, 6, 7, 7),
                           T(DFG_F32, 4, 3, 3, 3), T(DFG_F32, 3)),
                     DFG_ERR_SHAPE);
    assert_int_equal(INFER(DFG_OP_CONV2D, &a, &out, T(DFG_F32, 2, 6, 2, 7),
                           T(DFG_F32, 4, 3, 3, 3), ABSENT), DFG_ERR_SHAPE);
    assert_non_null(strstr(dfg_last_error(), "height"));
    a.strides[1] = 0;
    assert_int_equal(INFER(DFG_OP_CONV2D, &a, &out, T(DFG_F32, 2, 6, 7, 7),
                           T(DFG_F32, 4, 3, 3, 3), ABSENT),
                     DFG_ERR_INVALID_ARGUMENT);
    a = defaults();
    a.pads[2] = -1;
    assert_int_equal(INFER(DFG_OP_CONV2D, &a, &out, T(DFG_F32, 2, 6, 7, 7),
                           T(DFG_F32, 4, 6, 3, 3), ABSENT),
                     DFG_ERR_INVALID_ARGUMENT);
    a = defaults();
    a.pads[0] = INT64_MAX;
    a.dilations[0] = INT32_MAX;
    assert_int_equal(INFER(DFG_OP_CONV2D, &a, &out, T(DFG_F32, 2, 6, 7, 7),
                           T(DFG_F32, 4, 6, 3, 3), ABSENT), DFG_ERR_OVERFLOW);
    assert_int_equal(INFER(DFG_OP_CONV2D, &a, &out, T(DFG_F32, 6, 7, 7),
                           T(DFG_F32, 4, 6, 3, 3), ABSENT), DFG_ERR_SHAPE);
    assert_int_equal(INFER(DFG_OP_CONV2D, &a, &out, T(DFG_F32, 2, 6, 7, 7),
                           T(DFG_F16, 4, 6, 3, 3), ABSENT), DFG_ERR_DTYPE);
}

static void test_pools(void **state)
{
    (void)state;
    dfg_attrs a = defaults();
    dfg_type out;
    a.kernel[0] = a.kernel[1] = 3;
    a.strides[0] = a.strides[1] = 2;
    assert_int_equal(INFER(DFG_OP_MAX_POOL, &a, &out, T(DFG_F32, 1, 2, 6, 6)),
                     DFG_OK);
    EXPECT_SHAPE(out, 1, 2, 2, 2);
    a.ceil_mode = 1;
    assert_int_equal(INFER(DFG_OP_MAX_POOL, &a, &out, T(DFG_F32, 1, 2, 6, 6)),
                     DFG_OK);
    EXPECT_SHAPE(out, 1, 2, 3, 3);
    /* ceil_mode drops a last window that would start in the end padding:
     * size 5, pads 1+1, kernel 2, stride 2 gives 3, not 4. */
    a.kernel[0] = a.kernel[1] = 2;
    a.pads[0] = a.pads[1] = a.pads[2] = a.pads[3] = 1;
    assert_int_equal(INFER(DFG_OP_AVERAGE_POOL, &a, &out,
                           T(DFG_F32, 1, 2, 5, 5)), DFG_OK);
    EXPECT_SHAPE(out, 1, 2, 3, 3);
    a.kernel[1] = 0;
    assert_int_equal(INFER(DFG_OP_AVERAGE_POOL, &a, &out,
                           T(DFG_F32, 1, 2, 5, 5)), DFG_ERR_INVALID_ARGUMENT);
    a = defaults();
    assert_int_equal(INFER(DFG_OP_GLOBAL_AVERAGE_POOL, &a, &out,
                           T(DFG_F32, 2, 3, 4, 5)), DFG_OK);
    EXPECT_SHAPE(out, 2, 3, 1, 1);
    assert_int_equal(INFER(DFG_OP_GLOBAL_AVERAGE_POOL, &a, &out,
                           T(DFG_F32, 2, 3)), DFG_ERR_SHAPE);
}

static void test_normalizations(void **state)
{
    (void)state;
    dfg_attrs a = defaults();
    dfg_type out;
    assert_int_equal(INFER(DFG_OP_BATCH_NORM, &a, &out, T(DFG_F32, 2, 3, 4),
                           T(DFG_F32, 3), T(DFG_F32, 3), T(DFG_F32, 3),
                           T(DFG_F32, 3)), DFG_OK);
    EXPECT_SHAPE(out, 2, 3, 4);
    assert_int_equal(INFER(DFG_OP_BATCH_NORM, &a, &out, T(DFG_F32, 2, 3, 4),
                           T(DFG_F32, 3), T(DFG_F32, 3), T(DFG_F32, 4),
                           T(DFG_F32, 3)), DFG_ERR_SHAPE);
    assert_non_null(strstr(dfg_last_error(), "mean"));
    a.axis = -2;
    assert_int_equal(INFER(DFG_OP_LAYER_NORM, &a, &out, T(DFG_F32, 2, 3, 4),
                           T(DFG_F32, 3, 4), ABSENT), DFG_OK);
    EXPECT_SHAPE(out, 2, 3, 4);
    assert_int_equal(INFER(DFG_OP_LAYER_NORM, &a, &out, T(DFG_F32, 2, 3, 4),
                           T(DFG_F32, 3, 4), T(DFG_F32, 4)), DFG_ERR_SHAPE);
    a.axis = 3;
    assert_int_equal(INFER(DFG_OP_LAYER_NORM, &a, &out, T(DFG_F32, 2, 3, 4),
                           T(DFG_F32, 4), ABSENT), DFG_ERR_INVALID_ARGUMENT);
    a.axis = -1;
    assert_int_equal(INFER(DFG_OP_SOFTMAX, &a, &out, T(DFG_F32, 2, 3)), DFG_OK);
    EXPECT_SHAPE(out, 2, 3);
    a.axis = 2;
    assert_int_equal(INFER(DFG_OP_LOG_SOFTMAX, &a, &out, T(DFG_F32, 2, 3)),
                     DFG_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(dfg_last_error(), "axis 2"));
}

static void test_reduce(void **state)
{
    (void)state;
    dfg_attrs a = defaults();
    dfg_type out;
    a.n_axes = 1;
    a.axes[0] = -2;
    assert_int_equal(INFER(DFG_OP_REDUCE_SUM, &a, &out, T(DFG_F32, 2, 3, 4)),
                     DFG_OK);
    EXPECT_SHAPE(out, 2, 1, 4);
    a.keepdims = 0;
    assert_int_equal(INFER(DFG_OP_REDUCE_MEAN, &a, &out, T(DFG_F32, 2, 3, 4)),
                     DFG_OK);
    EXPECT_SHAPE(out, 2, 4);
    a.n_axes = 0;
    assert_int_equal(INFER(DFG_OP_REDUCE_MAX, &a, &out, T(DFG_F32, 2, 3, 4)),
                     DFG_OK);
    EXPECT_SHAPE(out);
    a.keepdims = 1;
    assert_int_equal(INFER(DFG_OP_REDUCE_MAX, &a, &out, T(DFG_F32, 2, 3, 4)),
                     DFG_OK);
    EXPECT_SHAPE(out, 1, 1, 1);
    a.n_axes = 2;
    a.axes[0] = 1, a.axes[1] = -2;
    assert_int_equal(INFER(DFG_OP_REDUCE_SUM, &a, &out, T(DFG_F32, 2, 3, 4)),
                     DFG_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(dfg_last_error(), "twice"));
    a.axes[1] = 3;
    assert_int_equal(INFER(DFG_OP_REDUCE_SUM, &a, &out, T(DFG_F32, 2, 3, 4)),
                     DFG_ERR_INVALID_ARGUMENT);
    a.n_axes = 1000;
    assert_int_equal(INFER(DFG_OP_REDUCE_SUM, &a, &out, T(DFG_F32, 2, 3, 4)),
                     DFG_ERR_INVALID_ARGUMENT);
}

static void test_reshape_flatten_transpose(void **state)
{
    (void)state;
    dfg_attrs a = defaults();
    dfg_type out;
    a.n_shape = 2;
    a.shape[0] = 0, a.shape[1] = -1;
    assert_int_equal(INFER(DFG_OP_RESHAPE, &a, &out, T(DFG_F32, 2, 3, 4)),
                     DFG_OK);
    EXPECT_SHAPE(out, 2, 12);
    a.n_shape = 3;
    a.shape[0] = 4, a.shape[1] = -1, a.shape[2] = 2;
    assert_int_equal(INFER(DFG_OP_RESHAPE, &a, &out, T(DFG_F32, 2, 3, 4)),
                     DFG_OK);
    EXPECT_SHAPE(out, 4, 3, 2);
    a.shape[2] = -1;
    assert_int_equal(INFER(DFG_OP_RESHAPE, &a, &out, T(DFG_F32, 2, 3, 4)),
                     DFG_ERR_INVALID_ARGUMENT);
    a.shape[1] = 5, a.shape[2] = 2;
    assert_int_equal(INFER(DFG_OP_RESHAPE, &a, &out, T(DFG_F32, 2, 3, 4)),
                     DFG_ERR_SHAPE);
    a.shape[1] = -1, a.shape[2] = 5;
    assert_int_equal(INFER(DFG_OP_RESHAPE, &a, &out, T(DFG_F32, 2, 3, 4)),
                     DFG_ERR_SHAPE);
    a.n_shape = 9;
    assert_int_equal(INFER(DFG_OP_RESHAPE, &a, &out, T(DFG_F32, 24)),
                     DFG_ERR_INVALID_ARGUMENT);
    a.n_shape = -3;
    assert_int_equal(INFER(DFG_OP_RESHAPE, &a, &out, T(DFG_F32, 24)),
                     DFG_ERR_INVALID_ARGUMENT);

    a = defaults();
    a.axis = -1;
    assert_int_equal(INFER(DFG_OP_FLATTEN, &a, &out, T(DFG_F32, 2, 3, 4)),
                     DFG_OK);
    EXPECT_SHAPE(out, 6, 4);
    a.axis = 3;
    assert_int_equal(INFER(DFG_OP_FLATTEN, &a, &out, T(DFG_F32, 2, 3, 4)),
                     DFG_OK);
    EXPECT_SHAPE(out, 24, 1);
    a.axis = 0;
    assert_int_equal(INFER(DFG_OP_FLATTEN, &a, &out, T(DFG_F32, 2, 3, 4)),
                     DFG_OK);
    EXPECT_SHAPE(out, 1, 24);
    a.axis = 4;
    assert_int_equal(INFER(DFG_OP_FLATTEN, &a, &out, T(DFG_F32, 2, 3, 4)),
                     DFG_ERR_INVALID_ARGUMENT);

    a = defaults();
    assert_int_equal(INFER(DFG_OP_TRANSPOSE, &a, &out, T(DFG_F32, 2, 3, 4)),
                     DFG_OK);
    EXPECT_SHAPE(out, 4, 3, 2);
    a.n_shape = 3;
    a.shape[0] = 0, a.shape[1] = 2, a.shape[2] = 1;
    assert_int_equal(INFER(DFG_OP_TRANSPOSE, &a, &out, T(DFG_F32, 2, 3, 4)),
                     DFG_OK);
    EXPECT_SHAPE(out, 2, 4, 3);
    a.shape[1] = 0;
    assert_int_equal(INFER(DFG_OP_TRANSPOSE, &a, &out, T(DFG_F32, 2, 3, 4)),
                     DFG_ERR_INVALID_ARGUMENT);
    a.n_shape = 2;
    assert_int_equal(INFER(DFG_OP_TRANSPOSE, &a, &out, T(DFG_F32, 2, 3, 4)),
                     DFG_ERR_INVALID_ARGUMENT);
}

static void test_concat_split(void **state)
{
    (void)state;
    dfg_attrs a = defaults();
    dfg_type out, outs[3];
    a.axis = -1;
    assert_int_equal(INFER(DFG_OP_CONCAT, &a, &out, T(DFG_F32, 2, 3),
                           T(DFG_F32, 2, 5), T(DFG_F32, 2, 1)), DFG_OK);
    EXPECT_SHAPE(out, 2, 9);
    assert_int_equal(INFER(DFG_OP_CONCAT, &a, &out, T(DFG_F32, 2, 3),
                           T(DFG_F32, 3, 5)), DFG_ERR_SHAPE);
    assert_int_equal(INFER(DFG_OP_CONCAT, &a, &out, T(DFG_F32, 2, 3),
                           T(DFG_I32, 2, 5)), DFG_ERR_DTYPE);
    assert_int_equal(INFER(DFG_OP_CONCAT, &a, &out, T(DFG_F32, 2, 3), ABSENT),
                     DFG_ERR_INVALID_ARGUMENT);

    a.axis = 1;
    a.n_split = 2;
    a.split[0] = 1, a.split[1] = 4;
    dfg_type x = T(DFG_F32, 3, 5, 2);
    assert_int_equal(infer_n(DFG_OP_SPLIT, &a, &x, 1, outs, 2), DFG_OK);
    EXPECT_SHAPE(outs[0], 3, 1, 2);
    EXPECT_SHAPE(outs[1], 3, 4, 2);
    a.split[1] = 3;
    assert_int_equal(infer_n(DFG_OP_SPLIT, &a, &x, 1, outs, 2), DFG_ERR_SHAPE);
    a.split[1] = -1;
    assert_int_equal(infer_n(DFG_OP_SPLIT, &a, &x, 1, outs, 2),
                     DFG_ERR_INVALID_ARGUMENT);
    assert_int_equal(infer_n(DFG_OP_SPLIT, &a, &x, 1, outs, 3),
                     DFG_ERR_INVALID_ARGUMENT);
    a.n_split = 0;
    a.axis = 0;
    x = T(DFG_F32, 6, 5);
    assert_int_equal(infer_n(DFG_OP_SPLIT, &a, &x, 1, outs, 3), DFG_OK);
    for (int i = 0; i < 3; i++)
        EXPECT_SHAPE(outs[i], 2, 5);
    a.axis = 1;
    assert_int_equal(infer_n(DFG_OP_SPLIT, &a, &x, 1, outs, 3), DFG_ERR_SHAPE);
}

static void test_slice(void **state)
{
    (void)state;
    dfg_attrs a = defaults();
    dfg_type out;
    a.n_axes = 1;
    struct {
        int64_t start, end, step, first, count;
    } cases[] = {
        {0, INT64_MAX, 3, 0, 4},      /* 0 3 6 9 */
        {-1, INT64_MIN, -1, 9, 10},   /* the whole axis reversed */
        {8, 1, -3, 8, 3},             /* 8 5 2 */
        {-3, -1, 1, 7, 2},            /* 7 8 */
        {20, 30, 1, 10, 0},           /* past the end: empty */
        {5, 2, 1, 5, 0},              /* backwards with a positive step */
        {9, -100, INT64_MIN, 9, 1},   /* a huge negative step */
        {0, 10, INT64_MAX, 0, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t first, count;
        dfg_slice_range(10, cases[i].start, cases[i].end, cases[i].step,
                        &first, &count);
        assert_int_equal(count, cases[i].count);
        if (count > 0)
            assert_int_equal(first, cases[i].first);
        a.axes[0] = -1;
        a.starts[0] = cases[i].start, a.ends[0] = cases[i].end;
        a.steps[0] = cases[i].step;
        assert_int_equal(INFER(DFG_OP_SLICE, &a, &out, T(DFG_F32, 4, 10)),
                         DFG_OK);
        EXPECT_SHAPE(out, 4, cases[i].count);
    }
    a.steps[0] = 0;
    assert_int_equal(INFER(DFG_OP_SLICE, &a, &out, T(DFG_F32, 4, 10)),
                     DFG_ERR_INVALID_ARGUMENT);
    a.n_axes = 2;
    a.axes[1] = 1;
    a.steps[0] = a.steps[1] = 1;
    assert_int_equal(INFER(DFG_OP_SLICE, &a, &out, T(DFG_F32, 4, 10)),
                     DFG_ERR_INVALID_ARGUMENT);
    a.n_axes = 3;
    assert_int_equal(INFER(DFG_OP_SLICE, &a, &out, T(DFG_F32, 4, 10)),
                     DFG_ERR_INVALID_ARGUMENT);
}

static void test_squeeze_unsqueeze_expand(void **state)
{
    (void)state;
    dfg_attrs a = defaults();
    dfg_type out;
    a.n_axes = 1;
    a.axes[0] = 0;
    assert_int_equal(INFER(DFG_OP_SQUEEZE, &a, &out, T(DFG_F32, 1, 3, 1)),
                     DFG_OK);
    EXPECT_SHAPE(out, 3, 1);
    a.axes[0] = 1;
    assert_int_equal(INFER(DFG_OP_SQUEEZE, &a, &out, T(DFG_F32, 1, 3, 1)),
                     DFG_ERR_SHAPE);
    a.n_axes = 0;
    assert_int_equal(INFER(DFG_OP_SQUEEZE, &a, &out, T(DFG_F32, 1, 3, 1)),
                     DFG_OK);
    EXPECT_SHAPE(out, 3);

    a.n_axes = 2;
    a.axes[0] = 0, a.axes[1] = -1;
    assert_int_equal(INFER(DFG_OP_UNSQUEEZE, &a, &out, T(DFG_F32, 3, 4)),
                     DFG_OK);
    EXPECT_SHAPE(out, 1, 3, 4, 1);
    a.axes[1] = 4;
    assert_int_equal(INFER(DFG_OP_UNSQUEEZE, &a, &out, T(DFG_F32, 3, 4)),
                     DFG_ERR_INVALID_ARGUMENT);
    a.n_axes = 1;
    a.axes[0] = 0;
    assert_int_equal(INFER(DFG_OP_UNSQUEEZE, &a, &out,
                           T(DFG_F32, 1, 1, 1, 1, 1, 1, 1, 1)),
                     DFG_ERR_INVALID_ARGUMENT);

    a = defaults();
    a.n_shape = 3;
    a.shape[0] = 2, a.shape[1] = 1, a.shape[2] = 4;
    assert_int_equal(INFER(DFG_OP_EXPAND, &a, &out, T(DFG_I32, 3, 1)), DFG_OK);
    EXPECT_SHAPE(out, 2, 3, 4);
    assert_int_equal(out.dtype, DFG_I32);
    assert_int_equal(INFER(DFG_OP_EXPAND, &a, &out, T(DFG_I32, 3, 2)),
                     DFG_ERR_SHAPE);
    a.shape[0] = -2;
    assert_int_equal(INFER(DFG_OP_EXPAND, &a, &out, T(DFG_I32, 3, 1)),
                     DFG_ERR_INVALID_ARGUMENT);
}

static void test_gather_pad(void **state)
{
    (void)state;
    dfg_attrs a = defaults();
    dfg_type out;
    a.axis = 1;
    assert_int_equal(INFER(DFG_OP_GATHER, &a, &out, T(DFG_F32, 5, 4, 3),
                           T(DFG_I64, 2, 6)), DFG_OK);
    EXPECT_SHAPE(out, 5, 2, 6, 3);
    assert_int_equal(INFER(DFG_OP_GATHER, &a, &out, T(DFG_F32, 5, 4, 3),
                           SCALAR(DFG_I32)), DFG_OK);
    EXPECT_SHAPE(out, 5, 3);
    assert_int_equal(INFER(DFG_OP_GATHER, &a, &out, T(DFG_F32, 5, 4, 3),
                           T(DFG_F32, 2)), DFG_ERR_DTYPE);
    a.axis = -4;
    assert_int_equal(INFER(DFG_OP_GATHER, &a, &out, T(DFG_F32, 5, 4, 3),
                           T(DFG_I32, 2)), DFG_ERR_INVALID_ARGUMENT);

    a = defaults();
    a.pads[0] = 1, a.pads[1] = 0, a.pads[2] = 2, a.pads[3] = 3;
    assert_int_equal(INFER(DFG_OP_PAD, &a, &out, T(DFG_U8, 2, 3)), DFG_OK);
    EXPECT_SHAPE(out, 5, 6);
    a.pads[1] = -1;
    assert_int_equal(INFER(DFG_OP_PAD, &a, &out, T(DFG_U8, 2, 3)),
                     DFG_ERR_INVALID_ARGUMENT);
    a.pads[1] = INT64_MAX;
    assert_int_equal(INFER(DFG_OP_PAD, &a, &out, T(DFG_U8, 2, 3)),
                     DFG_ERR_OVERFLOW);
}

static int64_t flops(dfg_op op, const dfg_attrs *a, const dfg_type *in,
                     int32_t n_in, const dfg_type *out)
{
    return dfg_op_get(op)->flops(a, in, n_in, out, 1);
}

static void test_flops(void **state)
{
    (void)state;
    dfg_attrs a = defaults();
    dfg_type out;
    dfg_type mm[2] = {T(DFG_F32, 2, 3, 4), T(DFG_F32, 4, 5)};
    assert_int_equal(infer_n(DFG_OP_MATMUL, &a, mm, 2, &out, 1), DFG_OK);
    assert_int_equal(flops(DFG_OP_MATMUL, &a, mm, 2, &out), 2 * 2 * 3 * 5 * 4);

    dfg_type gm[3] = {T(DFG_F32, 4, 3), T(DFG_F32, 4, 5), T(DFG_F32, 5)};
    a.trans_a = 1;
    assert_int_equal(infer_n(DFG_OP_GEMM, &a, gm, 3, &out, 1), DFG_OK);
    assert_int_equal(flops(DFG_OP_GEMM, &a, gm, 3, &out),
                     2 * 3 * 5 * 4 + 2 * 3 * 5);

    a = defaults();
    a.pads[0] = a.pads[1] = a.pads[2] = a.pads[3] = 1;
    a.group = 2;
    dfg_type cv[3] = {T(DFG_F32, 1, 4, 8, 8), T(DFG_F32, 6, 2, 3, 3),
                      T(DFG_F32, 6)};
    assert_int_equal(infer_n(DFG_OP_CONV2D, &a, cv, 3, &out, 1), DFG_OK);
    EXPECT_SHAPE(out, 1, 6, 8, 8);
    assert_int_equal(flops(DFG_OP_CONV2D, &a, cv, 3, &out),
                     2 * 384 * (2 * 3 * 3) + 384);
    cv[2] = ABSENT;
    assert_int_equal(flops(DFG_OP_CONV2D, &a, cv, 3, &out), 2 * 384 * 18);

    a = defaults();
    dfg_type x = T(DFG_F32, 2, 3);
    assert_int_equal(flops(DFG_OP_RESHAPE, &a, &x, 1, &x), 0);
    assert_int_equal(flops(DFG_OP_ADD, &a, &x, 1, &x), 6);
    /* Saturates instead of overflowing. */
    dfg_type big[2] = {T(DFG_F32, (int64_t)1 << 24, (int64_t)1 << 24),
                       T(DFG_F32, (int64_t)1 << 24, (int64_t)1 << 24)};
    assert_int_equal(infer_n(DFG_OP_MATMUL, &a, big, 2, &out, 1), DFG_OK);
    assert_true(flops(DFG_OP_MATMUL, &a, big, 2, &out) == INT64_MAX);
}

/* Random attributes and operands for every op: each rule either fails with
 * a message or yields a valid type, never reads out of bounds (run under
 * the sanitizers) and never crashes. */
static void test_random_attributes_never_crash(void **state)
{
    (void)state;
    srand(1234);
    static const int64_t picks[] = {-3, -1, 0, 1, 2, 3, 5, 9, 64, 1000,
                                    INT32_MAX, INT64_MAX, INT64_MIN};
    const int n_picks = (int)(sizeof picks / sizeof picks[0]);
    int ok = 0;
    for (int iter = 0; iter < 20000; iter++) {
        dfg_op op = (dfg_op)(iter % DFG_OP_COUNT);
        const dfg_op_info *info = dfg_op_get(op);
        dfg_attrs a = defaults();
        /* Small counts most of the time so that rules get past the first
         * checks; sometimes wild values. */
        int64_t *fields[] = {a.pads, a.axes, a.starts, a.ends, a.steps,
                             a.shape};
        for (int f = 0; f < 6; f++)
            for (int i = 0; i < DFG_MAX_RANK; i++)
                fields[f][i] = rand() % 2 ? rand() % 4 - 1
                                          : picks[rand() % n_picks];
        for (int i = 0; i < DFG_MAX_SPLIT; i++)
            a.split[i] = rand() % 4;
        a.axis = rand() % 7 - 3;
        a.n_axes = rand() % 3 ? rand() % 4 : (int32_t)picks[rand() % n_picks];
        a.n_shape = rand() % 3 ? rand() % 4 : (int32_t)picks[rand() % n_picks];
        a.n_split = rand() % 2 ? 0 : (int32_t)picks[rand() % n_picks];
        a.group = rand() % 3 + (rand() % 8 ? 0 : -1);
        a.keepdims = rand() % 2;
        a.trans_a = rand() % 2, a.trans_b = rand() % 2;
        a.to = (dfg_dtype)(rand() % (DFG_DTYPE_COUNT + 1));
        a.ceil_mode = rand() % 2;
        for (int i = 0; i < 2; i++) {
            a.kernel[i] = rand() % 4;
            a.strides[i] = rand() % 3;
            a.dilations[i] = rand() % 3;
        }
        int32_t n_in = info->max_inputs < 0 ? 1 + rand() % 3
                                            : info->max_inputs;
        int32_t n_out = info->outputs ? info->outputs : 1 + rand() % 4;
        dfg_type in[5], out[4];
        for (int32_t i = 0; i < n_in; i++) {
            in[i].dtype = i == 0 ? DFG_F32 : (dfg_dtype)(rand() % 3 * 3);
            in[i].rank = i >= info->min_inputs && rand() % 2 ? -1
                                                             : rand() % 5;
            for (int d = 0; d < DFG_MAX_RANK; d++)
                in[i].shape[d] = rand() % 16 ? rand() % 4 + 1 : 0;
        }
        if (op == DFG_OP_WHERE)
            in[0].dtype = DFG_BOOL;
        dfg_status st = infer_n(op, &a, in, n_in, out, n_out);
        if (st != DFG_OK) {
            assert_true(strlen(dfg_last_error()) > 0);
            continue;
        }
        ok++;
        for (int32_t o = 0; o < n_out; o++) {
            assert_true(out[o].rank >= 0 && out[o].rank <= DFG_MAX_RANK);
            assert_true(dfg_type_numel(&out[o]) >= 0);
            assert_true(info->flops(&a, in, n_in, out, n_out) >= 0);
        }
    }
    assert_true(ok > 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_binary_broadcast),
        cmocka_unit_test(test_compare_where_cast_unary),
        cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_gemm),
        cmocka_unit_test(test_conv2d),
        cmocka_unit_test(test_pools),
        cmocka_unit_test(test_normalizations),
        cmocka_unit_test(test_reduce),
        cmocka_unit_test(test_reshape_flatten_transpose),
        cmocka_unit_test(test_concat_split),
        cmocka_unit_test(test_slice),
        cmocka_unit_test(test_squeeze_unsqueeze_expand),
        cmocka_unit_test(test_gather_pad),
        cmocka_unit_test(test_flops),
        cmocka_unit_test(test_random_attributes_never_crash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
