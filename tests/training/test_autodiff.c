/* Every vector-Jacobian rule of passes/training/autodiff.c against central finite
 * differences.
 *
 * Each case builds y = f(x1, x2, ...) from graph inputs and the scalar
 * L = sum(y * R) with R a fixed random tensor (so that every element of
 * every output matters, with its own weight). The analytic gradients
 * dL/dxi come from one run of the autodiff graph; the reference is
 * (L(x + eps e_j) - L(x - eps e_j)) / 2 eps for every element j, the two
 * losses evaluated by the forward program and accumulated in double.
 * They must agree to 1e-2 in ||analytic - reference|| / ||reference||: a
 * wrong rule (a missing factor, a wrong sign, a transposed product, a lost
 * broadcast sum) is off by far more, while f32 rounding in the losses
 * stays near 1e-4. Inputs are seeded random, kept away from the kinks of
 * relu, abs, clip and max (DISTINCT: values spaced 0.1 apart, so no
 * perturbation crosses a kink or a tie). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "passes/training/autodiff.h"
#include "dfg/dfg.h"
#include "ir/graph.h"
#include "tests/support/random_data.h"

#define MAX_INPUTS 3
#define EPS 1e-2
#define TOLERANCE 1e-2

typedef enum fill_mode {
    SIGNED = 0, /* +-[0.2, 1] */
    POSITIVE,   /* [0.5, 1.5] */
    DISTINCT,   /* a shuffled grid 0.1 apart */
    DISTINCT2,  /* the same grid shifted by 0.05: never ties DISTINCT */
} fill_mode;

typedef struct shape {
    int32_t rank;
    int64_t dims[4];
} shape;

typedef dfg_status (*build_fn)(dfg_graph *g, const dfg_value *x, dfg_value *y);

typedef struct grad_case {
    const char *name;
    int32_t n_inputs;
    shape shapes[MAX_INPUTS];
    fill_mode modes[MAX_INPUTS];
    build_fn build;
} grad_case;

static int64_t numel(const shape *s)
{
    int64_t n = 1;
    for (int32_t d = 0; d < s->rank; d++)
        n *= s->dims[d];
    return n;
}

static void fill(float *data, int64_t n, fill_mode mode)
{
    for (int64_t i = 0; i < n; i++) {
        double u = random_unit();
        switch (mode) {
        case SIGNED:
            data[i] = (float)((0.2 + 0.8 * u) * (random_unit() < 0.5 ? -1 : 1));
            break;
        case POSITIVE:
            data[i] = (float)(0.5 + u);
            break;
        case DISTINCT:
        case DISTINCT2:
            data[i] = (float)(0.1 * (double)(i - n / 2) + 0.025 +
                              (mode == DISTINCT2 ? 0.05 : 0.0));
            break;
        }
    }
    if (mode == DISTINCT || mode == DISTINCT2)
        for (int64_t i = n - 1; i > 0; i--) {
            int64_t j = (int64_t)(random_unit() * (double)(i + 1)) % (i + 1);
            float t = data[i];
            data[i] = data[j];
            data[j] = t;
        }
}

/* L = sum(y * R) appended to g; returns L. */
static dfg_value weighted_sum(dfg_graph *g, dfg_value y)
{
    dfg_tensor_info info;
    assert_int_equal(dfg_graph_value_info(g, y, &info), DFG_OK);
    int64_t n = 1;
    for (int32_t d = 0; d < info.rank; d++)
        n *= info.shape[d];
    float *r = malloc((size_t)n * sizeof *r);
    for (int64_t i = 0; i < n; i++)
        r[i] = (float)(random_unit() * 2.0 - 1.0);
    dfg_value weights, product, loss;
    assert_int_equal(dfg_graph_constant(g, "R", DFG_F32, info.rank, info.shape,
                                        r, &weights), DFG_OK);
    free(r);
    assert_int_equal(dfg_mul(g, y, weights, &product), DFG_OK);
    assert_int_equal(dfg_reduce_sum(g, product, 0, NULL, 0, &loss), DFG_OK);
    return loss;
}

/* The case's graph: inputs x0.., the loss L; with gradients, their
 * dL/dxi as outputs 1.. after L. */
static dfg_program *compile_case(const grad_case *c, int with_gradients,
                                 uint64_t seed)
{
    dfg_graph *g;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    dfg_value x[MAX_INPUTS], y;
    for (int32_t i = 0; i < c->n_inputs; i++) {
        char name[16];
        snprintf(name, sizeof name, "x%d", (int)i);
        assert_int_equal(dfg_graph_input(g, name, DFG_F32, c->shapes[i].rank,
                                         c->shapes[i].dims, &x[i]), DFG_OK);
    }
    dfg_status st = c->build(g, x, &y);
    if (st != DFG_OK)
        fail_msg("%s: %s", c->name, dfg_last_error());
    random_seed(seed); /* the same R in both programs */
    dfg_value loss = weighted_sum(g, y);
    assert_int_equal(dfg_graph_output(g, loss, "L"), DFG_OK);
    if (with_gradients) {
        int32_t wrt[MAX_INPUTS], grads[MAX_INPUTS];
        for (int32_t i = 0; i < c->n_inputs; i++)
            wrt[i] = dfg_graph_index(g, x[i]);
        st = dfg_autodiff(g, dfg_graph_index(g, loss), wrt, c->n_inputs, grads);
        if (st != DFG_OK)
            fail_msg("%s: autodiff: %s", c->name, dfg_last_error());
        for (int32_t i = 0; i < c->n_inputs; i++) {
            if (grads[i] < 0)
                fail_msg("%s: no gradient for input %d", c->name, (int)i);
            char name[16];
            snprintf(name, sizeof name, "dx%d", (int)i);
            assert_int_equal(dfg_graph_output(g, dfg_graph_handle(g, grads[i]),
                                              name), DFG_OK);
        }
    }
    dfg_program *p;
    st = dfg_compile(g, NULL, &p);
    if (st != DFG_OK)
        fail_msg("%s: compile: %s", c->name, dfg_last_error());
    assert_int_equal(dfg_program_verify(p), DFG_OK);
    dfg_graph_destroy(g);
    return p;
}

static double run_loss(dfg_session *s, void *const *inputs)
{
    float loss;
    void *outputs[1] = {&loss};
    assert_int_equal(dfg_session_run(s, (const void *const *)inputs, outputs),
                     DFG_OK);
    return loss;
}

/* ||dx - reference|| / ||reference|| over the n floats of inputs[i], the
 * reference by central differences of the forward session fs; the
 * reference's norm in *norm. */
static double gradient_error(dfg_session *fs, void *const *inputs, int32_t i,
                             int64_t n, const float *dx, double *norm)
{
    float *x = inputs[i];
    double diff = 0.0;
    *norm = 0.0;
    for (int64_t j = 0; j < n; j++) {
        float keep = x[j];
        x[j] = (float)(keep + EPS);
        double up = run_loss(fs, inputs);
        x[j] = (float)(keep - EPS);
        double down = run_loss(fs, inputs);
        x[j] = keep;
        double reference = (up - down) / (2.0 * EPS);
        diff += (dx[j] - reference) * (dx[j] - reference);
        *norm += reference * reference;
    }
    *norm = sqrt(*norm);
    return sqrt(diff) / (*norm > 1e-6 ? *norm : 1e-6);
}

static void check_case(const grad_case *c)
{
    const dfg_backend *cpu;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    dfg_program *forward = compile_case(c, 0, 99);
    dfg_program *backward = compile_case(c, 1, 99);
    dfg_session *fs, *bs;
    assert_int_equal(dfg_session_create(forward, cpu, NULL, &fs), DFG_OK);
    assert_int_equal(dfg_session_create(backward, cpu, NULL, &bs), DFG_OK);
    float *x[MAX_INPUTS], *dx[MAX_INPUTS];
    void *outputs[MAX_INPUTS + 1];
    float loss;
    outputs[0] = &loss;
    for (int32_t i = 0; i < c->n_inputs; i++) {
        int64_t n = numel(&c->shapes[i]);
        x[i] = malloc((size_t)n * sizeof(float));
        dx[i] = malloc((size_t)n * sizeof(float));
        fill(x[i], n, c->modes[i]);
        outputs[i + 1] = dx[i];
    }
    assert_int_equal(dfg_session_run(bs, (const void *const *)x, outputs),
                     DFG_OK);
    for (int32_t i = 0; i < c->n_inputs; i++) {
        double norm, error = gradient_error(fs, (void *const *)x, i,
                                            numel(&c->shapes[i]), dx[i], &norm);
        if (!(error < TOLERANCE) || norm == 0.0)
            fail_msg("%s: input %d: relative gradient error %.3g (|ref| %.3g)",
                     c->name, (int)i, error, norm);
    }
    for (int32_t i = 0; i < c->n_inputs; i++) {
        free(x[i]);
        free(dx[i]);
    }
    dfg_session_destroy(fs);
    dfg_session_destroy(bs);
    dfg_program_destroy(forward);
    dfg_program_destroy(backward);
}

/* ---- the cases -------------------------------------------------------- */

#define UNARY(fn, call)                                                      \
    static dfg_status fn(dfg_graph *g, const dfg_value *x, dfg_value *y)     \
    {                                                                        \
        return call;                                                         \
    }

UNARY(b_neg, dfg_neg(g, x[0], y))
UNARY(b_abs, dfg_abs(g, x[0], y))
UNARY(b_exp, dfg_exp(g, x[0], y))
UNARY(b_log, dfg_log(g, x[0], y))
UNARY(b_sqrt, dfg_sqrt(g, x[0], y))
UNARY(b_reciprocal, dfg_reciprocal(g, x[0], y))
UNARY(b_relu, dfg_relu(g, x[0], y))
UNARY(b_leaky_relu, dfg_leaky_relu(g, x[0], 0.1f, y))
UNARY(b_sigmoid, dfg_sigmoid(g, x[0], y))
UNARY(b_tanh, dfg_tanh(g, x[0], y))
UNARY(b_gelu_erf, dfg_gelu(g, x[0], DFG_GELU_ERF, y))
UNARY(b_gelu_tanh, dfg_gelu(g, x[0], DFG_GELU_TANH, y))
UNARY(b_erf, dfg_erf(g, x[0], y))
UNARY(b_clip, dfg_clip(g, x[0], -0.5f, 0.5f, y))
UNARY(b_cast, dfg_cast(g, x[0], DFG_F32, y))
UNARY(b_identity, dfg_identity(g, x[0], y))
UNARY(b_add, dfg_add(g, x[0], x[1], y))
UNARY(b_sub, dfg_sub(g, x[0], x[1], y))
UNARY(b_mul, dfg_mul(g, x[0], x[1], y))
UNARY(b_div, dfg_div(g, x[0], x[1], y))
UNARY(b_pow, dfg_pow(g, x[0], x[1], y))
UNARY(b_max, dfg_max(g, x[0], x[1], y))
UNARY(b_min, dfg_min(g, x[0], x[1], y))
UNARY(b_square, dfg_mul(g, x[0], x[0], y))
UNARY(b_matmul, dfg_matmul(g, x[0], x[1], y))
UNARY(b_gemm, dfg_gemm(g, x[0], x[1], x[2], NULL, y))
UNARY(b_gemm_t, dfg_gemm(g, x[0], x[1], x[2],
                         &(dfg_gemm_params){0.5f, 2.0f, 1, 1}, y))
UNARY(b_gemm_ta, dfg_gemm(g, x[0], x[1], DFG_NO_VALUE,
                          &(dfg_gemm_params){1.5f, 1.0f, 1, 0}, y))
UNARY(b_conv, dfg_conv2d(g, x[0], x[1], x[2],
                         &(dfg_conv2d_params){{1, 1}, {1, 1}, {1, 1, 1, 1}, 1},
                         y))
UNARY(b_conv_strided, dfg_conv2d(g, x[0], x[1], DFG_NO_VALUE,
                                 &(dfg_conv2d_params){{2, 2}, {1, 1}, {0, 1, 1, 0}, 1},
                                 y))
UNARY(b_conv_group, dfg_conv2d(g, x[0], x[1], DFG_NO_VALUE,
                               &(dfg_conv2d_params){{1, 1}, {2, 1}, {2, 1, 2, 1}, 2},
                               y))
UNARY(b_conv_1x1, dfg_conv2d(g, x[0], x[1], x[2], NULL, y))
UNARY(b_max_pool, dfg_max_pool(g, x[0],
                               &(dfg_pool_params){{2, 2}, {2, 2}, {1, 1}, {0, 0, 1, 1}, 0, 0},
                               y))
UNARY(b_average_pool, dfg_average_pool(g, x[0],
                                       &(dfg_pool_params){{3, 3}, {1, 2}, {1, 1}, {1, 1, 1, 1}, 0, 0},
                                       y))
UNARY(b_global_pool, dfg_global_average_pool(g, x[0], y))
UNARY(b_softmax, dfg_softmax(g, x[0], 1, y))
UNARY(b_log_softmax, dfg_log_softmax(g, x[0], -1, y))
UNARY(b_layer_norm, dfg_layer_norm(g, x[0], x[1], x[2], 1, 1e-5f, y))
UNARY(b_reduce_sum, dfg_reduce_sum(g, x[0], 1, (int64_t[]){1}, 0, y))
UNARY(b_reduce_mean, dfg_reduce_mean(g, x[0], 0, NULL, 1, y))
UNARY(b_reduce_max, dfg_reduce_max(g, x[0], 2, (int64_t[]){0, 2}, 1, y))
UNARY(b_reshape, dfg_reshape(g, x[0], 2, (int64_t[]){4, -1}, y))
UNARY(b_flatten, dfg_flatten(g, x[0], 1, y))
UNARY(b_transpose, dfg_transpose(g, x[0], 3, (int64_t[]){2, 0, 1}, y))
UNARY(b_concat, dfg_concat(g, 2, x, 1, y))
UNARY(b_slice, dfg_slice(g, x[0], 2, (int64_t[]){1, 2},
                         (int64_t[]){1, -1}, (int64_t[]){4, -5},
                         (int64_t[]){2, -2}, y))
UNARY(b_squeeze, dfg_squeeze(g, x[0], 1, (int64_t[]){1}, y))
UNARY(b_unsqueeze, dfg_unsqueeze(g, x[0], 1, (int64_t[]){0}, y))
UNARY(b_expand, dfg_expand(g, x[0], 3, (int64_t[]){2, 3, 4}, y))
UNARY(b_pad, dfg_pad(g, x[0], (int64_t[]){1, 0, 2, 1}, 0.5f, y))
UNARY(b_mse, dfg_mean_squared_error(g, x[0], x[1], y))

/* The remaining cases need constants: a mask, indices, labels, statistics. */
static dfg_status b_where(dfg_graph *g, const dfg_value *x, dfg_value *y)
{
    uint8_t cond[12];
    for (int i = 0; i < 12; i++)
        cond[i] = (uint8_t)(i * 7 % 3 != 0);
    dfg_value c;
    dfg_status st = dfg_graph_constant(g, "cond", DFG_BOOL, 2,
                                       (int64_t[]){3, 4}, cond, &c);
    return st == DFG_OK ? dfg_where(g, c, x[0], x[1], y) : st;
}

static dfg_status b_gather(dfg_graph *g, const dfg_value *x, dfg_value *y)
{
    dfg_value idx;
    dfg_status st = dfg_graph_constant(g, "idx", DFG_I64, 2, (int64_t[]){2, 2},
                                       (int64_t[]){3, 0, -1, 1}, &idx);
    return st == DFG_OK ? dfg_gather(g, x[0], idx, 1, y) : st;
}

static dfg_status b_split(dfg_graph *g, const dfg_value *x, dfg_value *y)
{
    dfg_value parts[3];
    dfg_status st = dfg_split(g, x[0], 1, 3, (int64_t[]){1, 2, 3}, parts);
    /* parts[1] is left unused: its gradient is zero. */
    return st == DFG_OK ? dfg_concat(g, 2, (dfg_value[]){parts[2], parts[0]},
                                     1, y)
                        : st;
}

static dfg_status b_cross_entropy(dfg_graph *g, const dfg_value *x, dfg_value *y)
{
    dfg_value labels;
    dfg_status st = dfg_graph_constant(g, "labels", DFG_I32, 1, (int64_t[]){4},
                                       (int32_t[]){2, 0, 4, 2}, &labels);
    return st == DFG_OK ? dfg_softmax_cross_entropy(g, x[0], labels, y) : st;
}

static dfg_status b_batch_norm(dfg_graph *g, const dfg_value *x, dfg_value *y)
{
    dfg_value mean, var;
    dfg_status st = dfg_graph_constant(g, "mean", DFG_F32, 1, (int64_t[]){3},
                                       (float[]){0.1f, -0.2f, 0.3f}, &mean);
    if (st == DFG_OK)
        st = dfg_graph_constant(g, "var", DFG_F32, 1, (int64_t[]){3},
                                (float[]){0.5f, 1.5f, 2.0f}, &var);
    return st == DFG_OK ? dfg_batch_norm(g, x[0], x[1], x[2], mean, var, 1e-5f, y)
                        : st;
}

/* Training mode: batch statistics (output 0 of three); the running
 * statistics are weights it updates in place, which y does not read. */
static dfg_status b_batch_norm_train(dfg_graph *g, const dfg_value *x,
                                     dfg_value *y)
{
    dfg_value in[5] = {x[0], x[1], x[2]}, out[3];
    dfg_status st = dfg_graph_weight(g, "running_mean", DFG_F32, 1,
                                     (int64_t[]){3}, (float[]){0, 0, 0}, &in[3]);
    if (st == DFG_OK)
        st = dfg_graph_weight(g, "running_var", DFG_F32, 1, (int64_t[]){3},
                              (float[]){1, 1, 1}, &in[4]);
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.alpha = 0.9f;
    attrs.epsilon = 1e-5f;
    if (st == DFG_OK)
        st = dfg_graph_node(g, "batch_norm_train", NULL, in, 5, &attrs, out, 3);
    *y = out[0];
    return st;
}

#define S1(a) {1, {a}}
#define S2(a, b) {2, {a, b}}
#define S3(a, b, c) {3, {a, b, c}}
#define S4(a, b, c, d) {4, {a, b, c, d}}

static const grad_case cases[] = {
    {"neg", 1, {S2(3, 4)}, {SIGNED}, b_neg},
    {"abs", 1, {S2(3, 4)}, {DISTINCT}, b_abs},
    {"exp", 1, {S2(3, 4)}, {SIGNED}, b_exp},
    {"log", 1, {S2(3, 4)}, {POSITIVE}, b_log},
    {"sqrt", 1, {S2(3, 4)}, {POSITIVE}, b_sqrt},
    {"reciprocal", 1, {S2(3, 4)}, {POSITIVE}, b_reciprocal},
    {"relu", 1, {S2(3, 4)}, {DISTINCT}, b_relu},
    {"leaky_relu", 1, {S2(3, 4)}, {DISTINCT}, b_leaky_relu},
    {"sigmoid", 1, {S2(3, 4)}, {SIGNED}, b_sigmoid},
    {"tanh", 1, {S2(3, 4)}, {SIGNED}, b_tanh},
    {"gelu_erf", 1, {S2(3, 4)}, {SIGNED}, b_gelu_erf},
    {"gelu_tanh", 1, {S2(3, 4)}, {SIGNED}, b_gelu_tanh},
    {"erf", 1, {S2(3, 4)}, {SIGNED}, b_erf},
    {"clip", 1, {S2(3, 4)}, {DISTINCT}, b_clip},
    {"cast", 1, {S2(3, 4)}, {SIGNED}, b_cast},
    {"identity", 1, {S2(3, 4)}, {SIGNED}, b_identity},
    {"add_broadcast", 2, {S2(3, 4), S1(4)}, {SIGNED, SIGNED}, b_add},
    {"sub_broadcast", 2, {S3(2, 3, 4), S2(3, 1)}, {SIGNED, SIGNED}, b_sub},
    {"mul_broadcast", 2, {S2(3, 4), S2(3, 1)}, {SIGNED, SIGNED}, b_mul},
    {"mul_same_operand", 1, {S2(3, 4)}, {SIGNED}, b_square},
    {"div_broadcast", 2, {S2(3, 4), S1(4)}, {SIGNED, POSITIVE}, b_div},
    {"pow", 2, {S2(3, 4), S2(3, 4)}, {POSITIVE, SIGNED}, b_pow},
    {"max", 2, {S2(3, 4), S2(3, 4)}, {DISTINCT, DISTINCT2}, b_max},
    {"min", 2, {S2(3, 4), S2(3, 4)}, {DISTINCT, DISTINCT2}, b_min},
    {"where", 2, {S2(3, 4), S1(4)}, {SIGNED, SIGNED}, b_where},
    {"matmul_batched", 2, {S3(2, 3, 4), S2(4, 5)}, {SIGNED, SIGNED}, b_matmul},
    {"matmul_broadcast", 2, {S2(3, 4), S3(2, 4, 5)}, {SIGNED, SIGNED}, b_matmul},
    /* a matrix shared by two batch axes: its gradient is one product */
    {"matmul_shared_rank4", 2, {S4(2, 3, 2, 4), S2(4, 5)}, {SIGNED, SIGNED},
     b_matmul},
    {"gemm_bias", 3, {S2(3, 4), S2(4, 5), S1(5)}, {SIGNED, SIGNED, SIGNED}, b_gemm},
    {"gemm_transposed", 3, {S2(4, 3), S2(5, 4), S2(3, 1)},
     {SIGNED, SIGNED, SIGNED}, b_gemm_t},
    {"gemm_trans_a", 2, {S2(4, 3), S2(4, 5)}, {SIGNED, SIGNED}, b_gemm_ta},
    {"conv2d_padded_bias", 3, {S4(2, 3, 5, 5), S4(4, 3, 3, 3), S1(4)},
     {SIGNED, SIGNED, SIGNED}, b_conv},
    {"conv2d_strided", 2, {S4(1, 2, 6, 5), S4(3, 2, 3, 2)}, {SIGNED, SIGNED},
     b_conv_strided},
    {"conv2d_grouped_dilated", 2, {S4(1, 4, 5, 5), S4(4, 2, 2, 3)},
     {SIGNED, SIGNED}, b_conv_group},
    {"conv2d_1x1", 3, {S4(2, 3, 3, 4), S4(2, 3, 1, 1), S1(2)},
     {SIGNED, SIGNED, SIGNED}, b_conv_1x1},
    {"max_pool", 1, {S4(1, 2, 5, 5)}, {DISTINCT}, b_max_pool},
    {"average_pool", 1, {S4(1, 2, 5, 5)}, {SIGNED}, b_average_pool},
    {"global_average_pool", 1, {S4(2, 3, 2, 3)}, {SIGNED}, b_global_pool},
    {"batch_norm", 3, {S4(2, 3, 2, 2), S1(3), S1(3)}, {SIGNED, SIGNED, SIGNED},
     b_batch_norm},
    {"batch_norm_train", 3, {S4(2, 3, 2, 3), S1(3), S1(3)},
     {SIGNED, SIGNED, SIGNED}, b_batch_norm_train},
    {"softmax", 1, {S3(2, 5, 3)}, {SIGNED}, b_softmax},
    {"log_softmax", 1, {S2(3, 5)}, {SIGNED}, b_log_softmax},
    {"layer_norm", 3, {S3(2, 3, 4), S2(3, 4), S2(3, 4)},
     {SIGNED, SIGNED, SIGNED}, b_layer_norm},
    {"reduce_sum", 1, {S3(2, 3, 4)}, {SIGNED}, b_reduce_sum},
    {"reduce_mean", 1, {S3(2, 3, 4)}, {SIGNED}, b_reduce_mean},
    {"reduce_max", 1, {S3(2, 3, 4)}, {DISTINCT}, b_reduce_max},
    {"reshape", 1, {S3(2, 3, 4)}, {SIGNED}, b_reshape},
    {"flatten", 1, {S3(2, 3, 4)}, {SIGNED}, b_flatten},
    {"transpose", 1, {S3(2, 3, 4)}, {SIGNED}, b_transpose},
    {"concat", 2, {S2(3, 2), S2(3, 4)}, {SIGNED, SIGNED}, b_concat},
    {"split", 1, {S2(2, 6)}, {SIGNED}, b_split},
    {"slice_steps", 1, {S3(2, 5, 6)}, {SIGNED}, b_slice},
    {"squeeze", 1, {S3(3, 1, 4)}, {SIGNED}, b_squeeze},
    {"unsqueeze", 1, {S2(3, 4)}, {SIGNED}, b_unsqueeze},
    {"expand", 1, {S2(3, 1)}, {SIGNED}, b_expand},
    {"gather", 1, {S2(3, 4)}, {SIGNED}, b_gather},
    {"pad", 1, {S2(3, 4)}, {SIGNED}, b_pad},
    {"softmax_cross_entropy", 1, {S2(4, 5)}, {SIGNED}, b_cross_entropy},
    {"mean_squared_error", 2, {S2(3, 4), S2(3, 4)}, {SIGNED, SIGNED}, b_mse},
};

static void test_case(void **state)
{
    check_case((const grad_case *)*state);
}

/* A non-differentiable op between a trained value and the loss is an
 * error naming it, not a silent zero gradient. */
static void test_non_differentiable_is_an_error(void **state)
{
    (void)state;
    dfg_graph *g;
    dfg_value x, y, loss;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 1, (int64_t[]){4}, &x),
                     DFG_OK);
    assert_int_equal(dfg_relu(g, x, &y), DFG_OK);
    dfg_value in[1] = {y};
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.n_shape = 1;
    attrs.shape[0] = 4;
    assert_int_equal(dfg_graph_node(g, "average_pool_grad", NULL, in, 1, &attrs,
                                    &y, 1) == DFG_OK, 0);
    assert_int_equal(dfg_reduce_sum(g, x, 0, NULL, 0, &loss), DFG_OK);
    int32_t wrt = dfg_graph_index(g, x), grad;
    assert_int_equal(dfg_autodiff(g, dfg_graph_index(g, loss), &wrt, 1, &grad),
                     DFG_OK);
    assert_true(grad >= 0);
    /* A loss that is not a scalar is rejected. */
    assert_int_equal(dfg_autodiff(g, dfg_graph_index(g, x), &wrt, 1, &grad),
                     DFG_ERR_SHAPE);
    dfg_graph_destroy(g);
}

/* The ops docs/training.md lists as differentiable have a rule; those it
 * lists as not differentiable have none. */
static void test_rule_table_matches_the_documentation(void **state)
{
    (void)state;
    static const dfg_op not_differentiable[] = {
        DFG_OP_EQUAL, DFG_OP_LESS, DFG_OP_GREATER,
        DFG_OP_SOFTMAX_CROSS_ENTROPY_GRAD, DFG_OP_CONV2D_GRAD_INPUT,
        DFG_OP_CONV2D_GRAD_WEIGHT, DFG_OP_MAX_POOL_GRAD,
        DFG_OP_AVERAGE_POOL_GRAD, DFG_OP_GELU_GRAD, DFG_OP_SLICE_GRAD,
        DFG_OP_GATHER_GRAD, DFG_OP_OPTIMIZER_TICK, DFG_OP_SGD_UPDATE,
        DFG_OP_ADAM_UPDATE, DFG_OP_ADAMW_UPDATE, DFG_OP_BATCH_NORM_TRAIN_GRAD};
    for (size_t i = 0; i < sizeof not_differentiable / sizeof *not_differentiable; i++)
        if (dfg_vjp_rule_for(not_differentiable[i]))
            fail_msg("%s has a rule", dfg_op_get(not_differentiable[i])->name);
    /* Every op up to the training ops but the comparisons. */
    for (int op = 0; op < DFG_OP_SOFTMAX_CROSS_ENTROPY_GRAD; op++)
        if (op != DFG_OP_EQUAL && op != DFG_OP_LESS && op != DFG_OP_GREATER &&
            !dfg_vjp_rule_for((dfg_op)op))
            fail_msg("%s has no rule", dfg_op_get((dfg_op)op)->name);
}

/* dropout_train against finite differences: its state {seed, step} is
 * an input here, so that every run of the forward program draws the
 * backward run's mask (the kernel's increment of the step lands in the
 * arena's copy of the input). The gradient is the mask's, scaled, and 0
 * where an element was dropped. */
static dfg_program *compile_dropout(int with_gradient)
{
    dfg_graph *g;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    dfg_value x, state, out[2];
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 2, (int64_t[]){4, 50},
                                     &x), DFG_OK);
    assert_int_equal(dfg_graph_input(g, "state", DFG_I64, 1, (int64_t[]){2},
                                     &state), DFG_OK);
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.alpha = 0.3f;
    assert_int_equal(dfg_graph_node(g, "dropout_train", NULL,
                                    (dfg_value[]){x, state}, 2, &attrs, out, 2),
                     DFG_OK);
    random_seed(7);
    dfg_value loss = weighted_sum(g, out[0]);
    assert_int_equal(dfg_graph_output(g, loss, "L"), DFG_OK);
    if (with_gradient) {
        int32_t wrt = dfg_graph_index(g, x), grad;
        assert_int_equal(dfg_autodiff(g, dfg_graph_index(g, loss), &wrt, 1,
                                      &grad), DFG_OK);
        assert_int_equal(dfg_graph_output(g, dfg_graph_handle(g, grad), "dx"),
                         DFG_OK);
    }
    dfg_program *p;
    assert_int_equal(dfg_compile(g, NULL, &p), DFG_OK);
    dfg_graph_destroy(g);
    return p;
}

static void test_dropout_train_gradient(void **state)
{
    (void)state;
    enum { N = 200 };
    const dfg_backend *cpu;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    dfg_program *forward = compile_dropout(0), *backward = compile_dropout(1);
    dfg_session *fs, *bs;
    assert_int_equal(dfg_session_create(forward, cpu, NULL, &fs), DFG_OK);
    assert_int_equal(dfg_session_create(backward, cpu, NULL, &bs), DFG_OK);
    float x[N], dx[N], loss;
    int64_t seed_step[2] = {12345, 3};
    fill(x, N, SIGNED);
    void *inputs[2] = {x, seed_step};
    assert_int_equal(dfg_session_run(bs, (const void *const *)inputs,
                                     (void *[]){&loss, dx}), DFG_OK);
    int dropped = 0;
    for (int j = 0; j < N; j++)
        dropped += dx[j] == 0.0f;
    assert_in_range(dropped, N / 10, N / 2);
    double norm, error = gradient_error(fs, inputs, 0, N, dx, &norm);
    if (!(error < TOLERANCE) || norm == 0.0)
        fail_msg("dropout_train: relative gradient error %.3g (|ref| %.3g)",
                 error, norm);
    dfg_session_destroy(fs);
    dfg_session_destroy(bs);
    dfg_program_destroy(forward);
    dfg_program_destroy(backward);
}

int main(void)
{
    enum { N = sizeof cases / sizeof cases[0] };
    struct CMUnitTest tests[N + 3];
    for (int i = 0; i < N; i++)
        tests[i] = (struct CMUnitTest){cases[i].name, test_case, NULL, NULL,
                                       (void *)&cases[i]};
    tests[N] = (struct CMUnitTest)cmocka_unit_test(test_non_differentiable_is_an_error);
    tests[N + 1] = (struct CMUnitTest)cmocka_unit_test(test_rule_table_matches_the_documentation);
    tests[N + 2] = (struct CMUnitTest)cmocka_unit_test(test_dropout_train_gradient);
    random_seed(0x2545F4914F6CDD1DULL);
    return _cmocka_run_group_tests("autodiff", tests, N + 3, NULL, NULL);
}
