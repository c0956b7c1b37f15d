/* The matmul and gemm fusion (passes/fusion/fuse_matmul.c): a linear layer's bias
 * add, activation and residual add, compiled fused and unfused
 * (fuse_operators = 0), checked against a double-precision reference on
 * random data on both paths a fused product can take: oneDNN's bias and
 * post-ops (a mapped program; the step must run there), and the
 * reference kernels (a program compiled without the CPU rule), with the
 * residual planned over the output or copied into it. Patterns that must
 * not fuse keep their steps. Every program is verified by dfg_compile. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dfg/dfg.h"
#include "tests/runtime_cpu/dnnl_check.h"
#include "tests/support/program_fixtures.h"
#include "tests/support/random_data.h"

#define BATCH 2
#define ROWS 7
#define K 24
#define N 40
#define M (BATCH * ROWS)
#define N_OUT (M * N)

enum product { MATMUL, GEMM, GEMM_TRANS_B, GEMM_WITH_C };
enum residual {
    NO_RESIDUAL,
    RESIDUAL,       /* + r, r an input */
    RESIDUAL_DYING, /* + tanh(r): the output may be planned over it */
    RESIDUAL_KEPT,  /* + r, then the result times r: r is read after */
};
enum activation { NONE, RELU, GELU, GELU_TANH, SIGMOID, CLIP };

typedef struct fuse_case {
    const char *what;
    enum product product;
    int bias;            /* + a bias row b [N] after the product */
    int bias_first;      /* as add(b, y) */
    enum residual residual;
    enum activation activation;
    const char *label;   /* the fused product's step, NULL: nothing fused */
    int y_read_twice;    /* the product's output also feeds the output */
    int y_is_output;     /* the product's output is also a graph output */
} fuse_case;

static dfg_value activation(dfg_graph *g, enum activation kind, dfg_value v)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    switch (kind) {
    case RELU: return node1(g, "relu", v, NULL);
    case GELU: return node1(g, "gelu", v, NULL);
    case GELU_TANH:
        a.approximate = DFG_GELU_TANH;
        return node1(g, "gelu", v, &a);
    case SIGMOID: return node1(g, "sigmoid", v, NULL);
    case CLIP:
        a.clip_min = -0.5f;
        a.clip_max = 0.7f;
        return node1(g, "clip", v, &a);
    default: return v;
    }
}

/* The product of x with w: a matmul of x [BATCH, ROWS, K] and w [K, N];
 * a gemm of x [M, K] and w ([K, N], or [N, K] transposed), with c [N] as
 * its C for GEMM_WITH_C. */
static dfg_value product(dfg_graph *g, const fuse_case *k, dfg_value x,
                         dfg_value w, dfg_value c)
{
    if (k->product == MATMUL)
        return node2(g, "matmul", x, w);
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.trans_b = k->product == GEMM_TRANS_B;
    dfg_value in[3] = {x, w, c}, y;
    assert_int_equal(dfg_graph_node(g, "gemm", NULL, in,
                                    k->product == GEMM_WITH_C ? 3 : 2, &a,
                                    &y, 1), DFG_OK);
    return y;
}

static dfg_graph *build(const fuse_case *k, const float *w, const float *b)
{
    dfg_graph *g = NULL;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    int matmul = k->product == MATMUL;
    int64_t x_shape[3] = {BATCH, ROWS, K}, r_shape[3] = {BATCH, ROWS, N};
    int64_t flat_x[2] = {M, K}, flat_r[2] = {M, N};
    int64_t w_shape[2] = {K, N}, b_shape[1] = {N};
    if (k->product == GEMM_TRANS_B) {
        w_shape[0] = N;
        w_shape[1] = K;
    }
    dfg_value x, r, wv, bv;
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, matmul ? 3 : 2,
                                     matmul ? x_shape : flat_x, &x), DFG_OK);
    assert_int_equal(dfg_graph_input(g, "r", DFG_F32, matmul ? 3 : 2,
                                     matmul ? r_shape : flat_r, &r), DFG_OK);
    assert_int_equal(dfg_graph_weight(g, "w", DFG_F32, 2, w_shape, w, &wv),
                     DFG_OK);
    assert_int_equal(dfg_graph_weight(g, "b", DFG_F32, 1, b_shape, b, &bv),
                     DFG_OK);
    dfg_value y = product(g, k, x, wv, bv), v = y;
    if (k->bias)
        v = k->bias_first ? node2(g, "add", bv, v) : node2(g, "add", v, bv);
    if (k->residual == RESIDUAL || k->residual == RESIDUAL_KEPT)
        v = node2(g, "add", r, v);
    if (k->residual == RESIDUAL_DYING)
        v = node2(g, "add", v, node1(g, "tanh", r, NULL));
    v = activation(g, k->activation, v);
    if (k->residual == RESIDUAL_KEPT)
        v = node2(g, "mul", v, r);
    if (k->y_read_twice)
        v = node2(g, "add", v, y);
    assert_int_equal(dfg_graph_output(g, v, "out"), DFG_OK);
    if (k->y_is_output)
        assert_int_equal(dfg_graph_output(g, y, "y"), DFG_OK);
    return g;
}

static double activation_ref(enum activation kind, double v)
{
    switch (kind) {
    case RELU: return v > 0 ? v : 0;
    case GELU: return 0.5 * v * (1.0 + erf(v / sqrt(2.0)));
    case GELU_TANH:
        return 0.5 * v *
               (1.0 + tanh(sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
    case SIGMOID: return 1.0 / (1.0 + exp(-v));
    case CLIP: return v < -0.5 ? -0.5 : v > 0.7 ? 0.7 : v;
    default: return v;
    }
}

/* The case's output in double. */
static void reference(const fuse_case *k, const float *x, const float *w,
                      const float *b, const float *r, double *out)
{
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double y = 0.0;
            for (int64_t t = 0; t < K; t++)
                y += (double)x[i * K + t] *
                     (k->product == GEMM_TRANS_B ? w[j * K + t] : w[t * N + j]);
            y += k->product == GEMM_WITH_C ? b[j] : 0.0;
            double v = y + (k->bias ? b[j] : 0.0);
            double res = r[i * N + j];
            if (k->residual == RESIDUAL || k->residual == RESIDUAL_KEPT)
                v += res;
            if (k->residual == RESIDUAL_DYING)
                v += tanh(res);
            v = activation_ref(k->activation, v);
            if (k->residual == RESIDUAL_KEPT)
                v *= res;
            out[i * N + j] = k->y_read_twice ? v + y : v;
        }
}

static const char *const path_names[] = {"unfused", "oneDNN", "reference"};

static dfg_program *compile(const dfg_graph *g, enum fuse_path how)
{
    return compiled_for(g, how, 0);
}

/* The index of the program's product step (the first matmul or gemm). */
static int32_t product_step(const dfg_program *p, dfg_step_info *info)
{
    for (int32_t i = 0; i < num_steps(p); i++) {
        assert_int_equal(dfg_program_step_info(p, i, info), DFG_OK);
        if (strncmp(info->op, "matmul", 6) == 0 ||
            strncmp(info->op, "gemm", 4) == 0)
            return i;
    }
    fail_msg("no matmul or gemm step");
    return -1;
}

/* Runs p on x and r into out; *library receives what ran the product. */
static void run(const dfg_program *p, const float *x, const float *r,
                float *out, int *on_onednn)
{
    dfg_session *s = NULL;
    assert_int_equal(dfg_session_create(p, cpu(), NULL, &s), DFG_OK);
    const void *inputs[2] = {x, r};
    static float y[N_OUT];
    void *outputs[2] = {out, y};
    assert_int_equal(dfg_session_run(s, inputs, outputs), DFG_OK);
    dfg_step_info info;
    const char *library = NULL;
    assert_int_equal(dfg_session_step_library(s, product_step(p, &info),
                                              &library), DFG_OK);
    *on_onednn = library != NULL;
    dfg_session_destroy(s);
}

static void check(const fuse_case *k)
{
    static float w[K * N], b[N], x[M * K], r[N_OUT], got[N_OUT];
    static double want[N_OUT];
    random_fill(w, K * N, 0.3f);
    random_fill(b, N, 0.5f);
    random_fill(x, M * K, 1.0f);
    random_fill(r, N_OUT, 1.0f);
    reference(k, x, w, b, r, want);
    dfg_graph *g = build(k, w, b);
    dfg_program *unfused = compile(g, UNFUSED);
    for (int how = UNFUSED; how <= FUSED_REFERENCE; how++) {
        dfg_program *p = how == UNFUSED ? unfused : compile(g, how);
        dfg_step_info info;
        product_step(p, &info);
        const char *label =
            how == UNFUSED || !k->label
                ? (k->product == MATMUL ? "matmul" : "gemm")
                : k->label;
        if (strcmp(info.op, label) != 0)
            fail_msg("%s (%s): the product step is %s, expected %s", k->what,
                     path_names[how], info.op, label);
        if (how != UNFUSED && k->label)
            assert_true(num_steps(p) < num_steps(unfused));
        else if (how != UNFUSED)
            assert_int_equal(num_steps(p), num_steps(unfused));
        int on_onednn = 0;
        run(p, x, r, got, &on_onednn);
        if (on_onednn != (how != FUSED_REFERENCE))
            fail_msg("%s (%s): the product ran on %s", k->what,
                     path_names[how], on_onednn ? "oneDNN" : "dfg");
        double err = fixture_relative_error(got, want, N_OUT);
        if (!(err < 2e-6))
            fail_msg("%s (%s): relative error %g against the double "
                     "reference", k->what, path_names[how], err);
        if (how != UNFUSED)
            dfg_program_destroy(p);
    }
    dfg_program_destroy(unfused);
    dfg_graph_destroy(g);
}

static void test_matmul_epilogues(void **state)
{
    (void)state;
    static const fuse_case cases[] = {
        {"bias", MATMUL, 1, 0, NO_RESIDUAL, NONE, "matmul", 0, 0},
        {"bias first", MATMUL, 1, 1, NO_RESIDUAL, NONE, "matmul", 0, 0},
        {"bias, relu", MATMUL, 1, 0, NO_RESIDUAL, RELU, "matmul+relu", 0, 0},
        {"bias, gelu", MATMUL, 1, 0, NO_RESIDUAL, GELU, "matmul+gelu", 0, 0},
        {"bias, gelu tanh", MATMUL, 1, 0, NO_RESIDUAL, GELU_TANH,
         "matmul+gelu_tanh", 0, 0},
        {"bias, clip", MATMUL, 1, 0, NO_RESIDUAL, CLIP, "matmul+clip", 0, 0},
        {"gelu, no bias", MATMUL, 0, 0, NO_RESIDUAL, GELU, "matmul+gelu", 0, 0},
        {"bias, residual", MATMUL, 1, 0, RESIDUAL, NONE, "matmul+add", 0, 0},
        {"bias, residual, relu", MATMUL, 1, 0, RESIDUAL, RELU,
         "matmul+add+relu", 0, 0},
        {"residual, no bias", MATMUL, 0, 0, RESIDUAL, SIGMOID,
         "matmul+add+sigmoid", 0, 0},
        {"bias, residual dying", MATMUL, 1, 0, RESIDUAL_DYING, NONE,
         "matmul+add", 0, 0},
        {"bias, residual read later", MATMUL, 1, 0, RESIDUAL_KEPT, GELU,
         "matmul+add+gelu", 0, 0},
        {"gemm, bias row, relu", GEMM, 1, 0, NO_RESIDUAL, RELU, "gemm+relu", 0,
         0},
        {"gemm transB, bias row, gelu", GEMM_TRANS_B, 1, 1, NO_RESIDUAL, GELU,
         "gemm+gelu", 0, 0},
        {"gemm with C, sigmoid", GEMM_WITH_C, 0, 0, NO_RESIDUAL, SIGMOID,
         "gemm+sigmoid", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check(&cases[i]);
}

static void test_not_fused(void **state)
{
    (void)state;
    static const fuse_case cases[] = {
        {"product read twice", MATMUL, 1, 0, NO_RESIDUAL, RELU, NULL, 1, 0},
        {"product is a graph output", MATMUL, 1, 0, NO_RESIDUAL, GELU, NULL,
         0, 1},
        /* A gemm takes no residual; with a C it takes no second bias. */
        {"gemm, residual", GEMM, 0, 0, RESIDUAL, NONE, NULL, 0, 0},
        {"gemm with C, bias row", GEMM_WITH_C, 1, 0, NO_RESIDUAL, NONE, NULL,
         0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check(&cases[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matmul_epilogues),
        cmocka_unit_test(test_not_fused),
    };
    random_seed(7);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
