/* Products with fused epilogues on cuBLASLt, tested on the CPU
 * (lt_mapping.h): small graphs (a matmul or gemm, a bias, a residual, an
 * activation) compiled for the CUDA target with fusion; for each, which
 * runner the product step reports (dfg_session_step_library, as dfgc
 * bench --profile prints it): the cuBLASLt epilogue enum for the post-op
 * chains cuBLASLt has (BIAS, RELU, RELU_BIAS, GELU, GELU_BIAS), cuBLAS and
 * the epilogue kernel with the reason for the others; and the outputs on
 * the emulated CUDA backend, with cuBLASLt's documented semantics standing
 * in for the library (cuda_emulator.h), against the unfused program on
 * the CPU backend. Convolutions report why cuDNN's mapping refuses them,
 * and every step can be timed alone (the profile's run_step). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cuda/plan/lt_mapping.h"
#include "cuda/plan/target.h"
#include "cuda_emulator.h"
#include "dfg/compile.h"
#include "dfg/program.h"
#include "dfg/session.h"
#include "error.h"
#include "post_ops_graph.h"

enum { M = PRODUCT_M, K = PRODUCT_K, N = PRODUCT_N, BATCH = PRODUCT_BATCH };

typedef struct lt_case {
    const char *what;
    product_graph_spec spec;
    const char *runs_on; /* the product step's runner starts with it */
} lt_case;

static const lt_case cases[] = {
    {"matmul", {0, 0, 0, 0, 0, PRODUCT_NONE}, "cuBLAS"},
    {"matmul+bias", {0, 0, 0, 1, 0, PRODUCT_NONE}, "cuBLASLt BIAS"},
    {"matmul+relu", {0, 0, 0, 0, 0, PRODUCT_RELU}, "cuBLASLt RELU"},
    {"matmul+bias+relu", {0, 0, 0, 1, 0, PRODUCT_RELU}, "cuBLASLt RELU_BIAS"},
    {"matmul+gelu_tanh", {0, 0, 0, 0, 0, PRODUCT_GELU_TANH}, "cuBLASLt GELU"},
    {"matmul+bias+gelu_tanh", {0, 0, 0, 1, 0, PRODUCT_GELU_TANH}, "cuBLASLt GELU_BIAS"},
    {"matmul+bias+residual+relu", {0, 0, 0, 1, 1, PRODUCT_RELU}, "cuBLASLt RELU_BIAS"},
    {"matmul+residual+gelu_tanh", {0, 0, 0, 0, 1, PRODUCT_GELU_TANH}, "cuBLASLt GELU"},
    {"matmul+bias+gelu_erf", {0, 0, 0, 1, 0, PRODUCT_GELU_ERF},
     "cuBLAS + epilogue kernel (cuBLASLt: an erf GELU"},
    {"matmul+bias+sigmoid", {0, 0, 0, 1, 0, PRODUCT_SIGMOID},
     "cuBLAS + epilogue kernel (cuBLASLt: a post-op other than ReLU"},
    {"matmul+bias+relu+sigmoid", {0, 0, 0, 1, 0, PRODUCT_RELU_SIGMOID},
     "cuBLAS + epilogue kernel (cuBLASLt: more than one post-op"},
    {"batched matmul+relu", {0, 0, 1, 0, 0, PRODUCT_RELU},
     "cuBLAS + epilogue kernel (cuBLASLt: a batch of products"},
    {"gemm+C[N]", {1, 1, 0, 0, 0, PRODUCT_NONE}, "cuBLASLt BIAS"},
    {"gemm+C[N]+relu", {1, 1, 0, 0, 0, PRODUCT_RELU}, "cuBLASLt RELU_BIAS"},
    {"gemm+C[M,N]+gelu_tanh", {1, 2, 0, 0, 0, PRODUCT_GELU_TANH},
     "cuBLASLt GELU"},
    {"gemm+relu", {1, 0, 0, 0, 0, PRODUCT_RELU}, "cuBLASLt RELU"},
    {"gemm+C[M,N]", {1, 2, 0, 0, 0, PRODUCT_NONE}, "cuBLAS"},
};

static uint32_t seed;

static float next_value(void)
{
    seed = seed * 1664525u + 1013904223u;
    return (float)(seed >> 8) / (float)(1u << 24) - 0.5f;
}

#define OK(call) assert_int_equal((call), DFG_OK)

static float *run(const dfg_program *p, const dfg_backend *b, const float *x,
                  const float *r, int64_t n_out, dfg_session **keep)
{
    dfg_session *s = NULL;
    if (dfg_session_create(p, b, NULL, &s) != DFG_OK)
        fail_msg("%s", dfg_last_error());
    float *y = calloc((size_t)n_out, sizeof *y);
    const void *ins[2] = {x, r};
    void *outs[1] = {y};
    if (dfg_session_run(s, ins, outs) != DFG_OK)
        fail_msg("%s", dfg_last_error());
    if (keep)
        *keep = s;
    else
        dfg_session_destroy(s);
    return y;
}

/* The runner of the step whose op starts with op ("matmul", "gemm"). */
static const char *product_runner(const dfg_program *p, dfg_session *s,
                                  const char *op)
{
    dfg_plan_stats stats;
    dfg_program_stats(p, &stats);
    for (int32_t i = 0; i < stats.n_steps; i++) {
        dfg_step_info info;
        OK(dfg_program_step_info(p, i, &info));
        if (strncmp(info.op, op, strlen(op)) != 0)
            continue;
        const char *runs_on = NULL;
        OK(dfg_session_step_library(s, i, &runs_on));
        return runs_on ? runs_on : "dfg";
    }
    fail_msg("no %s step", op);
    return NULL;
}

static double relative_error(const float *got, const float *want, int64_t n)
{
    double diff = 0, norm = 0;
    for (int64_t i = 0; i < n; i++) {
        diff += ((double)got[i] - want[i]) * ((double)got[i] - want[i]);
        norm += (double)want[i] * want[i];
    }
    return sqrt(diff / norm);
}

static void check_case(const lt_case *c)
{
    dfg_graph *g = product_graph(&c->spec);
    if (!g)
        fail_msg("%s: %s", c->what, dfg_last_error());
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    OK(dfg_compile_options_for(&o, &dfg_cuda_target));
    dfg_program *fused = NULL, *plain = NULL;
    if (dfg_compile(g, &o, &fused) != DFG_OK)
        fail_msg("%s: %s", c->what, dfg_last_error());
    o.fuse_operators = 0;
    OK(dfg_compile(g, &o, &plain));
    dfg_graph_destroy(g);
    int64_t n_in = (c->spec.batched ? BATCH : 1) * M * K;
    int64_t n_out = (c->spec.batched ? BATCH : 1) * M * N;
    float *x = malloc((size_t)n_in * sizeof *x);
    float *r = malloc((size_t)n_out * sizeof *r);
    for (int64_t i = 0; i < n_in; i++)
        x[i] = 2.0f * next_value();
    for (int64_t i = 0; i < n_out; i++)
        r[i] = 2.0f * next_value();
    const dfg_backend *cpu = NULL;
    OK(dfg_backend_find("cpu", &cpu));
    float *want = run(plain, cpu, x, r, n_out, NULL);
    dfg_session *s = NULL;
    float *got = run(fused, &cuda_emulator_backend, x, r, n_out, &s);
    const char *runs_on = product_runner(fused, s, c->spec.gemm ? "gemm" : "matmul");
    if (strncmp(runs_on, c->runs_on, strlen(c->runs_on)) != 0)
        fail_msg("%s runs on '%s', expected '%s...'", c->what, runs_on,
                 c->runs_on);
    if (strcmp(c->runs_on, "cuBLAS") == 0 && strcmp(runs_on, "cuBLAS") != 0)
        fail_msg("%s runs on '%s', expected cuBLAS alone", c->what, runs_on);
    double e = relative_error(got, want, n_out);
    if (!(e < 1e-5))
        fail_msg("%s: fused on the emulated backend vs unfused on the CPU: "
                 "relative error %g", c->what, e);
    /* Each step alone, as the profile runs them, gives the same output. */
    double *seconds = calloc(64, sizeof *seconds);
    float *again = calloc((size_t)n_out, sizeof *again);
    const void *ins[2] = {x, r};
    void *outs[1] = {again};
    OK(dfg_session_run_profiled(s, ins, outs, seconds));
    assert_memory_equal(again, got, (size_t)n_out * sizeof *got);
    dfg_session_destroy(s);
    free(seconds), free(again), free(x), free(r), free(want), free(got);
    dfg_program_destroy(fused);
    dfg_program_destroy(plain);
}

static void test_every_form(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_case(&cases[i]);
}

/* The epilogue enum's names are cuBLASLt's (cublasLtEpilogue_t without
 * its prefix). */
static void test_epilogue_names(void **state)
{
    (void)state;
    assert_string_equal(dfg_cuda_lt_epilogue_name(DFG_CUDA_LT_OFF), "OFF");
    assert_string_equal(dfg_cuda_lt_epilogue_name(DFG_CUDA_LT_BIAS), "BIAS");
    assert_string_equal(dfg_cuda_lt_epilogue_name(DFG_CUDA_LT_RELU), "RELU");
    assert_string_equal(dfg_cuda_lt_epilogue_name(DFG_CUDA_LT_RELU_BIAS),
                        "RELU_BIAS");
    assert_string_equal(dfg_cuda_lt_epilogue_name(DFG_CUDA_LT_GELU), "GELU");
    assert_string_equal(dfg_cuda_lt_epilogue_name(DFG_CUDA_LT_GELU_BIAS),
                        "GELU_BIAS");
}

/* A runner for each library choice: cuDNN when it took the step, else
 * the reason it did not (or that cuBLASLt did not); none for a kernel. */
static void test_runner_labels(void **state)
{
    (void)state;
    static char token;
    char buf[160];
    dfg_cuda_step_plan p;
    memset(&p, 0, sizeof p);
    p.kind = DFG_CUDA_CONV2D;
    p.dnn_why = "a size beyond 32 bits";
    assert_string_equal(dfg_cuda_step_runs_on(&p, buf, sizeof buf),
                        "cuBLAS im2col (cuDNN: a size beyond 32 bits)");
    p.dnn = (struct dfg_cuda_dnn_step *)(void *)&token;
    assert_string_equal(dfg_cuda_step_runs_on(&p, buf, sizeof buf), "cuDNN");
    memset(&p, 0, sizeof p);
    p.kind = DFG_CUDA_MATMUL;
    p.epilogue.n_ops = 1;
    p.lt_form.epilogue = DFG_CUDA_LT_RELU;
    p.lt_why = "this build has no cuBLASLt";
    assert_string_equal(dfg_cuda_step_runs_on(&p, buf, sizeof buf),
                        "cuBLAS + epilogue kernel (cuBLASLt: this build has "
                        "no cuBLASLt)");
    p.lt = (struct dfg_cuda_lt_step *)(void *)&token;
    p.lt_why = NULL;
    assert_string_equal(dfg_cuda_step_runs_on(&p, buf, sizeof buf),
                        "cuBLASLt RELU");
    memset(&p, 0, sizeof p);
    p.kind = DFG_CUDA_SOFTMAX;
    assert_null(dfg_cuda_step_runs_on(&p, buf, sizeof buf));
}

/* A conv2d cuDNN's mapping refuses names the reason in its runner. */
static void test_conv_reason(void **state)
{
    (void)state;
    dfg_graph *g = conv_pads_graph();
    if (!g)
        fail_msg("%s", dfg_last_error());
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    OK(dfg_compile_options_for(&o, &dfg_cuda_target));
    dfg_program *p = NULL;
    OK(dfg_compile(g, &o, &p));
    dfg_graph_destroy(g);
    dfg_session *s = NULL;
    OK(dfg_session_create(p, &cuda_emulator_backend, NULL, &s));
    dfg_plan_stats stats;
    dfg_program_stats(p, &stats);
    int refused = 0, no_cudnn = 0;
    for (int32_t i = 0; i < stats.n_steps; i++) {
        const char *runs_on = NULL;
        OK(dfg_session_step_library(s, i, &runs_on));
        if (!runs_on)
            continue;
        refused += strcmp(runs_on, "cuBLAS im2col (cuDNN: padding no "
                          "symmetric pad reproduces)") == 0;
        no_cudnn += strcmp(runs_on, "cuBLAS im2col (cuDNN: the emulator has "
                           "no cuDNN)") == 0;
    }
    assert_int_equal(refused, 1);
    assert_int_equal(no_cudnn, 1);
    dfg_session_destroy(s);
    dfg_program_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_epilogue_names),
        cmocka_unit_test(test_runner_labels),
        cmocka_unit_test(test_every_form),
        cmocka_unit_test(test_conv_reason),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
