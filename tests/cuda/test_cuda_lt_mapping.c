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
#include <unistd.h>
#include <cmocka.h>

#include "dfg/compile.h"
#include "dfg/program.h"
#include "dfg/session.h"
#include "dfg/training.h"
#include "runtime/cuda/plan/lt_mapping.h"
#include "runtime/cuda/plan/target.h"
#include "tests/cuda/cuda_emulator.h"
#include "tests/cuda/post_ops_graph.h"
#include "util/error.h"

typedef struct lt_case {
    const char *what;
    product_graph_spec spec;
    const char *runs_on; /* the product step's runner starts with it */
    int transposes;      /* transpose steps left in the fused program */
} lt_case;

static const lt_case cases[] = {
    {"matmul",
     {0, 0, 0, 0, 0, PRODUCT_NONE, PRODUCT_PLAIN},
     "cuBLAS", 0},
    {"matmul+bias",
     {0, 0, 0, 1, 0, PRODUCT_NONE, PRODUCT_PLAIN},
     "cuBLASLt BIAS", 0},
    {"matmul+relu",
     {0, 0, 0, 0, 0, PRODUCT_RELU, PRODUCT_PLAIN},
     "cuBLASLt RELU", 0},
    {"matmul+bias+relu",
     {0, 0, 0, 1, 0, PRODUCT_RELU, PRODUCT_PLAIN},
     "cuBLASLt RELU_BIAS", 0},
    {"matmul+gelu_tanh",
     {0, 0, 0, 0, 0, PRODUCT_GELU_TANH, PRODUCT_PLAIN},
     "cuBLASLt GELU", 0},
    {"matmul+bias+gelu_tanh",
     {0, 0, 0, 1, 0, PRODUCT_GELU_TANH, PRODUCT_PLAIN},
     "cuBLASLt GELU_BIAS", 0},
    {"matmul+bias+residual+relu",
     {0, 0, 0, 1, 1, PRODUCT_RELU, PRODUCT_PLAIN},
     "cuBLASLt RELU_BIAS", 0},
    {"matmul+residual+gelu_tanh",
     {0, 0, 0, 0, 1, PRODUCT_GELU_TANH, PRODUCT_PLAIN},
     "cuBLASLt GELU", 0},
    {"matmul+bias+gelu_erf",
     {0, 0, 0, 1, 0, PRODUCT_GELU_ERF, PRODUCT_PLAIN},
     "cuBLAS + epilogue kernel (cuBLASLt: an erf GELU", 0},
    {"matmul+bias+sigmoid",
     {0, 0, 0, 1, 0, PRODUCT_SIGMOID, PRODUCT_PLAIN},
     "cuBLAS + epilogue kernel (cuBLASLt: a post-op other than ReLU", 0},
    {"matmul+bias+relu+sigmoid",
     {0, 0, 0, 1, 0, PRODUCT_RELU_SIGMOID, PRODUCT_PLAIN},
     "cuBLAS + epilogue kernel (cuBLASLt: more than one post-op", 0},
    {"batched matmul+relu",
     {0, 0, 1, 0, 0, PRODUCT_RELU, PRODUCT_PLAIN},
     "cuBLAS + epilogue kernel (cuBLASLt: a batch of products", 0},
    {"gemm+C[N]",
     {1, 1, 0, 0, 0, PRODUCT_NONE, PRODUCT_PLAIN},
     "cuBLASLt BIAS", 0},
    {"gemm+C[N]+relu",
     {1, 1, 0, 0, 0, PRODUCT_RELU, PRODUCT_PLAIN},
     "cuBLASLt RELU_BIAS", 0},
    {"gemm+C[M,N]+gelu_tanh",
     {1, 2, 0, 0, 0, PRODUCT_GELU_TANH, PRODUCT_PLAIN},
     "cuBLASLt GELU", 0},
    {"gemm+relu",
     {1, 0, 0, 0, 0, PRODUCT_RELU, PRODUCT_PLAIN},
     "cuBLASLt RELU", 0},
    {"gemm+C[M,N]",
     {1, 2, 0, 0, 0, PRODUCT_NONE, PRODUCT_PLAIN},
     "cuBLAS", 0},
    /* Transposes of the last two dims read by cuBLAS as transa / transb. */
    {"matmul(x, bt^T)",
     {0, 0, 0, 0, 0, PRODUCT_NONE, PRODUCT_TRANSPOSE_B},
     "cuBLAS", 0},
    {"batched matmul(x, bt^T) (q.k^T)",
     {0, 0, 1, 0, 0, PRODUCT_NONE, PRODUCT_TRANSPOSE_B},
     "cuBLAS", 0},
    {"batched matmul(x^T, w)",
     {0, 0, 1, 0, 0, PRODUCT_NONE, PRODUCT_TRANSPOSE_A},
     "cuBLAS", 0},
    {"matmul(x^T, w)+bias+relu",
     {0, 0, 0, 1, 0, PRODUCT_RELU, PRODUCT_TRANSPOSE_A},
     "cuBLASLt RELU_BIAS", 0},
    {"gemm(x, bt^T): trans_b flips off",
     {1, 1, 0, 0, 0, PRODUCT_RELU, PRODUCT_TRANSPOSE_B},
     "cuBLASLt RELU_BIAS", 0},
    {"gemm(x, bt^T)+C[M,N]+relu",
     {1, 2, 0, 0, 0, PRODUCT_RELU, PRODUCT_TRANSPOSE_B},
     "cuBLASLt RELU", 0},
    {"gemm(x^T, w)",
     {1, 0, 0, 0, 0, PRODUCT_NONE, PRODUCT_TRANSPOSE_A},
     "cuBLAS", 0},
    {"matmul(x, bt^T), bt^T an output too",
     {0, 0, 0, 0, 0, PRODUCT_NONE, PRODUCT_TRANSPOSE_SHARED},
     "cuBLAS", 1},
};

static uint32_t seed;

static float next_value(void)
{
    seed = seed * 1664525u + 1013904223u;
    return (float)(seed >> 8) / (float)(1u << 24) - 0.5f;
}

#define OK(call) assert_int_equal((call), DFG_OK)

/* A case's inputs (x, r, bt as the graph has them) and outputs (y, the
 * shared bt^T). */
typedef struct case_io {
    float *in[3];
    int32_t n_in;
    int64_t out_n[2];
    int32_t n_out;
} case_io;

static float *random_floats(int64_t n)
{
    float *v = malloc((size_t)n * sizeof *v);
    assert_non_null(v);
    for (int64_t i = 0; i < n; i++)
        v[i] = 2.0f * next_value();
    return v;
}

static void case_io_make(const product_graph_spec *c, case_io *io)
{
    memset(io, 0, sizeof *io);
    int64_t in[3];
    product_graph_sizes(c, in, &io->n_in, io->out_n, &io->n_out);
    for (int32_t i = 0; i < io->n_in; i++)
        io->in[i] = random_floats(in[i]);
}

/* Output 0 of one run of p on b (kept in *keep when not NULL). */
static float *run(const dfg_program *p, const dfg_backend *b,
                  const case_io *io, dfg_session **keep)
{
    dfg_session *s = NULL;
    if (dfg_session_create(p, b, NULL, &s) != DFG_OK)
        fail_msg("%s", dfg_last_error());
    const void *ins[3] = {io->in[0], io->in[1], io->in[2]};
    void *outs[2] = {calloc((size_t)io->out_n[0], sizeof(float)),
                     calloc((size_t)io->out_n[1] + 1, sizeof(float))};
    if (dfg_session_run(s, ins, outs) != DFG_OK)
        fail_msg("%s", dfg_last_error());
    if (keep)
        *keep = s;
    else
        dfg_session_destroy(s);
    free(outs[1]);
    return outs[0];
}

static int32_t transpose_steps(const dfg_program *p)
{
    dfg_plan_stats stats;
    dfg_program_stats(p, &stats);
    int32_t n = 0;
    for (int32_t i = 0; i < stats.n_steps; i++) {
        dfg_step_info info;
        OK(dfg_program_step_info(p, i, &info));
        n += strcmp(info.op, "transpose") == 0;
    }
    return n;
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
    if (transpose_steps(fused) != c->transposes)
        fail_msg("%s: %d transpose steps, expected %d", c->what,
                 (int)transpose_steps(fused), c->transposes);
    if (c->spec.transpose != PRODUCT_PLAIN) {
        /* The CPU target's products keep their transposes as copies. */
        dfg_compile_options cpu_options;
        dfg_compile_options_init(&cpu_options);
        dfg_program *cpu_program = NULL;
        g = product_graph(&c->spec);
        OK(dfg_compile(g, &cpu_options, &cpu_program));
        dfg_graph_destroy(g);
        assert_int_equal(transpose_steps(cpu_program), 1);
        dfg_program_destroy(cpu_program);
    }
    case_io io;
    case_io_make(&c->spec, &io);
    const dfg_backend *cpu = NULL;
    OK(dfg_backend_find("cpu", &cpu));
    float *want = run(plain, cpu, &io, NULL);
    dfg_session *s = NULL;
    float *got = run(fused, &cuda_emulator_backend, &io, &s);
    /* The fused program on the CPU too, saved and loaded (the trans flags
     * kept): its reference kernels read the operands the product flags
     * transposed. */
    char path[] = "/tmp/dfg-lt-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    OK(dfg_program_save(fused, path));
    dfg_program *loaded = NULL;
    OK(dfg_program_load(path, NULL, &loaded));
    unlink(path);
    float *cpu_fused = run(loaded, cpu, &io, NULL);
    dfg_program_destroy(loaded);
    const char *runs_on = product_runner(fused, s, c->spec.gemm ? "gemm"
                                                                : "matmul");
    if (strncmp(runs_on, c->runs_on, strlen(c->runs_on)) != 0)
        fail_msg("%s runs on '%s', expected '%s...'", c->what, runs_on,
                 c->runs_on);
    if (strcmp(c->runs_on, "cuBLAS") == 0 && strcmp(runs_on, "cuBLAS") != 0)
        fail_msg("%s runs on '%s', expected cuBLAS alone", c->what, runs_on);
    int64_t n_out = io.out_n[0];
    double e = relative_error(got, want, n_out);
    double e_cpu = relative_error(cpu_fused, want, n_out);
    if (!(e < 1e-5) || !(e_cpu < 1e-5))
        fail_msg("%s: fused vs unfused on the CPU: relative error %g on the "
                 "emulated backend, %g on the CPU", c->what, e, e_cpu);
    /* Each step alone, as the profile runs them, gives the same output. */
    double *seconds = calloc(64, sizeof *seconds);
    float *again = calloc((size_t)n_out, sizeof *again);
    float *shared = calloc((size_t)io.out_n[1] + 1, sizeof *shared);
    const void *ins[3] = {io.in[0], io.in[1], io.in[2]};
    void *outs[2] = {again, shared};
    OK(dfg_session_run_profiled(s, ins, outs, seconds));
    assert_memory_equal(again, got, (size_t)n_out * sizeof *got);
    dfg_session_destroy(s);
    for (int32_t i = 0; i < io.n_in; i++)
        free(io.in[i]);
    free(seconds), free(again), free(shared), free(want), free(got);
    free(cpu_fused);
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

/* A matmul reading b transposed (q . k^T: b stored [.., N, K]) is one
 * strided-batched cuBLAS call with transa = T on its first operand (the
 * row-major B), lda = K; reading a transposed, transb = T, ldb = M. */
static void test_transposed_operand_flags(void **state)
{
    (void)state;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.trans_b = 1;
    const dfg_type q = {DFG_F32, 4, {2, 3, 7, 4}, 0},
                   k = {DFG_F32, 4, {2, 3, 5, 4}, 0},
                   scores = {DFG_F32, 4, {2, 3, 7, 5}, 0};
    dfg_cuda_matmul_plan plan;
    OK(dfg_cuda_matmul_plan_make(&attrs, &q, &k, &scores, &plan));
    dfg_cuda_blas_gemm g;
    OK(dfg_cuda_blas_gemm_from_row_major(&plan.gemm, &g));
    assert_int_equal(g.trans_first, 1);
    assert_int_equal(g.trans_second, 0);
    assert_int_equal(g.m, 5);
    assert_int_equal(g.n, 7);
    assert_int_equal(g.k, 4);
    assert_int_equal(g.ld_first, 4);
    assert_int_equal(g.ld_second, 4);
    assert_int_equal(g.batch, 6);
    assert_int_equal(plan.calls, 1);
    /* Without the flag the same operands do not multiply. */
    attrs.trans_b = 0;
    assert_int_equal(dfg_cuda_matmul_plan_make(&attrs, &q, &k, &scores, &plan),
                     DFG_ERR_SHAPE);
    attrs.trans_a = 1;
    const dfg_type at = {DFG_F32, 3, {3, 4, 7}, 0},
                   b = {DFG_F32, 3, {3, 4, 5}, 0},
                   y = {DFG_F32, 3, {3, 7, 5}, 0};
    OK(dfg_cuda_matmul_plan_make(&attrs, &at, &b, &y, &plan));
    OK(dfg_cuda_blas_gemm_from_row_major(&plan.gemm, &g));
    assert_int_equal(g.trans_first, 0);
    assert_int_equal(g.trans_second, 1);
    assert_int_equal(g.ld_second, 7);
    assert_int_equal(g.batch, 3);
    /* A flag on a 1-D operand is refused by name. */
    const dfg_type v = {DFG_F32, 1, {4}, 0}, row = {DFG_F32, 1, {5}, 0};
    assert_int_equal(dfg_cuda_matmul_plan_make(&attrs, &v, &b, &row, &plan),
                     DFG_ERR_SHAPE);
}

/* A training step compiled for CUDA: the transposes autodiff makes for
 * its matmul gradients (g . b^T, a^T . g) fold into the products; its
 * losses and updates on the emulated backend are the CPU's (the program
 * compiled for the CPU, its transposes copied). */
static void test_training_transposes(void **state)
{
    (void)state;
    dfg_program *p[2] = {NULL, NULL};
    for (int cuda = 0; cuda < 2; cuda++) {
        dfg_graph *g = matmul_training_graph();
        if (!g)
            fail_msg("%s", dfg_last_error());
        dfg_training_options t;
        dfg_training_options_init(&t);
        t.loss = "loss";
        dfg_compile_options o;
        dfg_compile_options_init(&o);
        if (cuda)
            OK(dfg_compile_options_for(&o, &dfg_cuda_target));
        o.training = &t;
        if (dfg_compile(g, &o, &p[cuda]) != DFG_OK)
            fail_msg("%s", dfg_last_error());
        dfg_graph_destroy(g);
    }
    int32_t cpu_transposes = transpose_steps(p[0]);
    if (!(cpu_transposes > 0) || transpose_steps(p[1]) != 0)
        fail_msg("training: %d transpose steps for the CPU, %d for CUDA",
                 (int)cpu_transposes, (int)transpose_steps(p[1]));
    static float x[4 * 6 * 5];
    seed = 21;
    for (int i = 0; i < 4 * 6 * 5; i++)
        x[i] = 2.0f * next_value();
    const dfg_backend *cpu = NULL;
    OK(dfg_backend_find("cpu", &cpu));
    const dfg_backend *backends[2] = {cpu, &cuda_emulator_backend};
    float loss[2][4];
    for (int k = 0; k < 2; k++) {
        dfg_session *s = NULL;
        OK(dfg_session_create(p[k], backends[k], NULL, &s));
        const void *ins[1] = {x};
        void *out = NULL;
        OK(dfg_session_output_buffer(s, 0, &out));
        for (int step = 0; step < 4; step++) {
            OK(dfg_session_run(s, ins, NULL));
            memcpy(&loss[k][step], out, sizeof loss[k][step]);
        }
        dfg_session_destroy(s);
    }
    /* The loss falls, the same on both (the updates agree). */
    assert_true(loss[0][3] < loss[0][0]);
    for (int step = 0; step < 4; step++)
        if (!(fabsf(loss[1][step] - loss[0][step]) <=
              1e-5f * fabsf(loss[0][step])))
            fail_msg("step %d: loss %g on the emulated backend, %g on the "
                     "CPU", step, loss[1][step], loss[0][step]);
    dfg_program_destroy(p[0]);
    dfg_program_destroy(p[1]);
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
        cmocka_unit_test(test_transposed_operand_flags),
        cmocka_unit_test(test_training_transposes),
        cmocka_unit_test(test_conv_reason),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
