/* The 3x3 convs dfg runs its own way on the CPU backend, Winograd
 * F(4x4, 3x3) (runtime/cpu/linalg/winograd_conv.h) and small images over their
 * columns (columns_conv.h), against a double-precision reference on
 * random data.
 * Each case is a bottleneck, x -> 1x1 conv -> relu -> 3x3 conv (bias,
 * residual, activation as the case says) -> 1x1 conv -> y, so that the
 * layout pass keeps the 3x3 conv's operands blocked (nChw8c or nChw16c,
 * as this CPU's kernels take them), saved and mapped as a .dfgp is, run
 * on oneDNN with the 3x3 conv as the case expects (Winograd on either
 * block, the columns where their rule takes the block and shape),
 * and compared with the reference of the whole chain. A run allocates
 * nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cpu_layout_rule.h"
#include "dfg/dfg.h"
#include "tests/support/libc_calls.h"
#include "util/memory.h"
#include "runtime/cpu/linalg/columns_conv.h"
#include "program/program.h"
#include "tests/support/program_fixtures.h"
#include "tests/support/random_data.h"
#include "runtime/cpu/linalg/winograd_choice.h"
#include "runtime/cpu/linalg/winograd_conv.h"

/* The 1x1 convs' channels around the 3x3 one. */
#define OUTER 8

typedef struct wino_case {
    const char *what;
    int64_t n, cin, cout, h, w;
    int64_t pads[4]; /* top, left, bottom, right */
    int bias, residual;
    const char *activation; /* "relu", "sigmoid", "silu" or NULL */
    int64_t stride;
    const char *runs_as;    /* the 3x3 conv's label where its rule takes
                               it; NULL: winograd */
} wino_case;

typedef struct chain {
    float *wa, *wb, *bias, *wc; /* [cin][OUTER], [cout][cin][3][3], [cout],
                                   [OUTER][cout] */
    int64_t oh, ow;
} chain;

/* x [n, OUTER, h, w] -> y [n, OUTER, oh, ow] */
static dfg_graph *chain_graph(const wino_case *k, const chain *c)
{
    dfg_graph *g = NULL;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    int64_t x_shape[4] = {k->n, OUTER, k->h, k->w};
    int64_t wa_shape[4] = {k->cin, OUTER, 1, 1};
    int64_t wb_shape[4] = {k->cout, k->cin, 3, 3};
    int64_t wc_shape[4] = {OUTER, k->cout, 1, 1};
    dfg_value x, wa, wb, wc, b = DFG_NO_VALUE, h1, h2, y;
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 4, x_shape, &x), DFG_OK);
    assert_int_equal(dfg_graph_weight(g, "wa", DFG_F32, 4, wa_shape, c->wa, &wa),
                     DFG_OK);
    assert_int_equal(dfg_graph_weight(g, "wb", DFG_F32, 4, wb_shape, c->wb, &wb),
                     DFG_OK);
    assert_int_equal(dfg_graph_weight(g, "wc", DFG_F32, 4, wc_shape, c->wc, &wc),
                     DFG_OK);
    if (k->bias)
        assert_int_equal(
            dfg_graph_weight(g, "b", DFG_F32, 1, &k->cout, c->bias, &b), DFG_OK);
    assert_int_equal(dfg_conv2d(g, x, wa, DFG_NO_VALUE, NULL, &h1), DFG_OK);
    assert_int_equal(dfg_relu(g, h1, &h1), DFG_OK);
    int64_t stride = k->stride;
    dfg_conv2d_params p = {
        .strides = {stride, stride}, .dilations = {1, 1}, .group = 1};
    memcpy(p.pads, k->pads, sizeof p.pads);
    assert_int_equal(dfg_conv2d(g, h1, wb, b, &p, &h2), DFG_OK);
    if (k->residual)
        assert_int_equal(dfg_add(g, h2, h1, &h2), DFG_OK);
    dfg_value gate;
    if (k->activation && strcmp(k->activation, "relu") == 0)
        assert_int_equal(dfg_relu(g, h2, &h2), DFG_OK);
    else if (k->activation && strcmp(k->activation, "silu") == 0) {
        assert_int_equal(dfg_sigmoid(g, h2, &gate), DFG_OK);
        assert_int_equal(dfg_mul(g, h2, gate, &h2), DFG_OK);
    } else if (k->activation)
        assert_int_equal(dfg_sigmoid(g, h2, &h2), DFG_OK);
    assert_int_equal(dfg_conv2d(g, h2, wc, DFG_NO_VALUE, NULL, &y), DFG_OK);
    assert_int_equal(dfg_graph_output(g, y, "y"), DFG_OK);
    return g;
}

/* out[n][co][p] = sum over ci of w[co][ci] in[n][ci][p], p < pixels */
static void pointwise(const double *in, const float *w, int64_t n,
                      int64_t cin, int64_t cout, int64_t pixels, double *out)
{
    for (int64_t i = 0; i < n; i++)
        for (int64_t co = 0; co < cout; co++)
            for (int64_t q = 0; q < pixels; q++) {
                double s = 0;
                for (int64_t ci = 0; ci < cin; ci++)
                    s += (double)w[co * cin + ci] *
                         in[(i * cin + ci) * pixels + q];
                out[(i * cout + co) * pixels + q] = s;
            }
}

/* The chain of k on x, in double: y [n][OUTER][oh][ow] (malloc'd). */
static double *chain_reference(const wino_case *k, const chain *c,
                               const float *x)
{
    int64_t hw = k->h * k->w, ohw = c->oh * c->ow;
    int64_t stride = k->stride;
    double *xd = malloc((size_t)(k->n * OUTER * hw) * sizeof *xd);
    double *h1 = malloc((size_t)(k->n * k->cin * hw) * sizeof *h1);
    double *h2 = malloc((size_t)(k->n * k->cout * ohw) * sizeof *h2);
    double *y = malloc((size_t)(k->n * OUTER * ohw) * sizeof *y);
    assert_true(xd && h1 && h2 && y);
    for (int64_t i = 0; i < k->n * OUTER * hw; i++)
        xd[i] = x[i];
    pointwise(xd, c->wa, k->n, OUTER, k->cin, hw, h1);
    for (int64_t i = 0; i < k->n * k->cin * hw; i++)
        h1[i] = h1[i] > 0 ? h1[i] : 0;
    for (int64_t i = 0; i < k->n; i++)
        for (int64_t co = 0; co < k->cout; co++)
            for (int64_t oy = 0; oy < c->oh; oy++)
                for (int64_t ox = 0; ox < c->ow; ox++) {
                    double s = k->bias ? c->bias[co] : 0;
                    for (int64_t ci = 0; ci < k->cin; ci++)
                        for (int64_t ky = 0; ky < 3; ky++)
                            for (int64_t kx = 0; kx < 3; kx++) {
                                int64_t yy = oy * stride + ky - k->pads[0],
                                        xx = ox * stride + kx - k->pads[1];
                                if (yy < 0 || yy >= k->h || xx < 0 ||
                                    xx >= k->w)
                                    continue;
                                s += (double)c->wb[((co * k->cin + ci) * 3 +
                                                    ky) * 3 + kx] *
                                     h1[((i * k->cin + ci) * k->h + yy) *
                                            k->w + xx];
                            }
                    int64_t at = ((i * k->cout + co) * c->oh + oy) * c->ow + ox;
                    if (k->residual)
                        s += h1[at]; /* same shape: pads keep h x w */
                    if (k->activation && strcmp(k->activation, "relu") == 0)
                        s = s > 0 ? s : 0;
                    else if (k->activation &&
                             strcmp(k->activation, "silu") == 0)
                        s = s / (1.0 + exp(-s));
                    else if (k->activation)
                        s = 1.0 / (1.0 + exp(-s));
                    h2[at] = s;
                }
    pointwise(h2, c->wc, k->n, k->cout, OUTER, ohw, y);
    free(xd);
    free(h1);
    free(h2);
    return y;
}

/* The chain's second conv2d step (the 3x3 conv). */
static const dfg_program_step *conv3x3_step(const dfg_program *program)
{
    int32_t convs = 0;
    for (int32_t i = 0; i < program->n_steps; i++)
        if (program->steps[i].op == DFG_OP_CONV2D && ++convs == 2)
            return &program->steps[i];
    fail_msg("no second conv2d step");
    return NULL;
}

/* The layout of the 3x3 conv's input. */
static int32_t conv3x3_layout(const dfg_program *program)
{
    return program->tensors[conv3x3_step(program)->inputs[0]].type.layout;
}

/* 1 if the columns' rule (columns) or Winograd's takes the 3x3 conv as
 * the layout pass left it on this CPU (its block of 8 or 16). */
static int conv3x3_taken(const dfg_program *program, int columns)
{
    const dfg_program_step *st = conv3x3_step(program);
    dfg_type in[4];
    for (int32_t j = 0; j < st->n_inputs && j < 4; j++)
        in[j] = st->inputs[j] >= 0 ? program->tensors[st->inputs[j]].type
                                   : (dfg_type){.rank = -1};
    const dfg_type *out = &program->tensors[st->outputs[0]].type;
    return columns ? dfg_columns_takes(&st->attrs, in, st->n_inputs, out)
                   : dfg_winograd_takes(&st->attrs, in, st->n_inputs, out);
}

static const char *winograd_library(const dfg_program *program,
                                    const dfg_session *session)
{
    dfg_plan_stats stats;
    dfg_program_stats(program, &stats);
    int32_t convs = 0;
    for (int32_t i = 0; i < stats.n_steps; i++) {
        dfg_step_info info;
        assert_int_equal(dfg_program_step_info(program, i, &info), DFG_OK);
        if (strncmp(info.op, "conv2d", 6) == 0 && ++convs == 2) {
            const char *library = NULL;
            assert_int_equal(dfg_session_step_library(session, i, &library),
                             DFG_OK);
            return library ? library : "dfg";
        }
    }
    fail_msg("no second conv2d step");
    return NULL;
}

static void check_case(const wino_case *k)
{
    int64_t stride = k->stride;
    chain c = {
        .wa = random_floats(k->cin * OUTER, 0.5f),
        .wb = random_floats(k->cout * k->cin * 9, 1.0f / sqrtf((float)k->cin)),
        .bias = random_floats(k->cout, 0.5f),
        .wc = random_floats(OUTER * k->cout, 0.5f),
        .oh = (k->h + k->pads[0] + k->pads[2] - 3) / stride + 1,
        .ow = (k->w + k->pads[1] + k->pads[3] - 3) / stride + 1,
    };
    float *x = random_floats(k->n * OUTER * k->h * k->w, 1.0f);
    dfg_graph *g = chain_graph(k, &c);
    dfg_compile_options options;
    dfg_compile_options_init(&options);
    dfg_program *program = NULL;
    assert_int_equal(dfg_compile(g, &options, &program), DFG_OK);
    program = fixture_mapped(program);
    assert_non_null(program);
    dfg_session *session = NULL;
    const dfg_backend *cpu = NULL;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    assert_int_equal(dfg_session_create(program, cpu, NULL, &session), DFG_OK);
    const char *library = winograd_library(program, session);
    /* Winograd and the columns run on the blocked layouts (nChw8c,
     * nChw16c), on those of their shapes that the block's rule names:
     * whichever the layout pass chose here. */
    int expected = conv3x3_layout(program) != DFG_LAYOUT_PLAIN &&
                   conv3x3_taken(program, k->runs_as != NULL);
    if (expected && !strstr(library, k->runs_as ? k->runs_as : "winograd"))
        fail_msg("%s: the 3x3 conv ran on %s", k->what, library);
    /* The columns' product leaves a trailing silu to dfg's loop. */
    if (strstr(library, "columns") && k->activation &&
        strcmp(k->activation, "silu") == 0 && !strstr(library, " + silu"))
        fail_msg("%s: the columns kept the silu (%s)", k->what, library);
    int64_t n_y = k->n * OUTER * c.oh * c.ow;
    float *y = malloc((size_t)n_y * sizeof *y);
    assert_non_null(y);
    const void *inputs[1] = {x};
    void *outputs[1] = {y};
    assert_int_equal(dfg_session_run(session, inputs, outputs), DFG_OK);
    long before = libc_calls_count();
    for (int run = 0; run < 3; run++)
        assert_int_equal(dfg_session_run(session, inputs, outputs), DFG_OK);
    if (libc_calls_count() != before)
        fail_msg("%s: %ld calls to malloc & co. during 3 runs", k->what,
                 libc_calls_count() - before);
    double *ref = chain_reference(k, &c, x);
    double err = fixture_relative_error(y, ref, n_y);
    if (!(err < 5e-6))
        fail_msg("%s (%s): relative error %g", k->what, library, err);
    free(ref);
    free(y);
    free(x);
    free(c.wa);
    free(c.wb);
    free(c.bias);
    free(c.wc);
    dfg_session_destroy(session);
    dfg_program_destroy(program);
    dfg_graph_destroy(g);
}

static void test_winograd_convs(void **state)
{
    (void)state;
    static const wino_case cases[] = {
        {"relu, odd 25x25", 1, 64, 64, 25, 25, {1, 1, 1, 1}, 1, 0, "relu", 1, NULL},
        {"no padding, bias only", 1, 48, 96, 27, 29, {0, 0, 0, 0}, 1, 0,
         NULL, 1, NULL},
        {"batch 3, top-left padding, 80 outputs, no bias", 3, 64, 80, 26, 28,
         {1, 1, 0, 0}, 0, 0, "relu", 1, NULL},
        {"residual and relu, 98 tiles in chunks of 25, 25, 25, 23", 2, 128,
         128, 25, 25, {1, 1, 1, 1}, 1, 1, "relu", 1, NULL},
        /* Winograd refuses these post-ops (test_rule): direct kernels */
        {"sigmoid", 1, 96, 128, 28, 28, {1, 1, 1, 1}, 1, 0, "sigmoid", 1, NULL},
        {"silu", 1, 64, 64, 28, 28, {1, 1, 1, 1}, 1, 0, "silu", 1, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(&cases[i]);
}

static void test_columns_convs(void **state)
{
    (void)state;
    static const wino_case cases[] = {
        {"columns: 8x8, bias, relu", 1, 64, 64, 8, 8, {1, 1, 1, 1}, 1, 0,
         "relu", 1, "columns"},
        {"columns: stride 2, 13x13 -> 7x7, batch 2, no bias", 2, 64, 72, 13,
         13, {1, 1, 1, 1}, 0, 0, "relu", 2, "columns"},
        {"columns: residual and relu, batch 3, 7x7", 3, 128, 128, 7, 7,
         {1, 1, 1, 1}, 1, 1, "relu", 1, "columns"},
        {"columns: no padding, 9x11 -> 7x9, sigmoid", 1, 64, 96, 9, 11,
         {0, 0, 0, 0}, 1, 0, "sigmoid", 1, "columns"},
        {"columns: 256 inputs at 14x14", 1, 256, 64, 14, 14, {1, 1, 1, 1}, 1,
         0, "relu", 1, "columns"},
        {"columns: residual and silu, batch 2, 7x7", 2, 64, 64, 7, 7,
         {1, 1, 1, 1}, 1, 1, "silu", 1, "columns"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(&cases[i]);
}

/* The columns' rule: 3x3, ungrouped, blocked by 8 or 16, at least 64
 * channels each side, at most 8x8 outputs, or (by 8) 14x14 with 256
 * inputs; never a shape Winograd takes. */
static void test_columns_rule(void **state)
{
    (void)state;
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.pads[0] = a.pads[1] = a.pads[2] = a.pads[3] = 1;
    dfg_type in[2] = {{DFG_F32, 4, {1, 256, 14, 14}, DFG_LAYOUT_NCHW8C},
                      {DFG_F32, 4, {256, 256, 3, 3}, 0}};
    dfg_type out = {DFG_F32, 4, {1, 256, 14, 14}, DFG_LAYOUT_NCHW8C};
    assert_true(dfg_columns_takes(&a, in, 2, &out));
    assert_false(dfg_winograd_takes(&a, in, 2, &out));
    out.layout = DFG_LAYOUT_PLAIN;
    assert_false(dfg_columns_takes(&a, in, 2, &out));
    out.layout = DFG_LAYOUT_NCHW8C;
    a.strides[0] = a.strides[1] = 2; /* from 28x28 by stride 2 */
    in[0].shape[2] = in[0].shape[3] = 28;
    assert_true(dfg_columns_takes(&a, in, 2, &out));
    in[0].shape[1] = in[1].shape[1] = 128; /* 128 inputs at 14x14 */
    assert_false(dfg_columns_takes(&a, in, 2, &out));
    in[0].shape[1] = in[1].shape[1] = 256;
    a.strides[0] = a.strides[1] = 1; /* 28x28 outputs: too many */
    out.shape[2] = out.shape[3] = 28;
    assert_false(dfg_columns_takes(&a, in, 2, &out));
    in[0].shape[2] = in[0].shape[3] = out.shape[2] = out.shape[3] = 7;
    assert_true(dfg_columns_takes(&a, in, 2, &out)); /* 7x7 */
    in[0].shape[1] = in[1].shape[1] = 32; /* too few input channels */
    assert_false(dfg_columns_takes(&a, in, 2, &out));
    in[0].shape[1] = in[1].shape[1] = 256;
    in[0].layout = out.layout = DFG_LAYOUT_NCHW16C; /* blocked by 16 */
    assert_true(dfg_columns_takes(&a, in, 2, &out)); /* 7x7 */
    in[0].shape[2] = in[0].shape[3] = out.shape[2] = out.shape[3] = 14;
    assert_false(dfg_columns_takes(&a, in, 2, &out)); /* 14x14: not on 16 */
    in[0].layout = DFG_LAYOUT_NCHW8C; /* x and y blocked alike only */
    assert_false(dfg_columns_takes(&a, in, 2, &out));
    in[0].shape[2] = in[0].shape[3] = out.shape[2] = out.shape[3] = 7;
    in[0].layout = out.layout = DFG_LAYOUT_NCHW8C;
    a.group = 2; /* grouped */
    in[1].shape[1] = 128;
    assert_false(dfg_columns_takes(&a, in, 2, &out));
}

/* The rule: 3x3, stride 1, ungrouped, blocked, large enough (by 16:
 * from 64 inputs and 96 outputs). */
static void test_rule(void **state)
{
    (void)state;
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.pads[0] = a.pads[1] = a.pads[2] = a.pads[3] = 1;
    dfg_type in[2] = {{DFG_F32, 4, {1, 128, 28, 28}, DFG_LAYOUT_NCHW8C},
                      {DFG_F32, 4, {128, 128, 3, 3}, 0}};
    dfg_type out = {DFG_F32, 4, {1, 128, 28, 28}, DFG_LAYOUT_NCHW8C};
    assert_true(dfg_winograd_takes(&a, in, 2, &out));
    out.layout = DFG_LAYOUT_NCHW16C; /* x and y in two layouts */
    assert_false(dfg_winograd_takes(&a, in, 2, &out));
    in[0].layout = DFG_LAYOUT_NCHW16C; /* AVX-512's block */
    assert_true(dfg_winograd_takes(&a, in, 2, &out));
    /* post-ops: a residual sum and relu run in the output transform's
     * vector registers; silu (any other) would run value by value */
    a.n_post_ops = 2;
    a.post_ops[0] = DFG_POST_SUM;
    a.post_ops[1] = DFG_POST_RELU;
    assert_true(dfg_winograd_takes(&a, in, 2, &out));
    a.post_ops[1] = DFG_POST_SILU;
    assert_false(dfg_winograd_takes(&a, in, 2, &out));
    a.n_post_ops = 0;
    /* by 16: 64 -> 64 and 48 -> 192 at 56x56 stay direct, 64 -> 96 not */
    in[0].shape[2] = in[0].shape[3] = out.shape[2] = out.shape[3] = 56;
    in[0].shape[1] = in[1].shape[1] = in[1].shape[0] = out.shape[1] = 64;
    assert_false(dfg_winograd_takes(&a, in, 2, &out));
    in[0].layout = out.layout = DFG_LAYOUT_NCHW8C; /* by 8 it runs */
    assert_true(dfg_winograd_takes(&a, in, 2, &out));
    in[0].layout = out.layout = DFG_LAYOUT_NCHW16C;
    in[1].shape[0] = out.shape[1] = 96;
    assert_true(dfg_winograd_takes(&a, in, 2, &out));
    in[0].shape[1] = in[1].shape[1] = 48;
    in[1].shape[0] = out.shape[1] = 192;
    assert_false(dfg_winograd_takes(&a, in, 2, &out));
    in[0].shape[2] = in[0].shape[3] = out.shape[2] = out.shape[3] = 28;
    in[0].shape[1] = in[1].shape[1] = in[1].shape[0] = out.shape[1] = 128;
    in[0].layout = DFG_LAYOUT_NCHW8C;
    out.layout = DFG_LAYOUT_PLAIN;
    assert_false(dfg_winograd_takes(&a, in, 2, &out));
    out.layout = DFG_LAYOUT_NCHW8C;
    a.strides[0] = a.strides[1] = 2;
    out.shape[2] = out.shape[3] = 14;
    assert_false(dfg_winograd_takes(&a, in, 2, &out));
    a.strides[0] = a.strides[1] = 1;
    out.shape[2] = out.shape[3] = 28;
    in[0].shape[1] = in[1].shape[1] = 32; /* too few input channels */
    assert_false(dfg_winograd_takes(&a, in, 2, &out));
    in[0].shape[1] = in[1].shape[1] = 128; /* too few outputs */
    in[1].shape[0] = out.shape[1] = 32;
    assert_false(dfg_winograd_takes(&a, in, 2, &out));
    in[0].shape[1] = in[1].shape[1] = 256; /* filters too large */
    in[1].shape[0] = out.shape[1] = 256;
    assert_false(dfg_winograd_takes(&a, in, 2, &out));
    in[0].shape[1] = in[1].shape[1] = 128; /* 4x4 tiles: too few */
    in[1].shape[0] = out.shape[1] = 128;
    in[0].shape[2] = in[0].shape[3] = out.shape[2] = out.shape[3] = 14;
    assert_false(dfg_winograd_takes(&a, in, 2, &out));
    /* A band of rows of a 28x28 image: 3x7 tiles, 7 across */
    in[0].shape[2] = 12;
    out.shape[2] = 10;
    in[0].shape[3] = out.shape[3] = 28;
    a.pads[0] = a.pads[2] = 0;
    assert_true(dfg_winograd_takes(&a, in, 2, &out));
    in[0].shape[1] = in[1].shape[1] = 64; /* under 2M cin*cout*pixels */
    in[1].shape[0] = out.shape[1] = 64;
    assert_false(dfg_winograd_takes(&a, in, 2, &out));
}

/* The session's choice (winograd_choice.h): the largest output images
 * first, within the allowance of added bytes; convs the rule does not
 * take, or whose weights may change, add nothing. */
static void test_choice_within_the_allowance(void **state)
{
    (void)state;
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.pads[0] = a.pads[1] = a.pads[2] = a.pads[3] = 1;
    dfg_attrs one = a;
    one.pads[0] = one.pads[1] = one.pads[2] = one.pads[3] = 0;
    enum { STEPS = 5 };
    /* 128->128 at 28x28, 64->64 at 56x56, 128->128 at 28x28, a 1x1 conv,
     * 128->128 at 56x56 with weights that are not constant */
    static const int64_t c[STEPS] = {128, 64, 128, 128, 128},
                         hw[STEPS] = {28, 56, 28, 28, 56},
                         k[STEPS] = {3, 3, 3, 1, 3};
    dfg_type in[STEPS][2], out[STEPS];
    dfg_kernel_args steps[STEPS];
    for (int i = 0; i < STEPS; i++) {
        in[i][0] = (dfg_type){DFG_F32, 4, {1, c[i], hw[i], hw[i]},
                              DFG_LAYOUT_NCHW8C};
        in[i][1] = (dfg_type){DFG_F32, 4, {c[i], c[i], k[i], k[i]}, 0};
        out[i] = in[i][0];
        steps[i] = (dfg_kernel_args){.op = DFG_OP_CONV2D,
                                     .attrs = k[i] == 3 ? &a : &one,
                                     .n_inputs = 2, .in_types = in[i],
                                     .n_outputs = 1, .out_types = &out[i],
                                     .constant_inputs = i == 4 ? 0u : 2u};
    }
    const int64_t wide = 27 * 128 * 128 * 4, narrow = 27 * 64 * 64 * 4;
    assert_int_equal(dfg_winograd_added_bytes(&steps[0]), wide);
    assert_int_equal(dfg_winograd_added_bytes(&steps[1]), narrow);
    assert_int_equal(dfg_winograd_added_bytes(&steps[3]), 0);
    assert_int_equal(dfg_winograd_added_bytes(&steps[4]), 0);
    dfg_allocator al = dfg_allocator_or_default(NULL);
    uint8_t chosen[STEPS];
    static const struct {
        int64_t allowance;
        uint8_t want[STEPS];
    } cases[] = {
        {DFG_WINOGRAD_ALLOWANCE, {1, 1, 0, 0, 0}}, /* 56x56 first, then one */
        {narrow + 2 * wide, {1, 1, 1, 0, 0}},
        {wide, {0, 1, 0, 0, 0}}, /* 56x56 first: no room left for 28x28 */
        {narrow - 1, {0, 0, 0, 0, 0}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(dfg_winograd_choose(steps, STEPS, cases[i].allowance,
                                             &al, chosen),
                         DFG_OK);
        assert_memory_equal(chosen, cases[i].want, STEPS);
    }
    /* Per image of the batch, up to DFG_WINOGRAD_IMAGES images. */
    static const struct {
        int64_t batch, allowance;
        uint8_t want[STEPS];
    } batched[] = {
        {2, wide, {1, 1, 0, 0, 0}},
        {DFG_WINOGRAD_IMAGES, wide, {1, 1, 1, 0, 0}},
        {2 * DFG_WINOGRAD_IMAGES, wide / DFG_WINOGRAD_IMAGES,
         {0, 1, 0, 0, 0}}, /* as many as DFG_WINOGRAD_IMAGES' */
    };
    for (size_t i = 0; i < sizeof batched / sizeof batched[0]; i++) {
        for (int s = 0; s < STEPS; s++)
            in[s][0].shape[0] = out[s].shape[0] = batched[i].batch;
        assert_int_equal(dfg_winograd_choose(steps, STEPS,
                                             batched[i].allowance, &al,
                                             chosen),
                         DFG_OK);
        assert_memory_equal(chosen, batched[i].want, STEPS);
    }
}

/* Among images of one size the larger filter bank goes first: with room
 * for one of a 64->64 and a 128->128 conv at 28x28, the 128->128 one,
 * though it comes second. */
static void test_choice_larger_filters_first(void **state)
{
    (void)state;
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.pads[0] = a.pads[1] = a.pads[2] = a.pads[3] = 1;
    dfg_type in[2][2] = {
        {{DFG_F32, 4, {1, 64, 28, 28}, DFG_LAYOUT_NCHW8C},
         {DFG_F32, 4, {64, 64, 3, 3}, 0}},
        {{DFG_F32, 4, {1, 128, 28, 28}, DFG_LAYOUT_NCHW8C},
         {DFG_F32, 4, {128, 128, 3, 3}, 0}}};
    dfg_type out[2] = {in[0][0], in[1][0]};
    dfg_kernel_args steps[2];
    for (int i = 0; i < 2; i++)
        steps[i] = (dfg_kernel_args){.op = DFG_OP_CONV2D, .attrs = &a,
                                     .n_inputs = 2, .in_types = in[i],
                                     .n_outputs = 1, .out_types = &out[i],
                                     .constant_inputs = 2u};
    int64_t wide = dfg_winograd_added_bytes(&steps[1]);
    assert_true(dfg_winograd_added_bytes(&steps[0]) > 0 && wide > 0);
    dfg_allocator al = dfg_allocator_or_default(NULL);
    uint8_t chosen[2];
    assert_int_equal(dfg_winograd_choose(steps, 2, wide, &al, chosen), DFG_OK);
    assert_int_equal(chosen[0], 0);
    assert_int_equal(chosen[1], 1);
}

/* Steps that read one weight held in place (the bands of one conv)
 * share one U: granted together, for its bytes once, ranked by all their
 * pixels; a step whose weight is its session's own holds its own U. */
static void test_choice_shares_a_held_weight(void **state)
{
    (void)state;
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.pads[1] = a.pads[3] = 1;
    enum { STEPS = 4 };
    /* three 10-row bands of a 64->64 56-wide image (one weight), then a
     * 64->64 conv at 28x28 with another weight */
    static float w_bands[1], w_other[1];
    dfg_type in[STEPS][2], out[STEPS];
    const void *ins[STEPS][2];
    dfg_kernel_args steps[STEPS];
    for (int i = 0; i < STEPS; i++) {
        int band = i < 3;
        in[i][0] = (dfg_type){DFG_F32, 4, {1, 64, band ? 12 : 30,
                                           band ? 56 : 30},
                              DFG_LAYOUT_NCHW8C};
        in[i][1] = (dfg_type){DFG_F32, 4, {64, 64, 3, 3}, 0};
        out[i] = (dfg_type){DFG_F32, 4, {1, 64, band ? 10 : 28,
                                         band ? 56 : 28},
                            DFG_LAYOUT_NCHW8C};
        ins[i][0] = NULL;
        ins[i][1] = band ? (const void *)w_bands : (const void *)w_other;
        steps[i] = (dfg_kernel_args){.op = DFG_OP_CONV2D, .attrs = &a,
                                     .n_inputs = 2, .in_types = in[i],
                                     .in = ins[i],
                                     .n_outputs = 1, .out_types = &out[i],
                                     .constant_inputs = 2u,
                                     .shared_inputs = 2u};
    }
    int64_t u = dfg_winograd_added_bytes(&steps[0]);
    assert_true(u > 0 && dfg_winograd_added_bytes(&steps[3]) == u);
    dfg_allocator al = dfg_allocator_or_default(NULL);
    uint8_t chosen[STEPS];
    /* Room for one U: the bands' (1680 pixels against 784), all three. */
    assert_int_equal(dfg_winograd_choose(steps, STEPS, u, &al, chosen),
                     DFG_OK);
    assert_memory_equal(chosen, ((uint8_t[STEPS]){1, 1, 1, 0}), STEPS);
    assert_int_equal(dfg_winograd_choose(steps, STEPS, 2 * u, &al, chosen),
                     DFG_OK);
    assert_memory_equal(chosen, ((uint8_t[STEPS]){1, 1, 1, 1}), STEPS);
    /* Weights of the session's own: a U a band, ranked by its own
     * pixels (560 against 784): the 28x28 conv first. */
    for (int i = 0; i < STEPS; i++)
        steps[i].shared_inputs = 0;
    assert_int_equal(dfg_winograd_choose(steps, STEPS, 2 * u, &al, chosen),
                     DFG_OK);
    assert_memory_equal(chosen, ((uint8_t[STEPS]){1, 0, 0, 1}), STEPS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_winograd_convs),
        cmocka_unit_test(test_rule),
        cmocka_unit_test(test_columns_convs),
        cmocka_unit_test(test_columns_rule),
        cmocka_unit_test(test_choice_within_the_allowance),
        cmocka_unit_test(test_choice_larger_filters_first),
        cmocka_unit_test(test_choice_shares_a_held_weight),
    };
    random_seed(2024);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
