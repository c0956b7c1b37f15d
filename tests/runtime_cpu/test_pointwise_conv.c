/* 1x1 convs over plain tensors as a matrix product (runtime/cpu/linalg/
 * pointwise_conv.h) against a double-precision reference on random
 * data: x -> 1x1 conv (bias, activation, residual as the case says) ->
 * y, both graph inputs and outputs, so plain. Each case runs compiled in
 * this process and saved and mapped as a .dfgp is; a conv the rule takes
 * runs on the product, one it refuses does not; a run allocates
 * nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dfg/dfg.h"
#include "program/program.h"
#include "runtime/cpu/linalg/pointwise_conv.h"
#include "tests/support/libc_calls.h"
#include "tests/support/program_fixtures.h"
#include "tests/support/random_data.h"

typedef struct pw_case {
    const char *what;
    int64_t n, cin, cout, h, w;
    int bias, residual;
    const char *activation; /* "relu", "sigmoid" or NULL */
} pw_case;

static dfg_graph *case_graph(const pw_case *k, float *w, float *b)
{
    dfg_graph *g = NULL;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    int64_t x_shape[4] = {k->n, k->cin, k->h, k->w};
    int64_t w_shape[4] = {k->cout, k->cin, 1, 1};
    dfg_value x, wv, bv = DFG_NO_VALUE, y;
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 4, x_shape, &x), DFG_OK);
    assert_int_equal(dfg_graph_weight(g, "w", DFG_F32, 4, w_shape, w, &wv),
                     DFG_OK);
    if (k->bias)
        assert_int_equal(
            dfg_graph_weight(g, "b", DFG_F32, 1, &k->cout, b, &bv), DFG_OK);
    assert_int_equal(dfg_conv2d(g, x, wv, bv, NULL, &y), DFG_OK);
    if (k->residual)
        assert_int_equal(dfg_add(g, y, x, &y), DFG_OK);
    if (k->activation && strcmp(k->activation, "relu") == 0)
        assert_int_equal(dfg_relu(g, y, &y), DFG_OK);
    else if (k->activation)
        assert_int_equal(dfg_sigmoid(g, y, &y), DFG_OK);
    assert_int_equal(dfg_graph_output(g, y, "y"), DFG_OK);
    return g;
}

static double *case_reference(const pw_case *k, const float *x,
                              const float *w, const float *b)
{
    int64_t hw = k->h * k->w;
    double *y = malloc((size_t)(k->n * k->cout * hw) * sizeof *y);
    assert_non_null(y);
    for (int64_t i = 0; i < k->n; i++)
        for (int64_t co = 0; co < k->cout; co++)
            for (int64_t q = 0; q < hw; q++) {
                double s = k->bias ? b[co] : 0.0;
                for (int64_t ci = 0; ci < k->cin; ci++)
                    s += (double)w[co * k->cin + ci] *
                         x[(i * k->cin + ci) * hw + q];
                if (k->residual)
                    s += x[(i * k->cin + co) * hw + q];
                if (k->activation && strcmp(k->activation, "relu") == 0)
                    s = s > 0 ? s : 0;
                else if (k->activation)
                    s = 1.0 / (1.0 + exp(-s));
                y[(i * k->cout + co) * hw + q] = s;
            }
    return y;
}

/* The conv step's label in session, and whether the rule takes it. */
static const char *conv_library(const dfg_program *program,
                                const dfg_session *session, int *takes)
{
    for (int32_t i = 0; i < program->n_steps; i++) {
        const dfg_program_step *s = &program->steps[i];
        if (s->op != DFG_OP_CONV2D)
            continue;
        dfg_type in[4], out = program->tensors[s->outputs[0]].type;
        for (int32_t j = 0; j < s->n_inputs && j < 4; j++)
            in[j] = s->inputs[j] >= 0 ? program->tensors[s->inputs[j]].type
                                      : (dfg_type){.rank = -1};
        *takes = dfg_pointwise_takes(&s->attrs, in, s->n_inputs, &out);
        const char *library = NULL;
        assert_int_equal(dfg_session_step_library(session, i, &library),
                         DFG_OK);
        return library ? library : "dfg";
    }
    fail_msg("no conv2d step");
    return NULL;
}

static void check_program(const pw_case *k, dfg_program *program,
                          const float *x, const double *ref, const char *door)
{
    dfg_session *session = NULL;
    const dfg_backend *cpu = NULL;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    assert_int_equal(dfg_session_create(program, cpu, NULL, &session), DFG_OK);
    int takes = 0;
    const char *library = conv_library(program, session, &takes);
    if (takes != (strstr(library, "pointwise") != NULL))
        fail_msg("%s (%s): the rule says %d, the conv ran on %s", k->what,
                 door, takes, library);
    int64_t n_y = k->n * k->cout * k->h * k->w;
    float *y = malloc((size_t)n_y * sizeof *y);
    assert_non_null(y);
    const void *inputs[1] = {x};
    void *outputs[1] = {y};
    assert_int_equal(dfg_session_run(session, inputs, outputs), DFG_OK);
    long before = libc_calls_count();
    for (int run = 0; run < 3; run++)
        assert_int_equal(dfg_session_run(session, inputs, outputs), DFG_OK);
    if (libc_calls_count() != before)
        fail_msg("%s (%s): %ld calls to malloc & co. during 3 runs", k->what,
                 door, libc_calls_count() - before);
    double err = fixture_relative_error(y, ref, n_y);
    if (!(err < 5e-6))
        fail_msg("%s (%s, %s): relative error %g", k->what, door, library,
                 err);
    free(y);
    dfg_session_destroy(session);
}

static void check_case(const pw_case *k)
{
    float *w = random_floats(k->cout * k->cin, 1.0f / sqrtf((float)k->cin));
    float *b = random_floats(k->cout, 0.5f);
    float *x = random_floats(k->n * k->cin * k->h * k->w, 1.0f);
    double *ref = case_reference(k, x, w, b);
    dfg_graph *g = case_graph(k, w, b);
    dfg_compile_options options;
    dfg_compile_options_init(&options);
    dfg_program *program = NULL;
    assert_int_equal(dfg_compile(g, &options, &program), DFG_OK);
    check_program(k, program, x, ref, "compiled");
    program = fixture_mapped(program);
    assert_non_null(program);
    check_program(k, program, x, ref, "mapped");
    free(ref);
    free(x);
    free(b);
    free(w);
    dfg_program_destroy(program);
    dfg_graph_destroy(g);
}

static void test_pointwise_convs(void **state)
{
    (void)state;
    static const pw_case cases[] = {
        {"58 -> 58 at 28x28, bias, relu", 1, 58, 58, 28, 28, 1, 0, "relu"},
        {"24 -> 58 at 56x56, sigmoid, no bias", 1, 24, 58, 56, 56, 0, 0,
         "sigmoid"},
        {"116 -> 116 at 14x14, batch 3, bias only", 3, 116, 116, 14, 14, 1,
         0, NULL},
        {"batch 2, 20 x 17 pixels, 5 -> 3", 2, 5, 3, 20, 17, 1, 0, "relu"},
        /* refused: too few pixels; a residual */
        {"232 -> 232 at 7x7", 1, 232, 232, 7, 7, 1, 0, "relu"},
        {"residual, 40 -> 40 at 16x16", 1, 40, 40, 16, 16, 1, 1, "relu"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(&cases[i]);
}

/* The rule: f32, 1x1, stride 1, no padding, ungrouped, plain x and y, no
 * residual, at least DFG_POINTWISE_MIN_PIXELS pixels. */
static void test_rule(void **state)
{
    (void)state;
    dfg_attrs a;
    dfg_attrs_init(&a);
    dfg_type in[4] = {{DFG_F32, 4, {1, 58, 28, 28}, 0},
                      {DFG_F32, 4, {58, 58, 1, 1}, 0},
                      {DFG_F32, 1, {58}, 0},
                      {.rank = -1}};
    dfg_type out = {DFG_F32, 4, {1, 58, 28, 28}, 0};
    assert_true(dfg_pointwise_takes(&a, in, 3, &out));
    assert_true(dfg_pointwise_takes(&a, in, 4, &out)); /* no residual */
    in[3] = out;
    assert_false(dfg_pointwise_takes(&a, in, 4, &out)); /* a residual */
    out.layout = DFG_LAYOUT_NCHW8C;
    assert_false(dfg_pointwise_takes(&a, in, 3, &out)); /* blocked y */
    out.layout = DFG_LAYOUT_PLAIN;
    in[0].layout = DFG_LAYOUT_NCHW16C;
    assert_false(dfg_pointwise_takes(&a, in, 3, &out)); /* blocked x */
    in[0].layout = DFG_LAYOUT_PLAIN;
    a.n_post_ops = 1;
    a.post_ops[0] = DFG_POST_SUM;
    assert_false(dfg_pointwise_takes(&a, in, 3, &out)); /* a sum post-op */
    a.n_post_ops = 0;
    a.strides[0] = a.strides[1] = 2; /* stride 2 */
    out.shape[2] = out.shape[3] = 14;
    assert_false(dfg_pointwise_takes(&a, in, 3, &out));
    a.strides[0] = a.strides[1] = 1;
    in[0].shape[2] = in[0].shape[3] = out.shape[2] = out.shape[3] = 13;
    assert_false(dfg_pointwise_takes(&a, in, 3, &out)); /* 169 pixels */
    in[0].shape[2] = in[0].shape[3] = out.shape[2] = out.shape[3] = 14;
    assert_true(dfg_pointwise_takes(&a, in, 3, &out)); /* 196 pixels */
    in[1].shape[2] = in[1].shape[3] = 3; /* 3x3, padded to keep 14x14 */
    a.pads[0] = a.pads[1] = a.pads[2] = a.pads[3] = 1;
    assert_false(dfg_pointwise_takes(&a, in, 3, &out));
    in[1].shape[2] = in[1].shape[3] = 1;
    a.pads[0] = a.pads[1] = a.pads[2] = a.pads[3] = 0;
    a.group = 2; /* grouped */
    in[1].shape[1] = 29;
    assert_false(dfg_pointwise_takes(&a, in, 3, &out));
    a.group = 1;
    in[1].shape[1] = 58;
    in[0].dtype = DFG_F16; /* not f32 */
    assert_false(dfg_pointwise_takes(&a, in, 3, &out));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pointwise_convs),
        cmocka_unit_test(test_rule),
    };
    random_seed(2026);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
