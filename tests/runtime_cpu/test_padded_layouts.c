/* Blocked layouts whose channels do not fill their last block (padded:
 * dfg_layout_channels). Each kernel the CPU backend runs on blocked
 * tensors (the reorder, the per-channel add and mul, max and global
 * average pools, batch norm, an elementwise op, a slice and a concat
 * along the rows)
 * against the same step over plain tensors, on seeded random data with
 * 24, 40, 20 and 3 channels in nChw8c and nChw16c: the logical elements
 * must agree and the padding must stay finite (zero where the kernel
 * writes it). Then the byte sizes, the layout rule's refusals, and
 * programs the layout pass blocks with padding: same outputs as plain,
 * plans verified. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/layout_rule.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu_layout_rule.h"
#include "tests/support/pass_check.h"

#define N 2
#define H 7
#define W 5
#define MAX_C 48 /* the stored channels of the largest case */
#define MAX_ELEMS (N * MAX_C * H * W)

static const int64_t channel_counts[] = {24, 40, 20, 3};
static const int32_t blocks[] = {DFG_LAYOUT_NCHW8C, DFG_LAYOUT_NCHW16C};

/* Runs the kernel the CPU backend picks for the step. */
static dfg_status run_step(int32_t op, const dfg_attrs *attrs, int32_t n_in,
                           const dfg_type *in_types, const void *const *in,
                           const dfg_type *out_type, void *out)
{
    void *outs[1] = {out};
    dfg_kernel_args args = {.op = op, .attrs = attrs, .n_inputs = n_in,
                            .in_types = in_types, .in = in, .n_outputs = 1,
                            .out_types = out_type, .out = outs};
    dfg_cpu_kernel kernel = dfg_cpu_kernel_for_step(&args);
    assert_non_null(kernel);
    return kernel(&args);
}

/* x (of type from) reordered into y of layout `to`, which starts as NaN
 * everywhere so that an element the reorder leaves unwritten shows. */
static dfg_type reorder(const dfg_type *from, const float *x, int32_t to,
                        float *y)
{
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.layout = to;
    dfg_type out = *from;
    out.layout = to;
    for (int64_t i = 0; i < dfg_type_numel(&out); i++)
        y[i] = NAN;
    const void *in[1] = {x};
    OK(run_step(DFG_OP_REORDER, &attrs, 1, from, in, &out, y));
    return out;
}

/* Every stored element of a blocked t past its channels: finite, and
 * zero where zero is asked. */
static void check_padding(const dfg_type *t, const float *y, int zero)
{
    int64_t b = dfg_layout_block(t->layout), cs = dfg_layout_channels(t);
    for (int64_t n = 0; n < t->shape[0]; n++)
        for (int64_t c = t->shape[1]; c < cs; c++)
            for (int64_t h = 0; h < t->shape[2]; h++)
                for (int64_t w = 0; w < t->shape[3]; w++) {
                    float v = y[dfg_layout_index(b, cs, t->shape[2],
                                                 t->shape[3], n, c, h, w)];
                    assert_true(isfinite(v));
                    if (zero)
                        assert_true(v == 0.0f);
                }
}

static void test_sizes(void **state)
{
    (void)state;
    dfg_type t = {DFG_F32, 4, {2, 24, 3, 5}, DFG_LAYOUT_NCHW16C};
    assert_int_equal(dfg_layout_channels(&t), 32);
    assert_int_equal(dfg_type_bytes(&t), 2 * 32 * 3 * 5 * 4);
    t.layout = DFG_LAYOUT_NCHW8C;
    assert_int_equal(dfg_type_bytes(&t), 2 * 24 * 3 * 5 * 4);
    t.layout = DFG_LAYOUT_PLAIN;
    assert_int_equal(dfg_type_bytes(&t), 2 * 24 * 3 * 5 * 4);
    dfg_type three = {DFG_F32, 4, {1, 3, 2, 2}, DFG_LAYOUT_NCHW16C};
    assert_int_equal(dfg_type_numel(&three), 16 * 4);
    /* padding that costs little: 24 of 32, 40 of 48; not 20 of 32, 3 */
    t.layout = DFG_LAYOUT_PLAIN;
    assert_true(dfg_layout_pads_cheaply(&t, DFG_LAYOUT_NCHW16C));
    assert_false(dfg_layout_fills(&t, DFG_LAYOUT_NCHW16C));
    assert_true(dfg_layout_fills(&t, DFG_LAYOUT_NCHW8C));
    t.shape[1] = 20;
    assert_false(dfg_layout_pads_cheaply(&t, DFG_LAYOUT_NCHW16C));
    assert_false(dfg_layout_pads_cheaply(&three, DFG_LAYOUT_NCHW16C));
}

/* Plain -> blocked -> plain gives x back, the padding zero; blocked of
 * one block -> the other agrees with the direct reorder. */
static void test_reorder(void **state)
{
    (void)state;
    static float x[MAX_ELEMS], b1[MAX_ELEMS], b2[MAX_ELEMS], back[MAX_ELEMS];
    rng_state = 3;
    for (size_t ci = 0; ci < 4; ci++)
        for (size_t li = 0; li < 2; li++) {
            dfg_type plain = {DFG_F32, 4, {N, channel_counts[ci], H, W}, 0};
            int64_t n = dfg_type_numel(&plain);
            fill_random(x, n);
            dfg_type blocked = reorder(&plain, x, blocks[li], b1);
            check_padding(&blocked, b1, 1);
            reorder(&blocked, b1, DFG_LAYOUT_PLAIN, back);
            assert_memory_equal(back, x, (size_t)n * sizeof *x);
            dfg_type other = reorder(&blocked, b1, blocks[1 - li], b2);
            check_padding(&other, b2, 1);
            reorder(&other, b2, DFG_LAYOUT_PLAIN, back);
            assert_memory_equal(back, x, (size_t)n * sizeof *x);
        }
}

/* One step run over plain operands and over the same operands blocked
 * with padding: the blocked output, reordered to plain, must match the
 * plain one within rel (0: bit for bit), and its padding stay finite
 * (zero when zero_padding). */
typedef struct step_case {
    int32_t op;
    dfg_attrs attrs;
    int32_t n_in;
    dfg_type in[5]; /* plain; the first (and the second where blocked_2)
                       blocked */
    int blocked_2;
    dfg_type out;
    int zero_padding;
    double rel;
} step_case;

static void run_case(const step_case *k, int32_t layout)
{
    static float data[5][MAX_ELEMS], blocked[2][MAX_ELEMS];
    static float plain_y[MAX_ELEMS], blocked_y[MAX_ELEMS], back[MAX_ELEMS];
    const void *in[5];
    dfg_type types[5];
    for (int32_t i = 0; i < k->n_in; i++) {
        int64_t n = dfg_type_numel(&k->in[i]);
        fill_random(data[i], n);
        if (k->op == DFG_OP_BATCH_NORM && i == 4) /* a variance */
            for (int64_t j = 0; j < n; j++)
                data[i][j] = fabsf(data[i][j]) + 0.5f;
        in[i] = data[i];
        types[i] = k->in[i];
    }
    OK(run_step(k->op, &k->attrs, k->n_in, types, in, &k->out, plain_y));
    for (int32_t i = 0; i < 1 + k->blocked_2; i++) {
        types[i] = reorder(&k->in[i], data[i], layout, blocked[i]);
        in[i] = blocked[i];
    }
    dfg_type out = k->out;
    out.layout = layout;
    for (int64_t i = 0; i < dfg_type_numel(&out); i++)
        blocked_y[i] = NAN;
    OK(run_step(k->op, &k->attrs, k->n_in, types, in, &out, blocked_y));
    check_padding(&out, blocked_y, k->zero_padding);
    reorder(&out, blocked_y, DFG_LAYOUT_PLAIN, back);
    int64_t n = dfg_type_numel(&k->out);
    if (k->rel == 0.0) {
        assert_memory_equal(back, plain_y, (size_t)n * sizeof *back);
        return;
    }
    static double ref[MAX_ELEMS];
    for (int64_t i = 0; i < n; i++)
        ref[i] = plain_y[i];
    assert_true(relative_error(back, ref, n) <= k->rel);
}

static void test_kernels(void **state)
{
    (void)state;
    rng_state = 17;
    for (size_t ci = 0; ci < 4; ci++)
        for (size_t li = 0; li < 2; li++) {
            int64_t c = channel_counts[ci];
            dfg_type x = {DFG_F32, 4, {N, c, H, W}, 0};
            dfg_type scale = {DFG_F32, 4, {N, c, 1, 1}, 0};
            dfg_type stat = {DFG_F32, 1, {c}, 0};
            step_case k = {.op = DFG_OP_MUL, .n_in = 2, .in = {x, scale},
                           .blocked_2 = 1, .out = x};
            dfg_attrs_init(&k.attrs);
            /* per-channel mul and add, both orders */
            run_case(&k, blocks[li]);
            k.op = DFG_OP_ADD;
            run_case(&k, blocks[li]);
            k.in[0] = scale;
            k.in[1] = x;
            run_case(&k, blocks[li]);
            /* an elementwise op: the padding of its output stays finite */
            k = (step_case){.op = DFG_OP_SIGMOID, .n_in = 1, .in = {x},
                            .out = x};
            dfg_attrs_init(&k.attrs);
            run_case(&k, blocks[li]);
            /* max pool 3x3, stride 2, pad 1: zero padding pools to zero */
            dfg_type pooled = {DFG_F32, 4, {N, c, 4, 3}, 0};
            k = (step_case){.op = DFG_OP_MAX_POOL, .n_in = 1, .in = {x},
                            .out = pooled, .zero_padding = 1};
            dfg_attrs_init(&k.attrs);
            k.attrs.kernel[0] = k.attrs.kernel[1] = 3;
            k.attrs.strides[0] = k.attrs.strides[1] = 2;
            k.attrs.dilations[0] = k.attrs.dilations[1] = 1;
            for (int i = 0; i < 4; i++)
                k.attrs.pads[i] = 1;
            run_case(&k, blocks[li]);
            /* global average pool */
            k = (step_case){.op = DFG_OP_GLOBAL_AVERAGE_POOL, .n_in = 1,
                            .in = {x}, .out = scale, .zero_padding = 1,
                            .rel = 1e-6};
            dfg_attrs_init(&k.attrs);
            run_case(&k, blocks[li]);
            /* batch norm with its statistics plain: padding to zero */
            k = (step_case){.op = DFG_OP_BATCH_NORM, .n_in = 5,
                            .in = {x, stat, stat, stat, stat}, .out = x,
                            .zero_padding = 1, .rel = 1e-6};
            dfg_attrs_init(&k.attrs);
            k.attrs.epsilon = 1e-5f;
            run_case(&k, blocks[li]);
            /* rows 2..5 of every channel block (tiled execution's band) */
            dfg_type rows = {DFG_F32, 4, {N, c, 3, W}, 0};
            k = (step_case){.op = DFG_OP_SLICE, .n_in = 1, .in = {x},
                            .out = rows, .zero_padding = 1};
            dfg_attrs_init(&k.attrs);
            k.attrs.n_axes = 1;
            k.attrs.axes[0] = 2;
            k.attrs.starts[0] = 2;
            k.attrs.ends[0] = 5;
            k.attrs.steps[0] = 1;
            run_case(&k, blocks[li]);
            /* those rows joined again with the rest (a band join) */
            dfg_type rest = {DFG_F32, 4, {N, c, H - 3, W}, 0};
            k = (step_case){.op = DFG_OP_CONCAT, .n_in = 2,
                            .in = {rows, rest}, .blocked_2 = 1, .out = x,
                            .zero_padding = 1};
            dfg_attrs_init(&k.attrs);
            k.attrs.axis = 2;
            run_case(&k, blocks[li]);
        }
}

/* The rule a loaded program is checked against: a padded concat along
 * the channels and a padded op that could make its padding infinite are
 * refused, a padded sigmoid, pool and reorder taken. */
static void test_rule(void **state)
{
    (void)state;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    dfg_type pad = {DFG_F32, 4, {1, 24, 4, 4}, DFG_LAYOUT_NCHW16C};
    dfg_type whole = {DFG_F32, 4, {1, 32, 4, 4}, DFG_LAYOUT_NCHW16C};
    dfg_type sum = {DFG_F32, 4, {1, 48, 4, 4}, DFG_LAYOUT_NCHW16C};
    OK(dfg_layout_check(DFG_OP_SIGMOID, &attrs, &pad, 1, &pad, 1));
    OK(dfg_layout_check(DFG_OP_MAX_POOL, &attrs, &pad, 1, &pad, 1));
    assert_int_not_equal(
        dfg_layout_check(DFG_OP_LOG, &attrs, &pad, 1, &pad, 1), DFG_OK);
    assert_int_not_equal(
        dfg_layout_check(DFG_OP_RECIPROCAL, &attrs, &pad, 1, &pad, 1),
        DFG_OK);
    dfg_type two[2] = {pad, pad}, parts[2] = {pad, pad};
    assert_int_not_equal(
        dfg_layout_check(DFG_OP_DIV, &attrs, two, 2, &pad, 1), DFG_OK);
    attrs.axis = 1;
    parts[0] = pad;
    parts[1] = pad;
    assert_int_not_equal(
        dfg_layout_check(DFG_OP_CONCAT, &attrs, parts, 2, &sum, 1), DFG_OK);
    parts[0] = whole;
    parts[1] = (dfg_type){DFG_F32, 4, {1, 16, 4, 4}, DFG_LAYOUT_NCHW16C};
    OK(dfg_layout_check(DFG_OP_CONCAT, &attrs, parts, 2, &sum, 1));
    dfg_type plain = pad;
    plain.layout = DFG_LAYOUT_PLAIN;
    attrs.layout = DFG_LAYOUT_NCHW16C;
    OK(dfg_layout_check(DFG_OP_REORDER, &attrs, &plain, 1, &pad, 1));
}

/* A mobile block of 24-channel activations between wider ones: a 1x1
 * expand to 96 with relu, a depthwise 3x3 with silu, a squeeze-excite
 * scale, two 1x1 96 -> 96, a 1x1 project to 24 and a residual add, twice,
 * then a 1x1 expand and a global average pool. Most of the conv work fills 16 lanes, as
 * in efficientnet_b0. */
static dfg_value conv(dfg_graph *g, dfg_value x, const char *name,
                      int64_t k, int64_t c, int64_t size, int32_t group)
{
    dfg_value w = random_leaf(g, name, 0, 4, DIMS(k, c, size, size)), y;
    dfg_conv2d_params params = {{1, 1}, {1, 1},
                                {size / 2, size / 2, size / 2, size / 2},
                                group};
    OK(dfg_conv2d(g, x, w, DFG_NO_VALUE, &params, &y));
    return y;
}

static dfg_graph *mobile_block(void)
{
    dfg_graph *g = NULL;
    OK(dfg_graph_create(NULL, &g));
    dfg_value v = input(g, "x", 4, DIMS(1, 24, 14, 14));
    static const char *names[2][6] = {{"e0", "d0", "s0", "m0", "n0", "p0"},
                                      {"e1", "d1", "s1", "m1", "n1", "p1"}};
    for (int i = 0; i < 2; i++) {
        dfg_value e, s, d, se, sr, p, m, r;
        OK(dfg_relu(g, conv(g, v, names[i][0], 96, 24, 1, 1), &e));
        d = conv(g, e, names[i][1], 96, 1, 3, 96);
        OK(dfg_sigmoid(g, d, &s));
        OK(dfg_mul(g, d, s, &d)); /* silu */
        OK(dfg_global_average_pool(g, d, &se));
        OK(dfg_sigmoid(g, conv(g, se, names[i][2], 96, 96, 1, 1), &sr));
        OK(dfg_mul(g, d, sr, &p));
        OK(dfg_relu(g, conv(g, p, names[i][3], 96, 96, 1, 1), &m));
        OK(dfg_relu(g, conv(g, m, names[i][4], 96, 96, 1, 1), &m));
        OK(dfg_add(g, conv(g, m, names[i][5], 24, 96, 1, 1), v, &r));
        v = r;
    }
    dfg_value head, out; /* a graph output stays plain, and its group */
    OK(dfg_relu(g, conv(g, v, "head", 96, 24, 1, 1), &head));
    OK(dfg_global_average_pool(g, head, &out));
    OK(dfg_graph_output(g, out, "y"));
    return g;
}

/* The layout pass pads only where this CPU's widest block (nChw16c on
 * AVX-512) would leave convs to nChw8c; a padded program stores its
 * blocked tensors padded, passes the plan verifier (check_program) and
 * computes what the plain program does. */
static void test_padded_program(void **state)
{
    (void)state;
    rng_state = 29;
    dfg_graph *g = mobile_block();
    dfg_program *blocked = compile_fusing(g, 1, 1);
    dfg_program *plain = compile_fusing(g, 1, 0);
    int32_t layouts[2];
    int32_t n_layouts = dfg_cpu_blocked_layouts(layouts);
    int padded = 0;
    for (int32_t t = 0; t < blocked->n_tensors; t++) {
        const dfg_program_tensor *pt = &blocked->tensors[t];
        if (pt->type.layout == DFG_LAYOUT_PLAIN || pt->type.rank != 4)
            continue;
        assert_true(pt->bytes >= dfg_type_bytes(&pt->type));
        if (!dfg_layout_fills(&pt->type, pt->type.layout)) {
            padded++;
            /* only the widest block pads, and only where it is not 8c */
            assert_int_equal(pt->type.layout, layouts[0]);
            assert_true(n_layouts > 1);
            assert_true(dfg_layout_pads_cheaply(&pt->type,
                                                pt->type.layout));
        }
    }
    if (n_layouts > 1)
        assert_true(padded > 0);
    static float xin[24 * 14 * 14];
    fill_random(xin, 24 * 14 * 14);
    const void *inputs[1] = {xin};
    float *got = NULL, *want = NULL;
    run_program(blocked, inputs, &got);
    run_program(plain, inputs, &want);
    double ref[96];
    for (int i = 0; i < 96; i++)
        ref[i] = want[i];
    assert_true(relative_error(got, ref, 96) <= 1e-5);
    free(got);
    free(want);
    dfg_program_destroy(blocked);
    dfg_program_destroy(plain);
    dfg_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_reorder),
        cmocka_unit_test(test_kernels),
        cmocka_unit_test(test_rule),
        cmocka_unit_test(test_padded_program),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
