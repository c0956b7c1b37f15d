/* batch_norm with fused activations (passes/fusion/fuse_conv.c,
 * dfg_pass_fuse_norm_activation) and its CPU kernels
 * (runtime/cpu/reduce/normalization.c): the plain and the blocked kernel
 * (nChw8c, nChw16c), with no post-op, a relu, a relu then a clip and a
 * sigmoid, out of place and in place, against batch norm and the
 * activations written out index by index in double; the kernel table's
 * choice of them and what the blocked one refuses; and programs with a
 * conv, batch norm, activation, conv chain compiled fused (blocked and
 * plain) and unfused giving the same outputs, the fused step labelled,
 * with the near misses (a second reader, a graph output) left alone; and
 * a batch norm folded into the conv before it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dfg/dfg.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu_layout_rule.h"
#include "tests/support/pass_check.h"

#define N 2
#define C 32
#define H 5
#define W 7
#define ELEMS (N * C * H * W)
#define EPS 1e-5f

typedef struct norm_params {
    float scale[C], bias[C], mean[C], var[C];
} norm_params;

static void random_params(norm_params *p)
{
    fill_random(p->scale, C);
    fill_random(p->bias, C);
    fill_random(p->mean, C);
    fill_random(p->var, C);
    for (int c = 0; c < C; c++)
        p->var[c] = 0.25f + fabsf(p->var[c]);
}

/* The post-ops a case fuses (dfg_attrs.post_ops). */
typedef struct post_case {
    const char *what;
    int32_t n;
    int32_t kinds[2];
    float alpha[2], beta[2];
} post_case;

static const post_case post_cases[] = {
    {"none", 0, {0}, {0}, {0}},
    {"relu", 1, {DFG_POST_RELU}, {0}, {0}},
    {"relu, clip", 2, {DFG_POST_RELU, DFG_POST_CLIP}, {0, 0.0f}, {0, 0.4f}},
    {"sigmoid", 1, {DFG_POST_SIGMOID}, {0}, {0}},
};

static double reference(const norm_params *p, const post_case *k, int c,
                        double x)
{
    double y = (x - p->mean[c]) / sqrt((double)p->var[c] + EPS) *
                   p->scale[c] + p->bias[c];
    for (int32_t j = 0; j < k->n; j++) {
        if (k->kinds[j] == DFG_POST_RELU)
            y = y > 0.0 ? y : 0.0;
        else if (k->kinds[j] == DFG_POST_CLIP)
            y = y < k->alpha[j] ? k->alpha[j]
                                : (y > k->beta[j] ? k->beta[j] : y);
        else
            y = 1.0 / (1.0 + exp(-y));
    }
    return y;
}

/* Element (n, c, h, w) of an N x C x H x W tensor in layout. */
static int64_t at(int32_t layout, int64_t n, int64_t c, int64_t h, int64_t w)
{
    int64_t b = dfg_layout_block(layout);
    return (((n * (C / b) + c / b) * H + h) * W + w) * b + c % b;
}

/* Runs the kernel the table picks for batch_norm of x (in layout) into
 * y, which may be x. */
static void run_kernel(int32_t layout, const norm_params *p,
                       const post_case *k, const float *x, float *y)
{
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.epsilon = EPS;
    attrs.n_post_ops = k->n;
    for (int32_t j = 0; j < k->n; j++) {
        attrs.post_ops[j] = k->kinds[j];
        attrs.post_op_alpha[j] = k->alpha[j];
        attrs.post_op_beta[j] = k->beta[j];
    }
    dfg_type t_x = {DFG_F32, 4, {N, C, H, W}, layout};
    dfg_type t_c = {DFG_F32, 1, {C}, DFG_LAYOUT_PLAIN};
    dfg_type in[5] = {t_x, t_c, t_c, t_c, t_c};
    const void *ins[5] = {x, p->scale, p->bias, p->mean, p->var};
    void *outs[1] = {y};
    dfg_kernel_args args = {.op = DFG_OP_BATCH_NORM, .attrs = &attrs,
                            .n_inputs = 5, .in_types = in, .in = ins,
                            .n_outputs = 1, .out_types = &t_x, .out = outs};
    dfg_cpu_kernel kernel = dfg_cpu_kernel_for_step(&args);
    assert_true(kernel == (layout == DFG_LAYOUT_PLAIN
                               ? dfg_cpu_batch_norm
                               : dfg_cpu_batch_norm_blocked));
    OK(kernel(&args));
}

static void test_kernels_against_reference(void **state)
{
    (void)state;
    static const int32_t layouts[] = {DFG_LAYOUT_PLAIN, DFG_LAYOUT_NCHW8C,
                                      DFG_LAYOUT_NCHW16C};
    static float x[ELEMS], xl[ELEMS], y[ELEMS];
    norm_params p;
    rng_state = 7;
    fill_random(x, ELEMS);
    for (int64_t i = 0; i < ELEMS; i++)
        x[i] *= 3.0f;
    random_params(&p);
    for (size_t li = 0; li < 3; li++)
        for (size_t ki = 0; ki < sizeof post_cases / sizeof *post_cases; ki++)
            for (int in_place = 0; in_place < 2; in_place++) {
                const post_case *k = &post_cases[ki];
                for (int64_t n = 0; n < N; n++)
                    for (int64_t c = 0; c < C; c++)
                        for (int64_t h = 0; h < H; h++)
                            for (int64_t w = 0; w < W; w++)
                                xl[at(layouts[li], n, c, h, w)] =
                                    x[((n * C + c) * H + h) * W + w];
                float *out = in_place ? xl : y;
                run_kernel(layouts[li], &p, k, xl, out);
                for (int64_t n = 0; n < N; n++)
                    for (int64_t c = 0; c < C; c++)
                        for (int64_t h = 0; h < H; h++)
                            for (int64_t w = 0; w < W; w++) {
                                double want = reference(
                                    &p, k, (int)c,
                                    x[((n * C + c) * H + h) * W + w]);
                                double got =
                                    out[at(layouts[li], n, c, h, w)];
                                if (!(fabs(got - want) <=
                                      1e-5 * (1.0 + fabs(want))))
                                    fail_msg("%s, layout %d, in place %d: "
                                             "(%d, %d, %d, %d) is %g, "
                                             "not %g", k->what,
                                             (int)layouts[li], in_place,
                                             (int)n, (int)c, (int)h, (int)w,
                                             got, want);
                            }
            }
}

static void test_blocked_refusals(void **state)
{
    (void)state;
    dfg_type x = {DFG_F32, 4, {N, C, H, W}, DFG_LAYOUT_NCHW16C};
    dfg_type stat = {DFG_F32, 1, {C}, DFG_LAYOUT_PLAIN};
    dfg_type in[5] = {x, stat, stat, stat, stat};
    assert_true(dfg_cpu_batch_norm_takes_blocked(in, 5, &x,
                                                 DFG_LAYOUT_NCHW16C));
    assert_false(dfg_cpu_batch_norm_takes_blocked(in, 5, &x,
                                                  DFG_LAYOUT_PLAIN));
    assert_false(dfg_cpu_batch_norm_takes_blocked(in, 5, &x,
                                                  DFG_LAYOUT_NHWC));
    assert_false(dfg_cpu_batch_norm_takes_blocked(in, 4, &x,
                                                  DFG_LAYOUT_NCHW16C));
    dfg_type odd = x; /* channels that do not fill blocks: padded */
    odd.shape[1] = 20;
    dfg_type odd_in[5] = {odd, stat, stat, stat, stat};
    for (int i = 1; i < 5; i++)
        odd_in[i].shape[0] = 20;
    assert_true(dfg_cpu_batch_norm_takes_blocked(odd_in, 5, &odd,
                                                 DFG_LAYOUT_NCHW16C));
    odd_in[1].shape[0] = 32; /* statistics for the padding too */
    assert_false(dfg_cpu_batch_norm_takes_blocked(odd_in, 5, &odd,
                                                  DFG_LAYOUT_NCHW16C));
    in[3].dtype = DFG_F16; /* statistics of another dtype */
    assert_false(dfg_cpu_batch_norm_takes_blocked(in, 5, &x,
                                                  DFG_LAYOUT_NCHW16C));
}

/* --- programs: x -> conv 3x3 -> batch_norm -> activation -> conv 1x1 */

enum variant { PLAIN_CHAIN, SECOND_READER, NORM_OUTPUT };

static dfg_value stat_leaf(dfg_graph *g, const char *name, const float *v)
{
    dfg_value out;
    OK(dfg_graph_weight(g, name, DFG_F32, 1, DIMS(C), v, &out));
    return out;
}

static dfg_graph *chain(const norm_params *p, const char *activation,
                        enum variant variant)
{
    dfg_graph *g = NULL;
    OK(dfg_graph_create(NULL, &g));
    dfg_value x = input(g, "x", 4, DIMS(N, C, H, W));
    dfg_value w3 = random_leaf(g, "w3", 0, 4, DIMS(C, C, 3, 3));
    dfg_value w1 = random_leaf(g, "w1", 0, 4, DIMS(C, C, 1, 1));
    dfg_conv2d_params same = {{1, 1}, {1, 1}, {1, 1, 1, 1}, 1};
    dfg_conv2d_params point = {{1, 1}, {1, 1}, {0, 0, 0, 0}, 1};
    dfg_value y, z, a, out;
    OK(dfg_conv2d(g, x, w3, DFG_NO_VALUE, &same, &y));
    OK(dfg_batch_norm(g, y, stat_leaf(g, "scale", p->scale),
                      stat_leaf(g, "bias", p->bias),
                      stat_leaf(g, "mean", p->mean),
                      stat_leaf(g, "var", p->var), EPS, &z));
    OK(dfg_graph_node(g, activation, NULL, &z, 1, NULL, &a, 1));
    OK(dfg_conv2d(g, a, w1, DFG_NO_VALUE, &point, &out));
    if (variant == SECOND_READER)
        OK(dfg_add(g, out, z, &out));
    OK(dfg_graph_output(g, out, "out"));
    if (variant == NORM_OUTPUT)
        OK(dfg_graph_output(g, z, "z"));
    return g;
}

/* The program's batch_norm step: its label, and its output's layout. */
static const char *norm_step(const dfg_program *p, int32_t *layout)
{
    for (int32_t i = 0; i < p->n_steps; i++)
        if (p->steps[i].op == DFG_OP_BATCH_NORM) {
            dfg_step_info info;
            OK(dfg_program_step_info(p, i, &info));
            *layout = p->tensors[p->steps[i].outputs[0]].type.layout;
            return info.op;
        }
    fail_msg("no batch_norm step");
    return NULL;
}

/* 1 if some tensor of p is blocked. */
static int any_blocked(const dfg_program *p)
{
    for (int32_t i = 0; i < p->n_tensors; i++)
        if (p->tensors[i].type.layout != DFG_LAYOUT_PLAIN)
            return 1;
    return 0;
}

static void check_chain(const char *activation, enum variant variant,
                        const char *label)
{
    norm_params p;
    rng_state = 23;
    random_params(&p);
    dfg_graph *g = chain(&p, activation, variant);
    static float x[ELEMS];
    fill_random(x, ELEMS);
    const void *inputs[1] = {x};
    float *want[2] = {NULL, NULL}, *got[2] = {NULL, NULL};
    /* batch norms kept apart (not folded into the conv before them): the
     * test is of their own fused activations */
    dfg_program *unfused = compile_fusing_weights(g, 0, 0, 0);
    run_program(unfused, inputs, want);
    double ref[ELEMS];
    for (int64_t i = 0; i < ELEMS; i++)
        ref[i] = want[0][i];
    for (int layouts = 0; layouts < 2; layouts++) {
        dfg_program *fused = compile_fusing_weights(g, 1, layouts, 0);
        int32_t layout;
        const char *op = norm_step(fused, &layout);
        if (strcmp(op, label) != 0)
            fail_msg("%s (variant %d): the step is %s, not %s", activation,
                     (int)variant, op, label);
        /* The chain is one group: blocked wherever the convs are. */
        if (layouts && variant == PLAIN_CHAIN)
            assert_int_equal(layout != DFG_LAYOUT_PLAIN, any_blocked(fused));
        run_program(fused, inputs, got);
        double err = relative_error(got[0], ref, ELEMS);
        if (!(err < 1e-6))
            fail_msg("%s (variant %d, layouts %d): fused vs unfused relative "
                     "error %g", activation, (int)variant, layouts, err);
        free(got[0]);
        free(got[1]);
        dfg_program_destroy(fused);
    }
    free(want[0]);
    free(want[1]);
    dfg_program_destroy(unfused);
    dfg_graph_destroy(g);
}

/* How many steps of p run op. */
static int32_t steps_of(const dfg_program *p, dfg_op op)
{
    int32_t n = 0;
    for (int32_t i = 0; i < p->n_steps; i++)
        n += p->steps[i].op == op;
    return n;
}

/* The chain's batch norm folded into the conv before it
 * (passes/fusion/fold_batch_norm.c): no batch_norm step, the old
 * parameters gone, the outputs those of the chain kept apart; and a
 * depthwise conv with a bias, its output the graph's. A conv whose output
 * another node reads too keeps its batch norm. */
static void test_folded_into_conv(void **state)
{
    (void)state;
    norm_params p;
    rng_state = 29;
    random_params(&p);
    static float x[ELEMS];
    fill_random(x, ELEMS);
    const void *inputs[1] = {x};
    dfg_graph *graphs[3] = {chain(&p, "relu", PLAIN_CHAIN), NULL, NULL};
    for (int k = 1; k < 3; k++) {
        OK(dfg_graph_create(NULL, &graphs[k]));
        dfg_graph *g = graphs[k];
        dfg_value in = input(g, "x", 4, DIMS(N, C, H, W)), y, z;
        dfg_value w = random_leaf(g, "wd", 0, 4, DIMS(C, 1, 3, 3));
        dfg_value b = random_leaf(g, "bd", 0, 1, DIMS(C));
        dfg_conv2d_params depthwise = {{1, 1}, {1, 1}, {1, 1, 1, 1}, C};
        OK(dfg_conv2d(g, in, w, b, &depthwise, &y));
        OK(dfg_batch_norm(g, y, stat_leaf(g, "scale", p.scale),
                          stat_leaf(g, "bias", p.bias),
                          stat_leaf(g, "mean", p.mean),
                          stat_leaf(g, "var", p.var), EPS, &z));
        if (k == 2) /* the conv's output read twice */
            OK(dfg_add(g, z, y, &z));
        OK(dfg_graph_output(g, z, "out"));
    }
    for (int k = 0; k < 3; k++) {
        float *want[2] = {NULL, NULL}, *got[2] = {NULL, NULL};
        dfg_program *apart = compile_fusing_weights(graphs[k], 1, 1, 0);
        dfg_program *folded = compile_fusing(graphs[k], 1, 1);
        assert_int_equal(steps_of(apart, DFG_OP_BATCH_NORM), 1);
        assert_int_equal(steps_of(folded, DFG_OP_BATCH_NORM), k == 2);
        assert_int_equal(tensor_named(folded, "mean") >= 0, k == 2);
        run_program(apart, inputs, want);
        run_program(folded, inputs, got);
        double ref[ELEMS];
        for (int64_t i = 0; i < ELEMS; i++)
            ref[i] = want[0][i];
        double err = relative_error(got[0], ref, ELEMS);
        if (!(err < 1e-6))
            fail_msg("graph %d: folded vs apart relative error %g", k, err);
        free(want[0]);
        free(got[0]);
        dfg_program_destroy(apart);
        dfg_program_destroy(folded);
        dfg_graph_destroy(graphs[k]);
    }
}

static void test_fused_programs(void **state)
{
    (void)state;
    check_chain("relu", PLAIN_CHAIN, "batch_norm+relu");
    check_chain("sigmoid", PLAIN_CHAIN, "batch_norm+sigmoid");
    check_chain("tanh", PLAIN_CHAIN, "batch_norm+tanh");
    check_chain("abs", PLAIN_CHAIN, "batch_norm"); /* no such post-op */
    check_chain("relu", SECOND_READER, "batch_norm");
    check_chain("relu", NORM_OUTPUT, "batch_norm");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernels_against_reference),
        cmocka_unit_test(test_blocked_refusals),
        cmocka_unit_test(test_fused_programs),
        cmocka_unit_test(test_folded_into_conv),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
