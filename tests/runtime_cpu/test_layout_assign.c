/* Blocked layouts (passes/layout_assign.c, src/ir/layout_rule.h): the
 * reorder kernel against an index-by-index reference; which tensors the
 * pass blocks on small graphs (which block where both are on offer:
 * test_foreign_block.c), and that every such program computes what
 * its plain twin (--no-layouts) does, through a saved and loaded file
 * too; that --no-onednn programs stay plain; that a program whose
 * recorded CPU features this CPU lacks is refused with both named; and
 * that the loader refuses layouts where the rule forbids them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cpu_layout_rule.h"
#include "dfg/dfg.h"
#include "runtime/cpu/kernels_extra.h"
#include "tests/support/layout_check.h"
#include "tests/support/pass_check.h"
#include "tests/support/program_fixtures.h"
#include "program/program_format.h"

#define C 16
#define H 6
#define W 5
#define N_ELEMS (C * H * W)

/* --- the reorder kernel */

/* Where (n, c, h, w) lies with channel block b: blocks of b channels,
 * each [H][W][b], spelled out apart from tensor_type.h's formula. */
static int64_t blocked_at(int64_t b, int64_t c_all, int64_t n, int64_t c,
                          int64_t h, int64_t w)
{
    int64_t per_block = H * W * b;
    int64_t image = c_all * H * W;
    return n * image + (c / b) * per_block + (h * W + w) * b + (c - c / b * b);
}

static dfg_status reorder(const float *x, int32_t from, float *y, int32_t to,
                          int64_t n, int64_t c)
{
    dfg_type in = {DFG_F32, 4, {n, c, H, W}, from};
    dfg_type out = in;
    out.layout = to;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.layout = to;
    const void *ins[1] = {x};
    void *outs[1] = {y};
    dfg_kernel_args args = {.op = DFG_OP_REORDER, .attrs = &attrs,
                            .n_inputs = 1, .in_types = &in, .in = ins,
                            .n_outputs = 1, .out_types = &out, .out = outs};
    return dfg_cpu_reorder(&args);
}

static void test_reorder_kernel(void **state)
{
    (void)state;
    enum { N = 2 };
    static float x[N * N_ELEMS], b8[N * N_ELEMS], b16[N * N_ELEMS],
        direct16[N * N_ELEMS], back[N * N_ELEMS];
    rng_state = 3;
    fill_random(x, N * N_ELEMS);
    assert_int_equal(reorder(x, DFG_LAYOUT_PLAIN, b8, DFG_LAYOUT_NCHW8C, N, C),
                     DFG_OK);
    assert_int_equal(reorder(b8, DFG_LAYOUT_NCHW8C, b16, DFG_LAYOUT_NCHW16C,
                             N, C), DFG_OK);
    /* Plain to nChw16c directly (its own loop) and through nChw8c (the
     * blocked-to-blocked one). */
    assert_int_equal(reorder(x, DFG_LAYOUT_PLAIN, direct16,
                             DFG_LAYOUT_NCHW16C, N, C), DFG_OK);
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t w = 0; w < W; w++) {
                    float want = x[((n * C + c) * H + h) * W + w];
                    assert_true(b8[blocked_at(8, C, n, c, h, w)] == want);
                    assert_true(b16[blocked_at(16, C, n, c, h, w)] == want);
                    assert_true(direct16[blocked_at(16, C, n, c, h, w)] ==
                                want);
                }
    assert_int_equal(reorder(b16, DFG_LAYOUT_NCHW16C, back, DFG_LAYOUT_PLAIN,
                             N, C), DFG_OK);
    assert_memory_equal(back, x, sizeof x);
    memset(back, 0, sizeof back);
    assert_int_equal(reorder(b8, DFG_LAYOUT_NCHW8C, back, DFG_LAYOUT_PLAIN,
                             N, C), DFG_OK);
    assert_memory_equal(back, x, sizeof x);
    /* Channels that do not fill whole blocks are padded
     * (test_padded_layouts); no channels at all: refused, not misread. */
    assert_int_equal(reorder(x, DFG_LAYOUT_PLAIN, b8, DFG_LAYOUT_NCHW8C, 1, 0),
                     DFG_ERR_SHAPE);
}

/* --- graphs */

static dfg_value conv(dfg_graph *g, dfg_value x, int id)
{
    char wn[16], bn[16];
    snprintf(wn, sizeof wn, "w%d", id);
    snprintf(bn, sizeof bn, "b%d", id);
    dfg_value wv = random_leaf(g, wn, 0, 4, DIMS(C, C, 3, 3));
    dfg_value bv = random_leaf(g, bn, 0, 1, DIMS(C)), y;
    dfg_conv2d_params params = {{1, 1}, {1, 1}, {1, 1, 1, 1}, 1};
    OK(dfg_conv2d(g, x, wv, bv, &params, &y));
    return y;
}

static dfg_value node(dfg_graph *g, const char *op, dfg_value a, dfg_value b)
{
    dfg_value out, in[2] = {a, b};
    assert_int_equal(dfg_graph_node(g, op, NULL, in, b == DFG_NO_VALUE ? 1 : 2,
                                    NULL, &out, 1), DFG_OK);
    return out;
}

typedef enum shape_case {
    CONV_RELU_CONV, /* conv -> tanh -> conv: stays blocked between */
    CONV_FLATTEN,   /* y1 read by a conv and a flatten: a reorder */
    MIXED_ADD,      /* y1 + a [1, 1, H, W] tensor: the add stays plain */
    PER_CHANNEL,    /* y1 * a [1, C, 1, 1] tensor (oneDNN): stays blocked */
    CONCAT,         /* concat of two convs along channels, then a conv */
    POOLS,          /* max pool (ceil_mode), conv, average pool, conv */
} shape_case;

static dfg_graph *build(shape_case k)
{
    dfg_graph *g = NULL;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    int64_t shape[4] = {1, C, H, W}, plane[4] = {1, 1, H, W};
    int64_t channels[4] = {1, C, 1, 1};
    dfg_value x, s, out;
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 4, shape, &x), DFG_OK);
    dfg_value y1 = conv(g, x, 0);
    switch (k) {
    case CONV_RELU_CONV:
        out = conv(g, node(g, "tanh", y1, DFG_NO_VALUE), 1);
        break;
    case CONV_FLATTEN:
        out = node(g, "flatten", y1, DFG_NO_VALUE);
        assert_int_equal(dfg_graph_output(g, conv(g, y1, 1), "z"), DFG_OK);
        break;
    case MIXED_ADD:
        OK(dfg_graph_input(g, "s", DFG_F32, 4, plane, &s));
        out = node(g, "add", conv(g, y1, 1), node(g, "add", y1, s));
        break;
    case PER_CHANNEL:
        OK(dfg_graph_input(g, "s", DFG_F32, 4, channels, &s));
        out = conv(g, node(g, "mul", s, y1), 1);
        break;
    case POOLS: {
        dfg_attrs attrs;
        dfg_attrs_init(&attrs);
        attrs.kernel[0] = attrs.kernel[1] = 3;
        attrs.strides[0] = attrs.strides[1] = 2;
        attrs.pads[0] = attrs.pads[1] = attrs.pads[2] = attrs.pads[3] = 1;
        attrs.ceil_mode = 1;
        dfg_value pooled;
        OK(dfg_graph_node(g, "max_pool", NULL, &y1, 1, &attrs, &pooled, 1));
        dfg_value y2 = conv(g, pooled, 1);
        attrs.strides[0] = attrs.strides[1] = 1;
        attrs.ceil_mode = 0;
        OK(dfg_graph_node(g, "average_pool", NULL, &y2, 1, &attrs, &pooled,
                          1));
        out = conv(g, pooled, 2);
        break;
    }
    default: {
        dfg_value parts[2] = {conv(g, y1, 1), conv(g, y1, 2)}, cat;
        dfg_attrs attrs;
        dfg_attrs_init(&attrs);
        attrs.axis = 1;
        assert_int_equal(dfg_graph_node(g, "concat", NULL, parts, 2, &attrs,
                                        &cat, 1), DFG_OK);
        dfg_value w = random_leaf(g, "wc", 0, 4, DIMS(C, 2 * C, 1, 1)), y;
        dfg_conv2d_params params = {{1, 1}, {1, 1}, {0, 0, 0, 0}, 1};
        assert_int_equal(dfg_conv2d(g, cat, w, DFG_NO_VALUE, &params, &y),
                         DFG_OK);
        out = y;
    }
    }
    assert_int_equal(dfg_graph_output(g, out, "out"), DFG_OK);
    return g;
}

/* p saved and loaded back (mapped, as a .dfgp is). */
static dfg_program *reloaded(const dfg_program *p)
{
    dfg_program *loaded = fixture_reloaded(p);
    if (!loaded)
        fail_msg("save and load: %s", dfg_last_error());
    return loaded;
}

static const dfg_backend *cpu(void)
{
    const dfg_backend *b = NULL;
    OK(dfg_backend_find("cpu", &b));
    return b;
}

/* p's first output on seeded inputs (malloc'd). */
static float *run(const dfg_program *p)
{
    static float x[N_ELEMS], s[H * W];
    rng_state = 11;
    fill_random(x, N_ELEMS);
    fill_random(s, H * W);
    const void *inputs[2] = {x, s};
    float *outputs[2] = {NULL, NULL};
    run_program(p, inputs, outputs);
    free(outputs[1]);
    return outputs[0];
}

static int count_op(const dfg_program *p, dfg_op op)
{
    int n = 0;
    for (int32_t i = 0; i < p->n_steps; i++)
        n += p->steps[i].op == op;
    return n;
}

/* The layout oneDNN wants for a C -> C 3x3 conv here; plain: none to test. */
static int32_t wanted_block(void)
{
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.kernel[0] = attrs.kernel[1] = 3;
    attrs.pads[0] = attrs.pads[1] = attrs.pads[2] = attrs.pads[3] = 1;
    dfg_type in[3] = {{DFG_F32, 4, {1, C, H, W}, 0},
                      {DFG_F32, 4, {C, C, 3, 3}, 0},
                      {DFG_F32, 1, {C}, 0}};
    dfg_type out = in[0];
    int32_t x = -1, y = -1;
    if (dfg_cpu_conv_layouts(&attrs, in, 3, &out, 1, &x, &y) != 0)
        return DFG_LAYOUT_PLAIN;
    if (x >= 0)
        return x;
    /* A format dfg has no layout for (nhwc, AVX-512's brgemm): the pass
     * takes the widest block a jit kernel runs these convs in. */
    int32_t blocks[2];
    int32_t n = dfg_cpu_blocked_layouts(blocks);
    for (int32_t i = 0; i < n; i++)
        if (dfg_cpu_conv_layouts_in(&attrs, in, 3, &out, 1, blocks[i], 0, &x,
                                    &y) == 0)
            return blocks[i];
    return DFG_LAYOUT_PLAIN;
}

/* p computes what plain computes, loaded from a file too. */
static void expect_same_output(const dfg_program *p, const dfg_program *plain)
{
    float *want = run(plain), *got = run(p);
    static double ref[N_ELEMS];
    int64_t n = p->tensors[p->outputs[0]].bytes / (int64_t)sizeof(float);
    assert_true(n <= N_ELEMS);
    for (int64_t i = 0; i < n; i++)
        ref[i] = want[i];
    assert_true(relative_error(got, ref, n) < 1e-5);
    free(got);
    dfg_program *loaded = reloaded(p);
    assert_string_equal(loaded->layout_isa, p->layout_isa);
    for (int32_t i = 0; i < p->n_tensors; i++)
        assert_int_equal(loaded->tensors[i].type.layout,
                         p->tensors[i].type.layout);
    got = run(loaded);
    assert_true(relative_error(got, ref, n) < 1e-5);
    free(got);
    free(want);
    dfg_program_destroy(loaded);
}

static void test_assignment(void **state)
{
    (void)state;
    int32_t block = wanted_block();
    if (block == DFG_LAYOUT_PLAIN)
        skip(); /* oneDNN wants no blocked layout on this CPU */
    for (int k = CONV_RELU_CONV; k <= POOLS; k++) {
        dfg_graph *g = build((shape_case)k);
        dfg_program *p = compile_with(g, 1, 1), *plain = compile_with(g, 0, 1);
        check_program(p);
        assert_string_equal(p->layout_isa, dfg_cpu_layout_isa_needed(block));
        assert_string_equal(plain->layout_isa, "");
        switch (k) {
        case CONV_RELU_CONV: /* x and out plain, read and written in-step */
            assert_int_equal(count_op(p, DFG_OP_REORDER), 0);
            assert_int_equal(layout_of(p, "x"), DFG_LAYOUT_PLAIN);
            assert_int_equal(layout_of(p, "out"), DFG_LAYOUT_PLAIN);
            break;
        case CONV_FLATTEN: /* one reorder back for the flatten */
            assert_int_equal(count_op(p, DFG_OP_REORDER), 1);
            break;
        case MIXED_ADD: /* the broadcast add reads a plain copy */
            assert_int_equal(count_op(p, DFG_OP_REORDER), 1);
            for (int32_t i = 0; i < p->n_steps; i++)
                if (p->steps[i].op == DFG_OP_ADD)
                    for (int32_t j = 0; j < p->steps[i].n_inputs; j++)
                        assert_int_equal(
                            p->tensors[p->steps[i].inputs[j]].type.layout,
                            DFG_LAYOUT_PLAIN);
            break;
        case PER_CHANNEL: /* the mul reads and writes blocked tensors */
            for (int32_t i = 0; i < p->n_steps; i++)
                if (p->steps[i].op == DFG_OP_MUL)
                    assert_int_equal(
                        p->tensors[p->steps[i].outputs[0]].type.layout,
                        block);
            break;
        case POOLS: /* both pools read and write blocked tensors */
            assert_int_equal(count_op(p, DFG_OP_REORDER), 0);
            for (int32_t i = 0; i < p->n_steps; i++)
                if (p->steps[i].op == DFG_OP_MAX_POOL ||
                    p->steps[i].op == DFG_OP_AVERAGE_POOL)
                    assert_int_equal(
                        p->tensors[p->steps[i].outputs[0]].type.layout,
                        block);
            break;
        default: /* the concat's parts and output blocked, no copy */
            assert_int_equal(count_op(p, DFG_OP_REORDER), 0);
            for (int32_t i = 0; i < p->n_steps; i++)
                if (p->steps[i].op == DFG_OP_CONCAT)
                    assert_int_equal(
                        p->tensors[p->steps[i].outputs[0]].type.layout,
                        block);
        }
        int blocked = 0;
        for (int32_t i = 0; i < p->n_tensors; i++)
            blocked += p->tensors[i].type.layout == block;
        assert_true(blocked > 0);
        assert_true(p->region_bytes[0] <= plain->region_bytes[0]);
        expect_same_output(p, plain);
        dfg_program_destroy(p);
        dfg_program_destroy(plain);
        dfg_graph_destroy(g);
    }
}

/* The reference path (--no-onednn) never sees a blocked tensor. */
static void test_no_onednn_stays_plain(void **state)
{
    (void)state;
    for (int k = CONV_RELU_CONV; k <= POOLS; k++) {
        dfg_graph *g = build((shape_case)k);
        dfg_program *p = compile_with(g, 1, 0);
        for (int32_t i = 0; i < p->n_tensors; i++)
            assert_int_equal(p->tensors[i].type.layout, DFG_LAYOUT_PLAIN);
        assert_int_equal(count_op(p, DFG_OP_REORDER), 0);
        assert_string_equal(p->layout_isa, "");
        dfg_program_destroy(p);
        dfg_graph_destroy(g);
    }
}

/* A program compiled for CPU features this CPU lacks: a clear error that
 * names both, at session creation. */
static void test_missing_cpu_features(void **state)
{
    (void)state;
    if (wanted_block() == DFG_LAYOUT_PLAIN)
        skip();
    static const char *const isas[] = {"avx512_core_amx", "avx512_core_bf16",
                                       "avx512_core"};
    const char *lacking = NULL;
    for (size_t i = 0; i < sizeof isas / sizeof isas[0] && !lacking; i++)
        if (dfg_cpu_layout_isa_check(isas[i]) != DFG_OK)
            lacking = isas[i];
    if (!lacking)
        skip(); /* this CPU has them all */
    dfg_graph *g = build(CONV_RELU_CONV);
    dfg_program *p = compile_with(g, 1, 1);
    snprintf(p->layout_isa, sizeof p->layout_isa, "%s", lacking);
    dfg_program *loaded = reloaded(p);
    dfg_session *s = NULL;
    assert_int_equal(dfg_session_create(loaded, cpu(), NULL, &s),
                     DFG_ERR_UNSUPPORTED);
    const char *message = dfg_last_error();
    assert_non_null(strstr(message, lacking));
    assert_non_null(strstr(message, dfg_cpu_layout_isa()));
    dfg_program_destroy(loaded);
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
}

static void expect_refused(const dfg_program *p, const char *what)
{
    uint8_t *data = NULL;
    size_t size = 0;
    assert_int_equal(dfg_program_serialize(p, NULL, &data, &size), DFG_OK);
    dfg_program *loaded = NULL;
    assert_int_equal(dfg_program_load_memory(data, size, NULL, &loaded),
                     DFG_ERR_FORMAT);
    if (!strstr(dfg_last_error(), what))
        fail_msg("expected '%s' in: %s", what, dfg_last_error());
    free(data);
}

/* The loader checks the layouts of an untrusted file. */
static void test_loader_checks_layouts(void **state)
{
    (void)state;
    if (wanted_block() == DFG_LAYOUT_PLAIN)
        skip();
    dfg_graph *g = build(CONV_FLATTEN);
    dfg_program *p = compile_with(g, 1, 1);
    char isa[sizeof p->layout_isa];
    memcpy(isa, p->layout_isa, sizeof isa);
    p->layout_isa[0] = 0; /* blocked tensors, no CPU features */
    expect_refused(p, "CPU features");
    memcpy(p->layout_isa, isa, sizeof isa);
    memcpy(p->layout_isa, "AVX2", 4); /* not a name */
    expect_refused(p, "CPU features are malformed");
    memcpy(p->layout_isa, isa, sizeof isa);
    for (int32_t i = 0; i < p->n_steps; i++) {
        dfg_program_tensor *t = &p->tensors[p->steps[i].outputs[0]];
        if (p->steps[i].op != DFG_OP_REORDER)
            continue;
        /* A flatten reading a blocked tensor. */
        int32_t kept = t->type.layout;
        t->type.layout = DFG_LAYOUT_NCHW8C;
        p->steps[i].attrs.layout = DFG_LAYOUT_NCHW8C;
        expect_refused(p, "must be plain");
        t->type.layout = kept;
        p->steps[i].attrs.layout = kept;
    }
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reorder_kernel),
        cmocka_unit_test(test_assignment),
        cmocka_unit_test(test_no_onednn_stays_plain),
        cmocka_unit_test(test_missing_cpu_features),
        cmocka_unit_test(test_loader_checks_layouts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
