/* The fusion passes (passes/fusion/fuse_*.c; the transposes'
 * in test_fuse_transposes.c): each pattern, compiled fused and
 * unfused (fuse_operators = 0), gives the same output on random data on
 * every path a fused conv can take: oneDNN post-ops (a mapped program),
 * and the reference kernels (a program compiled without the CPU rule),
 * with the residual planned over the output or copied into it. A pattern
 * whose intermediate has another reader, or is a graph output, is left
 * alone. Every program is verified by dfg_compile. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dfg/dfg.h"
#include "tests/runtime_cpu/dnnl_check.h"
#include "tests/support/random_data.h"

#define C 16
#define H 10
#define W 10
#define N_ELEMS (C * H * W)

/* What a test builds after x (input), r (input of the conv's output
 * shape) and y = conv2d(x): the pattern's result, and any extra output. */
typedef dfg_value (*pattern_fn)(dfg_graph *g, dfg_value x, dfg_value r,
                                dfg_value y);

static dfg_value scalar(dfg_graph *g, float value)
{
    static int count;
    char name[32];
    snprintf(name, sizeof name, "k%d", count++);
    dfg_value out;
    assert_int_equal(dfg_graph_constant(g, name, DFG_F32, 0, NULL, &value,
                                        &out), DFG_OK);
    return out;
}

/* clip(y * a + b, 0, 1), as the ONNX importer writes HardSigmoid. */
static dfg_value hardsigmoid(dfg_graph *g, dfg_value y, float a, float b)
{
    dfg_attrs clip;
    dfg_attrs_init(&clip);
    clip.clip_min = 0.0f;
    clip.clip_max = 1.0f;
    dfg_value t = node2(g, "mul", y, scalar(g, a));
    t = node2(g, "add", t, scalar(g, b));
    return node1(g, "clip", t, &clip);
}

static dfg_value p_relu(dfg_graph *g, dfg_value x, dfg_value r, dfg_value y)
{
    (void)x, (void)r;
    return node1(g, "relu", y, NULL);
}

/* relu between two reshapes of the conv's output: the reshape moves
 * below it (passes/fusion/sink_transposes.c) and the conv takes it. */
static dfg_value p_reshaped_relu(dfg_graph *g, dfg_value x, dfg_value r,
                                 dfg_value y)
{
    (void)x, (void)r;
    const int64_t flat[3] = {1, C, H * W}, back[4] = {1, C, H, W};
    dfg_attrs a, b;
    dfg_attrs_init(&a);
    dfg_attrs_init(&b);
    a.n_shape = 3;
    memcpy(a.shape, flat, sizeof flat);
    b.n_shape = 4;
    memcpy(b.shape, back, sizeof back);
    return node1(g, "reshape", node1(g, "relu", node1(g, "reshape", y, &a), NULL),
                 &b);
}

/* relu between an unsqueeze and a squeeze, as a 1-D conv's activation
 * follows the squeeze of the 2-D conv the importer runs it as. */
static dfg_value p_squeezed_relu(dfg_graph *g, dfg_value x, dfg_value r,
                                 dfg_value y)
{
    (void)x, (void)r;
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.n_axes = 1;
    a.axes[0] = 0;
    return node1(g, "squeeze", node1(g, "relu", node1(g, "unsqueeze", y, &a),
                                     NULL), &a);
}

static dfg_value p_relu6(dfg_graph *g, dfg_value x, dfg_value r, dfg_value y)
{
    (void)x, (void)r;
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.clip_min = 0.0f;
    a.clip_max = 0.3f; /* inside the data's range */
    return node1(g, "clip", y, &a);
}

static dfg_value p_sigmoid(dfg_graph *g, dfg_value x, dfg_value r, dfg_value y)
{
    (void)x, (void)r;
    return node1(g, "sigmoid", y, NULL);
}

static dfg_value p_tanh(dfg_graph *g, dfg_value x, dfg_value r, dfg_value y)
{
    (void)x, (void)r;
    return node1(g, "tanh", y, NULL);
}

static dfg_value p_hardsigmoid(dfg_graph *g, dfg_value x, dfg_value r,
                               dfg_value y)
{
    (void)x, (void)r;
    return hardsigmoid(g, y, 0.2f, 0.5f);
}

static dfg_value p_hardswish(dfg_graph *g, dfg_value x, dfg_value r,
                             dfg_value y)
{
    (void)x, (void)r;
    return node2(g, "mul", y, hardsigmoid(g, y, 1.0f / 6.0f, 0.5f));
}

static dfg_value p_silu(dfg_graph *g, dfg_value x, dfg_value r, dfg_value y)
{
    (void)x, (void)r;
    return node2(g, "mul", node1(g, "sigmoid", y, NULL), y);
}

static dfg_value p_gelu(dfg_graph *g, dfg_value x, dfg_value r, dfg_value y)
{
    (void)x, (void)r;
    return node1(g, "gelu", y, NULL);
}

static dfg_value p_add_relu(dfg_graph *g, dfg_value x, dfg_value r, dfg_value y)
{
    (void)x;
    return node1(g, "relu", node2(g, "add", r, y), NULL);
}

/* The residual is read again after the add: it cannot take the conv's
 * output, which is copied into instead. */
static dfg_value p_add_kept(dfg_graph *g, dfg_value x, dfg_value r, dfg_value y)
{
    (void)x;
    dfg_value sum = node1(g, "sigmoid", node2(g, "add", y, r), NULL);
    return node2(g, "mul", sum, r);
}

/* The residual is made by an op and dies at the add: the fused conv's
 * output is planned over it. */
static dfg_value p_add_dying(dfg_graph *g, dfg_value x, dfg_value r, dfg_value y)
{
    (void)x;
    return node2(g, "add", y, node1(g, "tanh", r, NULL));
}

/* The residual is the conv's own input, dying at the add: the output
 * must not be planned over it, which the conv still reads. */
static dfg_value p_add_input(dfg_graph *g, dfg_value x, dfg_value r,
                             dfg_value y)
{
    (void)r;
    return node2(g, "add", x, y);
}

/* Not fused: y has a second reader (y + relu(y)). */
static dfg_value p_second_reader(dfg_graph *g, dfg_value x, dfg_value r,
                                 dfg_value y)
{
    (void)x, (void)r;
    return node2(g, "add", node1(g, "relu", y, NULL), y);
}

/* Not fused: the gate of y * sigmoid(y) is also read elsewhere. */
static dfg_value p_gate_read(dfg_graph *g, dfg_value x, dfg_value r,
                             dfg_value y)
{
    (void)x, (void)r;
    dfg_value s = node1(g, "sigmoid", y, NULL);
    return node2(g, "add", node2(g, "mul", y, s), s);
}

typedef struct fuse_case {
    const char *what;
    pattern_fn pattern;
    int32_t group;       /* 1, or C: depthwise */
    int no_bias;         /* 1: the conv has no bias; 2: its input is
                            tanh(x), an activation that may die at it */
    const char *label;   /* the fused conv step's op, NULL: nothing fused */
    int y_is_output;     /* also make the conv's output a graph output */
} fuse_case;

static dfg_graph *build(const fuse_case *k, const float *w, const float *b)
{
    dfg_graph *g = NULL;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    int64_t shape[4] = {1, C, H, W};
    int64_t w_shape[4] = {C, C / k->group, 3, 3}, b_shape[1] = {C};
    dfg_value x, r, wv, bv = DFG_NO_VALUE, y;
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 4, shape, &x), DFG_OK);
    assert_int_equal(dfg_graph_input(g, "r", DFG_F32, 4, shape, &r), DFG_OK);
    assert_int_equal(dfg_graph_weight(g, "w", DFG_F32, 4, w_shape, w, &wv),
                     DFG_OK);
    if (k->no_bias == 2)
        x = node1(g, "tanh", x, NULL);
    if (k->no_bias != 1)
        assert_int_equal(dfg_graph_weight(g, "b", DFG_F32, 1, b_shape, b,
                                          &bv), DFG_OK);
    dfg_conv2d_params params = {{1, 1}, {1, 1}, {1, 1, 1, 1}, k->group};
    assert_int_equal(dfg_conv2d(g, x, wv, bv, &params, &y), DFG_OK);
    dfg_value out = k->pattern(g, x, r, y);
    assert_int_equal(dfg_graph_output(g, out, "out"), DFG_OK);
    if (k->y_is_output)
        assert_int_equal(dfg_graph_output(g, y, "y"), DFG_OK);
    return g;
}

/* A lone conv is its program's peak, where its workspace would shrink
 * below oneDNN's (passes/workspace_fit.c) unless alignment rounds the
 * least and the full one to the same bytes. */
static dfg_program *compile(const dfg_graph *g, enum fuse_path how)
{
    return compiled_for(g, how, (uint64_t)1 << 17);
}

/* Runs p on x (and r, if p has two inputs) into out (and a scratch buffer
 * for a second output). */
static void run(const dfg_program *p, const float *x, const float *r,
                float *out)
{
    static float y[N_ELEMS];
    run_program(p, (const void *[]){x, r}, (void *[]){out, y});
}

/* The label of the program's conv2d step (the first one). */
static const char *conv_label(const dfg_program *p)
{
    for (int32_t i = 0; i < num_steps(p); i++) {
        dfg_step_info info;
        assert_int_equal(dfg_program_step_info(p, i, &info), DFG_OK);
        if (strncmp(info.op, "conv2d", 6) == 0)
            return info.op;
    }
    fail_msg("no conv2d step");
    return NULL;
}

static void check(const fuse_case *k)
{
    static float w[C * C * 9], b[C], x[N_ELEMS], r[N_ELEMS];
    random_fill(w, C * (C / k->group) * 9, 0.3f);
    random_fill(b, C, 0.5f);
    random_fill(x, N_ELEMS, 1.0f);
    random_fill(r, N_ELEMS, 1.0f);
    dfg_graph *g = build(k, w, b);
    float want[N_ELEMS], got[N_ELEMS];
    dfg_program *unfused = compile(g, UNFUSED);
    run(unfused, x, r, want);
    assert_string_equal(conv_label(unfused), "conv2d");
    for (int how = FUSED_ONEDNN; how <= FUSED_REFERENCE; how++) {
        dfg_program *p = compile(g, how);
        const char *label = conv_label(p);
        if (strcmp(label, k->label ? k->label : "conv2d") != 0)
            fail_msg("%s: the conv step is %s", k->what, label);
        if (k->label)
            assert_true(num_steps(p) <
                        num_steps(unfused));
        else
            assert_int_equal(num_steps(p),
                             num_steps(unfused));
        run(p, x, r, got);
        double err = relative_error(got, want, N_ELEMS);
        if (!(err < 1e-5))
            fail_msg("%s (%s): fused vs unfused relative error %g", k->what,
                     how == FUSED_ONEDNN ? "oneDNN" : "reference", err);
        dfg_program_destroy(p);
    }
    dfg_program_destroy(unfused);
    dfg_graph_destroy(g);
}

static void test_conv_post_ops(void **state)
{
    (void)state;
    static const fuse_case cases[] = {
        {"relu", p_relu, 1, 0, "conv2d+relu", 0},
        {"relu after a reshape", p_reshaped_relu, 1, 0, "conv2d+relu", 0},
        {"relu after an unsqueeze", p_squeezed_relu, 1, 0, "conv2d+relu", 0},
        {"clip", p_relu6, 1, 0, "conv2d+clip", 0},
        {"sigmoid", p_sigmoid, 1, 0, "conv2d+sigmoid", 0},
        {"tanh", p_tanh, 1, 0, "conv2d+tanh", 0},
        {"depthwise tanh", p_tanh, C, 0, "conv2d+tanh", 0},
        {"hardsigmoid", p_hardsigmoid, 1, 0, "conv2d+hardsigmoid", 0},
        {"hardswish", p_hardswish, 1, 0, "conv2d+hardswish", 0},
        {"silu", p_silu, 1, 0, "conv2d+silu", 0},
        {"gelu", p_gelu, 1, 0, "conv2d+gelu", 0},
        {"residual add, relu", p_add_relu, 1, 0, "conv2d+add+relu", 0},
        {"residual read later", p_add_kept, 1, 0, "conv2d+add+sigmoid", 0},
        {"residual dying", p_add_dying, 1, 0, "conv2d+add", 0},
        {"depthwise, residual add, relu", p_add_relu, C, 0, "conv2d+add+relu", 0},
        {"depthwise silu", p_silu, C, 0, "conv2d+silu", 0},
        {"residual add, no bias", p_add_relu, 1, 1, "conv2d+add+relu", 0},
        {"depthwise residual add, no bias", p_add_dying, C, 1, "conv2d+add", 0},
        {"residual is the conv's input", p_add_input, 1, 2, "conv2d+add", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check(&cases[i]);
}

static void test_not_fused(void **state)
{
    (void)state;
    static const fuse_case cases[] = {
        {"conv output read twice", p_second_reader, 1, 0, NULL, 0},
        {"conv output is a graph output", p_relu, 1, 0, NULL, 1},
        {"sigmoid gate read twice", p_gate_read, 1, 0, NULL, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check(&cases[i]);
}

#define ROWS 6
#define HIDDEN 24

/* x [2, 3, HIDDEN] -> pattern -> out; a second output when extra. */
typedef dfg_value (*row_pattern_fn)(dfg_graph *g, dfg_value x, int variant);

static dfg_value mean_last(dfg_graph *g, dfg_value v)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.n_axes = 1;
    a.axes[0] = -1;
    return node1(g, "reduce_mean", v, &a);
}

/* variant 1: the variance also an output (not fused) */
static dfg_value p_layer_norm(dfg_graph *g, dfg_value x, int variant)
{
    static float scale[HIDDEN], shift[HIDDEN];
    random_fill(scale, HIDDEN, 1.0f);
    random_fill(shift, HIDDEN, 1.0f);
    int64_t shape[1] = {HIDDEN};
    dfg_value gamma, beta;
    assert_int_equal(dfg_graph_weight(g, "gamma", DFG_F32, 1, shape, scale,
                                      &gamma), DFG_OK);
    assert_int_equal(dfg_graph_weight(g, "beta", DFG_F32, 1, shape, shift,
                                      &beta), DFG_OK);
    dfg_value d = node2(g, "sub", x, mean_last(g, x));
    dfg_value var = mean_last(g, node2(g, "pow", d, scalar(g, 2.0f)));
    if (variant == 1)
        assert_int_equal(dfg_graph_output(g, var, "var"), DFG_OK);
    dfg_value den = node1(g, "sqrt", node2(g, "add", var, scalar(g, 1e-5f)),
                          NULL);
    dfg_value y = node2(g, "mul", node2(g, "div", d, den), gamma);
    return node2(g, "add", beta, y);
}

/* variant 0: x * (erf(x / sqrt 2) + 1) * 0.5; 1: (x * 0.5) * (erf(x *
 * (1 / sqrt 2)) + 1); 2: as 0 with erf's result also an output. */
static dfg_value p_gelu_erf(dfg_graph *g, dfg_value x, int variant)
{
    dfg_value scaled = variant == 1
                           ? node2(g, "mul", scalar(g, 0.70710678f), x)
                           : node2(g, "div", x, scalar(g, 1.41421356f));
    dfg_value e = node1(g, "erf", scaled, NULL);
    if (variant == 2)
        assert_int_equal(dfg_graph_output(g, e, "erf"), DFG_OK);
    dfg_value gate = node2(g, "add", e, scalar(g, 1.0f));
    if (variant == 1)
        return node2(g, "mul", node2(g, "mul", x, scalar(g, 0.5f)), gate);
    return node2(g, "mul", node2(g, "mul", x, gate), scalar(g, 0.5f));
}

/* variant 0: 0.5 * (x * (1 + tanh(k * (x + 0.044715 * pow(x, 3))))) as
 * PyTorch exports it; 1: x * x * x, x * 0.5 first; 2: as 1 with the
 * cube also an output. */
static dfg_value p_gelu_tanh(dfg_graph *g, dfg_value x, int variant)
{
    dfg_value cube =
        variant == 0 ? node2(g, "pow", x, scalar(g, 3.0f))
                     : node2(g, "mul", x, node2(g, "mul", x, x));
    if (variant == 2)
        assert_int_equal(dfg_graph_output(g, cube, "cube"), DFG_OK);
    dfg_value inner = node2(g, "add", x,
                            node2(g, "mul", scalar(g, 0.044715f), cube));
    dfg_value t = node1(g, "tanh",
                        node2(g, "mul", scalar(g, 0.7978845608f), inner),
                        NULL);
    dfg_value gate = node2(g, "add", scalar(g, 1.0f), t);
    if (variant == 0)
        return node2(g, "mul", scalar(g, 0.5f), node2(g, "mul", x, gate));
    return node2(g, "mul", node2(g, "mul", x, scalar(g, 0.5f)), gate);
}

/* variant 0: x * sigmoid(x); 1: as 0, the gate also an output. */
static dfg_value p_silu_rows(dfg_graph *g, dfg_value x, int variant)
{
    dfg_value s = node1(g, "sigmoid", x, NULL);
    if (variant == 1)
        assert_int_equal(dfg_graph_output(g, s, "gate"), DFG_OK);
    return node2(g, "mul", x, s);
}

/* variant 0: hardsigmoid(x) * x as ONNX's HardSwish imports; 1: another
 * slope (not fused); 2: as 0, the gate also an output (not fused). */
static dfg_value p_hardswish_rows(dfg_graph *g, dfg_value x, int variant)
{
    dfg_value gate = hardsigmoid(g, x, variant == 1 ? 0.2f : 1.0f / 6.0f,
                                 0.5f);
    if (variant == 2)
        assert_int_equal(dfg_graph_output(g, gate, "gate"), DFG_OK);
    return node2(g, "mul", gate, x);
}

/* The pattern fused into one step of op `fused` (or not, when
 * !expect_fused), with the same output either way. */
static void check_rows(row_pattern_fn pattern, int variant, const char *fused,
                       int expect_fused)
{
    dfg_graph *g = NULL;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    int64_t shape[3] = {2, ROWS / 2, HIDDEN};
    dfg_value x;
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 3, shape, &x), DFG_OK);
    assert_int_equal(dfg_graph_output(g, pattern(g, x, variant), "out"),
                     DFG_OK);
    static float input[ROWS * HIDDEN], want[ROWS * HIDDEN], got[ROWS * HIDDEN];
    random_fill(input, ROWS * HIDDEN, 2.0f);
    dfg_program *unfused = compile(g, UNFUSED);
    dfg_program *p = compile(g, FUSED_REFERENCE);
    run(unfused, input, NULL, want);
    run(p, input, NULL, got);
    double err = relative_error(got, want, ROWS * HIDDEN);
    if (!(err < 1e-5))
        fail_msg("%s %d: fused vs unfused relative error %g", fused, variant,
                 err);
    int32_t n_fused = 0;
    for (int32_t i = 0; i < num_steps(p); i++) {
        dfg_step_info info;
        assert_int_equal(dfg_program_step_info(p, i, &info), DFG_OK);
        n_fused += strcmp(info.op, fused) == 0;
    }
    if (expect_fused)
        assert_true(num_steps(p) == 1 && n_fused == 1);
    else
        assert_true(num_steps(p) == num_steps(unfused) && n_fused == 0);
    dfg_program_destroy(p);
    dfg_program_destroy(unfused);
    dfg_graph_destroy(g);
}

static void test_layer_norm_and_gelu(void **state)
{
    (void)state;
    check_rows(p_layer_norm, 0, "layer_norm", 1);
    check_rows(p_layer_norm, 1, "layer_norm", 0);
    for (int variant = 0; variant < 3; variant++) {
        check_rows(p_gelu_erf, variant, "gelu", variant < 2);
        check_rows(p_gelu_tanh, variant, "gelu", variant < 2);
        check_rows(p_hardswish_rows, variant, "hardswish", variant == 0);
    }
    check_rows(p_silu_rows, 0, "silu", 1);
    check_rows(p_silu_rows, 1, "silu", 0);
}

/* The silu and hardswish kernels against double precision, f32 and
 * bf16 (stored narrow, computed in f32), written in place. */
static void test_silu_hardswish_kernels(void **state)
{
    (void)state;
    static const char *const ops[] = {"silu", "hardswish"};
    for (int k = 0; k < 2; k++)
        for (int bf16 = 0; bf16 < 2; bf16++) {
            dfg_graph *g = NULL;
            assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
            int64_t shape[1] = {4099};
            dfg_dtype dtype = bf16 ? DFG_BF16 : DFG_F32;
            dfg_value x, t, y;
            assert_int_equal(dfg_graph_input(g, "x", dtype, 1, shape, &x),
                             DFG_OK);
            t = node1(g, "neg", x, NULL); /* an activation, dying below */
            y = node1(g, ops[k], t, NULL);
            assert_int_equal(dfg_graph_output(g, y, "y"), DFG_OK);
            static float xf[4099], got[4099];
            static uint16_t xb[4099], yb[4099];
            random_fill(xf, 4099, 8.0f);
            for (int i = 0; i < 4099; i++) {
                uint32_t bits;
                memcpy(&bits, &xf[i], 4);
                xb[i] = (uint16_t)(bits >> 16); /* truncated: exact bf16 */
                bits = (uint32_t)xb[i] << 16;
                memcpy(&xf[i], &bits, 4);
            }
            dfg_program *p = compile(g, FUSED_REFERENCE);
            run(p, bf16 ? (const float *)xb : xf, NULL,
                bf16 ? (float *)yb : got);
            double num = 0, den = 0;
            for (int i = 0; i < 4099; i++) {
                double v = -(double)xf[i];
                double want = k == 0 ? v / (1.0 + exp(-v))
                                     : v * fmin(fmax(v / 6.0 + 0.5, 0.0), 1.0);
                double have = got[i];
                if (bf16) {
                    uint32_t bits = (uint32_t)yb[i] << 16;
                    float f;
                    memcpy(&f, &bits, 4);
                    have = f;
                }
                num += (have - want) * (have - want);
                den += want * want;
            }
            double err = sqrt(num / den);
            if (!(err < (bf16 ? 1e-2 : 1e-6)))
                fail_msg("%s (%s): relative error %g", ops[k],
                         bf16 ? "bf16" : "f32", err);
            dfg_program_destroy(p);
            dfg_graph_destroy(g);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_post_ops),
        cmocka_unit_test(test_not_fused),
        cmocka_unit_test(test_layer_norm_and_gelu),
        cmocka_unit_test(test_silu_hardswish_kernels),
    };
    random_seed(99);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
