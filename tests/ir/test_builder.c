/* The typed builder (dfg/builder.h): small graphs through every function,
 * and every category of bad input with its error code, its message and an
 * unchanged graph. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "dfg/dfg.h"

#define DIMS(...) (const int64_t[]){__VA_ARGS__}
#define N_DIMS(...) ((int32_t)(sizeof(DIMS(__VA_ARGS__)) / sizeof(int64_t)))
#define EXPECT_TYPE(g, v, dt, ...) \
    expect_type(g, v, dt, N_DIMS(__VA_ARGS__), DIMS(__VA_ARGS__))

static dfg_value input(dfg_graph *g, const char *name, dfg_dtype dt,
                       int32_t rank, const int64_t *shape)
{
    dfg_value v;
    assert_int_equal(dfg_graph_input(g, name, dt, rank, shape, &v), DFG_OK);
    return v;
}
#define INPUT(g, name, dt, ...) \
    input(g, name, dt, N_DIMS(__VA_ARGS__), DIMS(__VA_ARGS__))

static void expect_type(dfg_graph *g, dfg_value v, dfg_dtype dt, int32_t rank,
                        const int64_t *dims)
{
    dfg_tensor_info info;
    assert_int_equal(dfg_graph_value_info(g, v, &info), DFG_OK);
    assert_int_equal(info.dtype, dt);
    assert_int_equal(info.rank, rank);
    for (int32_t i = 0; i < rank; i++)
        assert_int_equal(info.shape[i], dims[i]);
}

static dfg_graph *new_graph(void)
{
    dfg_graph *g = NULL;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    return g;
}

/* A small CNN classifier: conv, batch norm, relu, pool, flatten, gemm,
 * softmax. */
static void test_cnn_graph(void **state)
{
    (void)state;
    dfg_graph *g = new_graph();
    dfg_value x = INPUT(g, "x", DFG_F32, 2, 3, 16, 16);
    dfg_value w = INPUT(g, "w", DFG_F32, 8, 3, 3, 3);
    dfg_value b = INPUT(g, "b", DFG_F32, 8);
    dfg_value c = INPUT(g, "c", DFG_F32, 8);
    dfg_value fc = INPUT(g, "fc", DFG_F32, 10, 128);
    dfg_value fc_bias = INPUT(g, "fc_bias", DFG_F32, 10);
    dfg_value y, bn, r, p, f, logits, probs;
    const dfg_conv2d_params conv = {.strides = {2, 2}, .pads = {1, 1, 1, 1}};
    assert_int_equal(dfg_conv2d(g, x, w, b, &conv, &y), DFG_OK);
    EXPECT_TYPE(g, y, DFG_F32, 2, 8, 8, 8);
    assert_int_equal(dfg_batch_norm(g, y, c, b, b, c, 1e-5f, &bn), DFG_OK);
    assert_int_equal(dfg_relu(g, bn, &r), DFG_OK);
    const dfg_pool_params pool = {.kernel = {2, 2}, .strides = {2, 2}};
    assert_int_equal(dfg_max_pool(g, r, &pool, &p), DFG_OK);
    EXPECT_TYPE(g, p, DFG_F32, 2, 8, 4, 4);
    assert_int_equal(dfg_flatten(g, p, 1, &f), DFG_OK);
    EXPECT_TYPE(g, f, DFG_F32, 2, 128);
    const dfg_gemm_params gemm = {.alpha = 1, .beta = 1, .trans_b = 1};
    assert_int_equal(dfg_gemm(g, f, fc, fc_bias, &gemm, &logits), DFG_OK);
    EXPECT_TYPE(g, logits, DFG_F32, 2, 10);
    assert_int_equal(dfg_softmax(g, logits, -1, &probs), DFG_OK);
    EXPECT_TYPE(g, probs, DFG_F32, 2, 10);
    assert_int_equal(dfg_graph_output(g, probs, "probs"), DFG_OK);
    assert_int_equal(dfg_graph_num_nodes(g), 7);
    assert_int_equal(dfg_graph_num_values(g), 6 + 7);
    dfg_graph_destroy(g);
}

/* Every remaining builder function once, with its inferred type. */
static void test_every_function(void **state)
{
    (void)state;
    dfg_graph *g = new_graph();
    dfg_value a = INPUT(g, "a", DFG_F32, 2, 1, 4);
    dfg_value b = INPUT(g, "b", DFG_F32, 3, 1);
    dfg_value img = INPUT(g, "img", DFG_F32, 1, 2, 6, 6);
    dfg_value ids = INPUT(g, "ids", DFG_I64, 5);
    dfg_value v;

    dfg_status (*const binaries[])(dfg_graph *, dfg_value, dfg_value,
                                   dfg_value *) = {
        dfg_add, dfg_sub, dfg_mul, dfg_div, dfg_pow, dfg_max, dfg_min};
    for (size_t i = 0; i < sizeof binaries / sizeof binaries[0]; i++) {
        assert_int_equal(binaries[i](g, a, b, &v), DFG_OK);
        EXPECT_TYPE(g, v, DFG_F32, 2, 3, 4);
    }
    dfg_status (*const compares[])(dfg_graph *, dfg_value, dfg_value,
                                   dfg_value *) = {dfg_equal, dfg_less,
                                                   dfg_greater};
    dfg_value cond = DFG_NO_VALUE;
    for (size_t i = 0; i < sizeof compares / sizeof compares[0]; i++) {
        assert_int_equal(compares[i](g, a, b, &cond), DFG_OK);
        EXPECT_TYPE(g, cond, DFG_BOOL, 2, 3, 4);
    }
    assert_int_equal(dfg_where(g, cond, a, b, &v), DFG_OK);
    EXPECT_TYPE(g, v, DFG_F32, 2, 3, 4);

    dfg_status (*const unaries[])(dfg_graph *, dfg_value, dfg_value *) = {
        dfg_neg, dfg_abs, dfg_exp, dfg_log, dfg_sqrt, dfg_reciprocal,
        dfg_relu, dfg_sigmoid, dfg_tanh, dfg_erf, dfg_identity};
    for (size_t i = 0; i < sizeof unaries / sizeof unaries[0]; i++) {
        assert_int_equal(unaries[i](g, a, &v), DFG_OK);
        EXPECT_TYPE(g, v, DFG_F32, 2, 1, 4);
    }
    assert_int_equal(dfg_leaky_relu(g, a, 0.1f, &v), DFG_OK);
    assert_int_equal(dfg_gelu(g, a, DFG_GELU_TANH, &v), DFG_OK);
    assert_int_equal(dfg_clip(g, a, -1.0f, 1.0f, &v), DFG_OK);
    assert_int_equal(dfg_cast(g, a, DFG_F16, &v), DFG_OK);
    EXPECT_TYPE(g, v, DFG_F16, 2, 1, 4);

    assert_int_equal(dfg_matmul(g, b, INPUT(g, "m", DFG_F32, 2, 1, 5), &v),
                     DFG_OK);
    EXPECT_TYPE(g, v, DFG_F32, 2, 3, 5);
    assert_int_equal(dfg_average_pool(g, img,
                                      &(dfg_pool_params){.kernel = {3, 3},
                                                         .strides = {2, 2},
                                                         .ceil_mode = 1},
                                      &v), DFG_OK);
    EXPECT_TYPE(g, v, DFG_F32, 1, 2, 3, 3);
    assert_int_equal(dfg_global_average_pool(g, img, &v), DFG_OK);
    EXPECT_TYPE(g, v, DFG_F32, 1, 2, 1, 1);
    assert_int_equal(dfg_layer_norm(g, a, INPUT(g, "gamma", DFG_F32, 4),
                                    DFG_NO_VALUE, -1, 1e-5f, &v), DFG_OK);
    EXPECT_TYPE(g, v, DFG_F32, 2, 1, 4);
    assert_int_equal(dfg_log_softmax(g, a, 0, &v), DFG_OK);

    assert_int_equal(dfg_reduce_sum(g, img, 2, DIMS(2, 3), 1, &v), DFG_OK);
    EXPECT_TYPE(g, v, DFG_F32, 1, 2, 1, 1);
    assert_int_equal(dfg_reduce_mean(g, img, 1, DIMS(1), 0, &v), DFG_OK);
    EXPECT_TYPE(g, v, DFG_F32, 1, 6, 6);
    assert_int_equal(dfg_reduce_max(g, img, 0, NULL, 0, &v), DFG_OK);
    EXPECT_TYPE(g, v, DFG_F32);

    assert_int_equal(dfg_reshape(g, img, 2, DIMS(0, -1), &v), DFG_OK);
    EXPECT_TYPE(g, v, DFG_F32, 1, 72);
    assert_int_equal(dfg_transpose(g, a, 0, NULL, &v), DFG_OK);
    EXPECT_TYPE(g, v, DFG_F32, 4, 1, 2);
    assert_int_equal(dfg_transpose(g, a, 3, DIMS(1, 0, 2), &v), DFG_OK);
    EXPECT_TYPE(g, v, DFG_F32, 1, 2, 4);
    assert_int_equal(dfg_concat(g, 3, (const dfg_value[]){a, a, a}, 1, &v),
                     DFG_OK);
    EXPECT_TYPE(g, v, DFG_F32, 2, 3, 4);
    dfg_value parts[3];
    assert_int_equal(dfg_split(g, img, 2, 3, DIMS(1, 2, 3), parts), DFG_OK);
    EXPECT_TYPE(g, parts[2], DFG_F32, 1, 2, 3, 6);
    assert_int_equal(dfg_split(g, img, -1, 2, NULL, parts), DFG_OK);
    EXPECT_TYPE(g, parts[1], DFG_F32, 1, 2, 6, 3);
    assert_int_equal(dfg_slice(g, img, 2, DIMS(2, 3), DIMS(-1, 0), DIMS(0, 6),
                               DIMS(-2, 2), &v), DFG_OK);
    EXPECT_TYPE(g, v, DFG_F32, 1, 2, 3, 3);
    assert_int_equal(dfg_slice(g, img, 1, DIMS(1), DIMS(1), DIMS(2), NULL, &v),
                     DFG_OK);
    EXPECT_TYPE(g, v, DFG_F32, 1, 1, 6, 6);
    assert_int_equal(dfg_squeeze(g, img, 1, DIMS(0), &v), DFG_OK);
    EXPECT_TYPE(g, v, DFG_F32, 2, 6, 6);
    assert_int_equal(dfg_unsqueeze(g, b, 1, DIMS(1), &v), DFG_OK);
    EXPECT_TYPE(g, v, DFG_F32, 3, 1, 1);
    assert_int_equal(dfg_expand(g, b, 3, DIMS(2, 3, 5), &v), DFG_OK);
    EXPECT_TYPE(g, v, DFG_F32, 2, 3, 5);
    assert_int_equal(dfg_gather(g, img, ids, 2, &v), DFG_OK);
    EXPECT_TYPE(g, v, DFG_F32, 1, 2, 5, 6);
    assert_int_equal(dfg_pad(g, b, DIMS(1, 2, 0, 3), 0.5f, &v), DFG_OK);
    EXPECT_TYPE(g, v, DFG_F32, 4, 6);
    dfg_graph_destroy(g);
}

/* Runs a call that must fail with want; checks the graph kept its node and
 * value counts and that the message holds every needle. */
#define EXPECT_FAILURE(g, want, call, ...)                                   \
    do {                                                                     \
        int32_t nodes_ = dfg_graph_num_nodes(g);                             \
        int32_t values_ = dfg_graph_num_values(g);                           \
        assert_int_equal((call), (want));                                    \
        assert_int_equal(dfg_graph_num_nodes(g), nodes_);                    \
        assert_int_equal(dfg_graph_num_values(g), values_);                  \
        expect_message((const char *const[]){__VA_ARGS__, NULL});            \
    } while (0)

static void expect_message(const char *const *needles)
{
    for (; *needles; needles++)
        if (!strstr(dfg_last_error(), *needles))
            fail_msg("message \"%s\" lacks \"%s\"", dfg_last_error(), *needles);
}

/* Each error test starts from a graph with inputs and one node, so that
 * a failed call is seen to leave existing content alone. */
typedef struct fixture {
    dfg_graph *g;
    dfg_value x, w, v, i; /* [1,3,8,8] f32, [4,3,3,3] f32, [4] f32, [2,3] i32 */
} fixture;

static int setup(void **state)
{
    static fixture f;
    f.g = new_graph();
    f.x = INPUT(f.g, "x", DFG_F32, 1, 3, 8, 8);
    f.w = INPUT(f.g, "w", DFG_F32, 4, 3, 3, 3);
    f.v = INPUT(f.g, "v", DFG_F32, 4);
    f.i = INPUT(f.g, "i", DFG_I32, 2, 3);
    dfg_value r;
    assert_int_equal(dfg_relu(f.g, f.x, &r), DFG_OK);
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    dfg_graph_destroy(((fixture *)*state)->g);
    return 0;
}

static void test_wrong_rank(void **state)
{
    const fixture *f = *state;
    dfg_graph *g = f->g;
    dfg_value out, v = f->v;
    EXPECT_FAILURE(g, DFG_ERR_SHAPE, dfg_conv2d(g, v, f->w, DFG_NO_VALUE, NULL, &out),
                   "node 'conv2d_1'", "(conv2d)", "[4] f32", "[4,3,3,3] f32",
                   "rank 1, expected 4");
    EXPECT_FAILURE(g, DFG_ERR_SHAPE, dfg_global_average_pool(g, v, &out),
                   "global_average_pool_1", "[4] f32", "rank 1");
}

static void test_mismatched_shapes(void **state)
{
    const fixture *f = *state;
    dfg_graph *g = f->g;
    dfg_value out, x = f->x;
    dfg_value w2 = INPUT(g, "w2", DFG_F32, 4, 2, 3, 3);
    EXPECT_FAILURE(g, DFG_ERR_SHAPE, dfg_add(g, x, f->v, &out),
                   "node 'add_1' (add)", "[1,3,8,8] f32, [4] f32",
                   "8 vs 4");
    EXPECT_FAILURE(g, DFG_ERR_SHAPE,
                   dfg_conv2d(g, x, w2, DFG_NO_VALUE, NULL, &out),
                   "conv2d_1", "[4,2,3,3] f32",
                   "input 1 has 2 channels per group, expected 3 (C=3, "
                   "group=1)");
    EXPECT_FAILURE(g, DFG_ERR_SHAPE, dfg_matmul(g, x, f->w, &out), "matmul_1",
                   "inner dims differ");
}

static void test_bad_dtype(void **state)
{
    const fixture *f = *state;
    dfg_graph *g = f->g;
    dfg_value out, i = f->i;
    EXPECT_FAILURE(g, DFG_ERR_DTYPE, dfg_exp(g, i, &out), "node 'exp_1' (exp)",
                   "[2,3] i32", "dtype i32");
    EXPECT_FAILURE(g, DFG_ERR_DTYPE, dfg_add(g, f->v, i, &out), "add_1",
                   "[4] f32, [2,3] i32", "input 1 has dtype i32");
    EXPECT_FAILURE(g, DFG_ERR_DTYPE, dfg_gather(g, f->x, f->x, 0, &out),
                   "gather_1", "indices");
    /* f64 is cast and moved, never computed on */
    dfg_value d = INPUT(g, "d", DFG_F64, 2, 3), back;
    assert_int_equal(dfg_cast(g, d, DFG_F32, &back), DFG_OK);
    EXPECT_FAILURE(g, DFG_ERR_DTYPE, dfg_add(g, d, d, &out), "add_2",
                   "[2,3] f64", "dtype f64");
}

static void test_bad_attribute(void **state)
{
    const fixture *f = *state;
    dfg_graph *g = f->g;
    dfg_value out, x = f->x;
    EXPECT_FAILURE(g, DFG_ERR_INVALID_ARGUMENT, dfg_softmax(g, x, 4, &out),
                   "node 'softmax_1' (softmax)", "[1,3,8,8] f32",
                   "axis 4 is out of range for rank 4");
    const dfg_conv2d_params neg_stride = {.strides = {-1, 1}};
    EXPECT_FAILURE(g, DFG_ERR_INVALID_ARGUMENT,
                   dfg_conv2d(g, x, f->w, DFG_NO_VALUE, &neg_stride, &out),
                   "conv2d_1", "[1,3,8,8] f32, [4,3,3,3] f32", "strides (-1,1)");
    EXPECT_FAILURE(g, DFG_ERR_INVALID_ARGUMENT,
                   dfg_reshape(g, x, 2, DIMS(-1, -1), &out), "reshape_1",
                   "shape[1] = -1");
    EXPECT_FAILURE(g, DFG_ERR_INVALID_ARGUMENT,
                   dfg_reshape(g, x, 9, DIMS(1, 1, 1, 1, 1, 1, 1, 1, 192), &out),
                   "reshape", "9 shape given");
    EXPECT_FAILURE(g, DFG_ERR_INVALID_ARGUMENT,
                   dfg_max_pool(g, x, NULL, &out), "max_pool", "params");
}

static void test_null_pointers(void **state)
{
    const fixture *f = *state;
    dfg_graph *g = f->g;
    dfg_value out, x = f->x;
    EXPECT_FAILURE(g, DFG_ERR_INVALID_ARGUMENT, dfg_relu(NULL, x, &out),
                   "relu", "NULL");
    EXPECT_FAILURE(g, DFG_ERR_INVALID_ARGUMENT, dfg_relu(g, x, NULL), "relu",
                   "NULL");
    EXPECT_FAILURE(g, DFG_ERR_INVALID_ARGUMENT,
                   dfg_reshape(g, x, 2, NULL, &out), "reshape", "NULL");
    EXPECT_FAILURE(g, DFG_ERR_INVALID_ARGUMENT,
                   dfg_concat(g, 2, NULL, 0, &out), "concat", "NULL");
    EXPECT_FAILURE(g, DFG_ERR_INVALID_ARGUMENT,
                   dfg_graph_input(g, "y", DFG_F32, 2, NULL, &out), "'y'",
                   "shape is NULL");
}

static void test_value_from_another_graph(void **state)
{
    const fixture *f = *state;
    dfg_graph *g = f->g;
    dfg_graph *other = new_graph();
    dfg_value foreign = INPUT(other, "x", DFG_F32, 1, 3, 8, 8), out;
    EXPECT_FAILURE(g, DFG_ERR_INVALID_ARGUMENT, dfg_add(g, f->x, foreign, &out),
                   "(add)", "input 1", "another graph");
    EXPECT_FAILURE(g, DFG_ERR_INVALID_ARGUMENT,
                   dfg_add(g, f->x, (dfg_value)12345, &out), "(add)", "input 1");
    dfg_graph_destroy(other);
}

static void test_unknown_op(void **state)
{
    const fixture *f = *state;
    dfg_graph *g = f->g;
    dfg_value x = f->x, out;
    EXPECT_FAILURE(g, DFG_ERR_UNSUPPORTED,
                   dfg_graph_node(g, "frobnicate", "f1", &x, 1, NULL, &out, 1),
                   "node 'f1'", "unknown op 'frobnicate'");
}

static void test_wrong_input_count(void **state)
{
    const fixture *f = *state;
    dfg_graph *g = f->g;
    dfg_value x = f->x, out;
    EXPECT_FAILURE(g, DFG_ERR_INVALID_ARGUMENT,
                   dfg_graph_node(g, "add", "a1", &x, 1, NULL, &out, 1),
                   "node 'a1' (add)", "1 inputs given, expects 2");
    EXPECT_FAILURE(g, DFG_ERR_INVALID_ARGUMENT, dfg_concat(g, 0, &x, 0, &out),
                   "(concat)", "0 inputs");
    EXPECT_FAILURE(g, DFG_ERR_INVALID_ARGUMENT,
                   dfg_gemm(g, x, DFG_NO_VALUE, DFG_NO_VALUE, NULL, &out),
                   "gemm", "input 1 is absent");
}

static void test_duplicate_names(void **state)
{
    const fixture *f = *state;
    dfg_graph *g = f->g;
    dfg_value x = f->x, out;
    EXPECT_FAILURE(g, DFG_ERR_INVALID_ARGUMENT,
                   dfg_graph_node(g, "relu", "relu_0", &x, 1, NULL, &out, 1),
                   "node 'relu_0' (relu)", "exists");
    EXPECT_FAILURE(g, DFG_ERR_INVALID_ARGUMENT,
                   dfg_graph_input(g, "w", DFG_F32, 1, DIMS(2), &out), "'w'",
                   "exists");
}

static void test_overflowing_shapes(void **state)
{
    const fixture *f = *state;
    dfg_graph *g = f->g;
    const int64_t big = (int64_t)1 << 40;
    dfg_value out;
    EXPECT_FAILURE(g, DFG_ERR_OVERFLOW,
                   dfg_graph_input(g, "huge", DFG_F32, 2, DIMS(big, big), &out),
                   "'huge'", "overflow");
    dfg_value col = INPUT(g, "col", DFG_F32, big, 1);
    dfg_value row = INPUT(g, "row", DFG_F32, 1, big);
    EXPECT_FAILURE(g, DFG_ERR_OVERFLOW, dfg_mul(g, col, row, &out),
                   "node 'mul_1' (mul)", "[1099511627776,1] f32",
                   "[1,1099511627776] f32", "2^48");
    EXPECT_FAILURE(g, DFG_ERR_OVERFLOW, dfg_matmul(g, col, row, &out),
                   "matmul_1", "2^48");
    EXPECT_FAILURE(g, DFG_ERR_OVERFLOW,
                   dfg_expand(g, col, 2, DIMS(big, big), &out), "expand_1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cnn_graph),
        cmocka_unit_test(test_every_function),
        cmocka_unit_test_setup_teardown(test_wrong_rank, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mismatched_shapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_dtype, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_attribute, setup, teardown),
        cmocka_unit_test_setup_teardown(test_null_pointers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_value_from_another_graph, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_unknown_op, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrong_input_count, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_duplicate_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_overflowing_shapes, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
