/* The CUDA backend's convolutions on cuDNN (suite 'cuda'): a small
 * residual CNN (convolutions with and without bias, stride 2, a residual
 * sum, ReLUs) on the CUDA backend with cuDNN and without
 * (DFG_CUDA_CUDNN=0) against the CPU backend; the same bits run after
 * run and with CUDA graphs on and off (deterministic algorithms); the
 * fused conv + bias + residual + ReLU run by cuDNN's fused call and by
 * the backend's own path, as the unfused program runs; a training
 * step (the backward convolutions) the same bits in two sessions;
 * products with epilogues on cuBLASLt and transposed operands read by
 * cuBLAS (post_ops_graph.h's product graphs), each step reporting its
 * runner, timed alone as dfgc bench --profile times it.
 *
 * Exits 77 (skipped), saying why, when the backend is not built or cannot
 * run here. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dfg/dfg.h"
#include "tests/cuda/cuda_test_device.h"
#include "tests/cuda/post_ops_graph.h"

#define N 4
#define C 16
#define HW 14

static const dfg_backend *backend(const char *name)
{
    const dfg_backend *b = NULL;
    assert_int_equal(dfg_backend_find(name, &b), DFG_OK);
    return b;
}

static uint32_t seed = 12345;

static float random_value(void)
{
    seed = seed * 1664525u + 1013904223u;
    return (float)(seed >> 8) / (float)(1u << 24) - 0.5f;
}

static dfg_value weight(dfg_graph *g, const char *name, int32_t rank,
                        const int64_t *shape)
{
    int64_t n = 1;
    for (int32_t d = 0; d < rank; d++)
        n *= shape[d];
    float *data = malloc((size_t)n * sizeof *data);
    for (int64_t i = 0; i < n; i++)
        data[i] = random_value() * 0.3f;
    dfg_value v;
    assert_int_equal(dfg_graph_weight(g, name, DFG_F32, rank, shape, data, &v),
                     DFG_OK);
    free(data);
    return v;
}

/* y = relu(conv3(relu(conv1(x) + b1)) + x) and z = conv2(x), stride 2,
 * no bias. */
static dfg_graph *residual_cnn(void)
{
    dfg_graph *g;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    const int64_t xs[4] = {N, C, HW, HW}, ws[4] = {C, C, 3, 3}, bs[1] = {C};
    dfg_value x, h, a, y, z;
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 4, xs, &x), DFG_OK);
    dfg_conv2d_params same = {.pads = {1, 1, 1, 1}};
    dfg_conv2d_params down = {.strides = {2, 2}, .pads = {1, 1, 1, 1}};
    assert_int_equal(dfg_conv2d(g, x, weight(g, "w1", 4, ws),
                                weight(g, "b1", 1, bs), &same, &h), DFG_OK);
    assert_int_equal(dfg_relu(g, h, &h), DFG_OK);
    assert_int_equal(dfg_conv2d(g, h, weight(g, "w3", 4, ws),
                                weight(g, "b3", 1, bs), &same, &a), DFG_OK);
    assert_int_equal(dfg_add(g, a, x, &a), DFG_OK);
    assert_int_equal(dfg_relu(g, a, &y), DFG_OK);
    assert_int_equal(dfg_conv2d(g, x, weight(g, "w2", 4, ws), DFG_NO_VALUE,
                                &down, &z), DFG_OK);
    assert_int_equal(dfg_graph_output(g, y, "y"), DFG_OK);
    assert_int_equal(dfg_graph_output(g, z, "z"), DFG_OK);
    return g;
}

/* A session of p on name with DFG_CUDA_CUDNN and DFG_CUDA_GRAPHS as
 * given (NULL: unset), or NULL with the status in *status. */
static dfg_session *session(const dfg_program *p, const char *name,
                            const char *cudnn, const char *graphs,
                            dfg_status *status)
{
    if (cudnn)
        setenv("DFG_CUDA_CUDNN", cudnn, 1);
    if (graphs)
        setenv("DFG_CUDA_GRAPHS", graphs, 1);
    dfg_session *s = NULL;
    *status = dfg_session_create(p, backend(name), NULL, &s);
    unsetenv("DFG_CUDA_CUDNN");
    unsetenv("DFG_CUDA_GRAPHS");
    return s;
}

static float input[N * C * HW * HW];

/* Both outputs of one run of p on a new session, concatenated. */
static float *outputs(const dfg_program *p, const char *name,
                      const char *cudnn, const char *graphs, size_t *count)
{
    dfg_status st;
    dfg_session *s = session(p, name, cudnn, graphs, &st);
    if (!s)
        fail_msg("%s session (cudnn %s): %s", name, cudnn ? cudnn : "on",
                 dfg_last_error());
    size_t y = (size_t)N * C * HW * HW, z = (size_t)N * C * 7 * 7;
    float *out = malloc((y + z) * sizeof *out);
    void *outs[2] = {out, out + y};
    const void *ins[1] = {input};
    if (dfg_session_run(s, ins, outs) != DFG_OK)
        fail_msg("%s run: %s", name, dfg_last_error());
    dfg_session_destroy(s);
    *count = y + z;
    return out;
}

static double relative_error(const float *got, const float *want, size_t n)
{
    double diff = 0, norm = 0;
    for (size_t i = 0; i < n; i++) {
        diff += ((double)got[i] - want[i]) * ((double)got[i] - want[i]);
        norm += (double)want[i] * want[i];
    }
    return sqrt(diff / (norm > 0 ? norm : 1));
}

static dfg_program *compile(dfg_graph *g, int cuda)
{
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    if (cuda) {
        cuda_test_compile_options(&o);
    } else {
        /* The CPU's fusion (conv + bias + residual + ReLU), in plain
         * layouts and with the op table's workspaces, which the CUDA
         * backend reads. */
        o.assign_layouts = 0;
        o.backend_workspace = NULL;
        o.backend_workspace_for = NULL;
    }
    dfg_program *p = NULL;
    if (dfg_compile(g, &o, &p) != DFG_OK)
        fail_msg("compile: %s", dfg_last_error());
    return p;
}

static void test_against_cpu(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof input / sizeof input[0]; i++)
        input[i] = random_value();
    dfg_graph *g = residual_cnn();
    dfg_program *p = compile(g, 1);
    size_t n;
    float *cpu = outputs(p, "cpu", NULL, NULL, &n);
    float *dnn = outputs(p, "cuda", NULL, "1", &n);
    float *again = outputs(p, "cuda", NULL, "0", &n);
    float *own = outputs(p, "cuda", "0", NULL, &n);
    /* Strict FP32 on both sides: only the order of the sums differs. */
    assert_true(relative_error(dnn, cpu, n) < 1e-5);
    assert_true(relative_error(own, cpu, n) < 1e-5);
    assert_memory_equal(dnn, again, n * sizeof *dnn);
    free(cpu), free(dnn), free(again), free(own);
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
}

/* The fused programs (the CUDA target's: conv + bias + ReLU, conv + bias
 * + residual + ReLU; and the CPU's, in plain layouts) on the GPU with
 * cuDNN's fused call and on the backend's own path (products accumulated
 * onto the residual, then the epilogue kernel), against the unfused
 * program on the GPU and the CPU. */
static void test_fused_epilogue(void **state)
{
    (void)state;
    dfg_graph *g = residual_cnn();
    dfg_program *fused = compile(g, 1), *for_cpu = compile(g, 0);
    dfg_compile_options o;
    cuda_test_compile_options(&o);
    o.fuse_operators = 0;
    dfg_program *plain = NULL;
    assert_int_equal(dfg_compile(g, &o, &plain), DFG_OK);
    size_t n;
    float *cpu = outputs(plain, "cpu", NULL, NULL, &n);
    float *unfused = outputs(plain, "cuda", NULL, NULL, &n);
    float *dnn = outputs(fused, "cuda", NULL, NULL, &n);
    float *own = outputs(fused, "cuda", "0", NULL, &n);
    float *cpu_fused = outputs(for_cpu, "cuda", "0", NULL, &n);
    assert_true(relative_error(unfused, cpu, n) < 1e-5);
    assert_true(relative_error(dnn, unfused, n) < 1e-5);
    assert_true(relative_error(own, unfused, n) < 1e-5);
    assert_true(relative_error(cpu_fused, unfused, n) < 1e-5);
    free(cpu), free(unfused), free(dnn), free(own), free(cpu_fused);
    dfg_program_destroy(fused);
    dfg_program_destroy(for_cpu);
    dfg_program_destroy(plain);
    dfg_graph_destroy(g);
}

/* y of one run of p on name (cuDNN as given, NULL: on). */
static float *post_ops_output(const dfg_program *p, const char *name,
                              const char *cudnn, const float *x)
{
    dfg_status st;
    dfg_session *s = session(p, name, cudnn, NULL, &st);
    if (!s)
        fail_msg("%s session: %s", name, dfg_last_error());
    float *y = malloc(POST_OPS_GRAPH_OUTPUTS * sizeof *y);
    const void *ins[1] = {x};
    void *outs[1] = {y};
    if (dfg_session_run(s, ins, outs) != DFG_OK)
        fail_msg("%s run: %s", name, dfg_last_error());
    dfg_session_destroy(s);
    return y;
}

/* Every epilogue kind (post_ops_graph.h: SiLU, clip on a depthwise conv,
 * residual + GELU on cuDNN and on the own path, matmul bias + sigmoid,
 * matmul residual + GELU tanh) fused on the GPU as unfused on the GPU and
 * the CPU. */
static void test_every_epilogue(void **state)
{
    (void)state;
    dfg_graph *g = post_ops_graph();
    if (!g)
        fail_msg("%s", dfg_last_error());
    dfg_program *fused = compile(g, 1);
    dfg_compile_options o;
    cuda_test_compile_options(&o);
    o.fuse_operators = 0;
    dfg_program *plain = NULL;
    assert_int_equal(dfg_compile(g, &o, &plain), DFG_OK);
    static float x[POST_OPS_GRAPH_INPUTS];
    for (int i = 0; i < POST_OPS_GRAPH_INPUTS; i++)
        x[i] = random_value() * 2.0f;
    float *cpu = post_ops_output(plain, "cpu", NULL, x);
    float *unfused = post_ops_output(plain, "cuda", NULL, x);
    float *dnn = post_ops_output(fused, "cuda", NULL, x);
    float *own = post_ops_output(fused, "cuda", "0", x);
    size_t n = POST_OPS_GRAPH_OUTPUTS;
    assert_true(relative_error(unfused, cpu, n) < 1e-5);
    assert_true(relative_error(dnn, unfused, n) < 1e-5);
    assert_true(relative_error(own, unfused, n) < 1e-5);
    free(cpu), free(unfused), free(dnn), free(own);
    dfg_program_destroy(fused);
    dfg_program_destroy(plain);
    dfg_graph_destroy(g);
}

/* One run of p on name (each step alone when profiled) with the random
 * inputs of spec's product graph; its first output. */
static float *product_output(const dfg_program *p, const char *name,
                             const product_graph_spec *spec, int profiled)
{
    int64_t in_n[3], out_n[2];
    int32_t n_in, n_out;
    product_graph_sizes(spec, in_n, &n_in, out_n, &n_out);
    seed = 99;
    const void *ins[3] = {NULL};
    void *outs[2] = {malloc((size_t)out_n[0] * sizeof(float)),
                     malloc((size_t)out_n[n_out - 1] * sizeof(float))};
    for (int32_t i = 0; i < n_in; i++) {
        float *v = malloc((size_t)in_n[i] * sizeof *v);
        for (int64_t k = 0; k < in_n[i]; k++)
            v[k] = random_value() * 2.0f;
        ins[i] = v;
    }
    dfg_status st;
    dfg_session *s = session(p, name, NULL, NULL, &st);
    if (!s)
        fail_msg("%s session: %s", name, dfg_last_error());
    double seconds[64];
    st = profiled ? dfg_session_run_profiled(s, ins, outs, seconds)
                  : dfg_session_run(s, ins, outs);
    if (st != DFG_OK)
        fail_msg("%s run: %s", name, dfg_last_error());
    dfg_session_destroy(s);
    for (int32_t i = 0; i < n_in; i++)
        free((void *)ins[i]);
    free(outs[1]);
    return outs[0];
}

/* The runner each product step reports on the device (dfgc bench
 * --profile's "runs on"); NULL for none. */
static const char *product_runner(const dfg_program *p)
{
    static char runner[160];
    runner[0] = '\0';
    dfg_status st;
    dfg_session *s = session(p, "cuda", NULL, NULL, &st);
    if (!s)
        fail_msg("session: %s", dfg_last_error());
    dfg_plan_stats stats;
    dfg_program_stats(p, &stats);
    for (int32_t i = 0; i < stats.n_steps; i++) {
        dfg_step_info info;
        const char *library = NULL;
        assert_int_equal(dfg_program_step_info(p, i, &info), DFG_OK);
        assert_int_equal(dfg_session_step_library(s, i, &library), DFG_OK);
        if (library && (strncmp(info.op, "matmul", 6) == 0 ||
                        strncmp(info.op, "gemm", 4) == 0))
            snprintf(runner, sizeof runner, "%s", library);
    }
    dfg_session_destroy(s);
    return runner;
}

/* Products fused on cuBLASLt (or cuBLAS with the epilogue kernel, naming
 * why) and transposes folded into transa / transb, on the GPU against
 * the unfused program on the CPU; every step timed alone gives the
 * same. */
static void test_products(void **state)
{
    (void)state;
    static const struct {
        product_graph_spec spec;
        const char *runner;
    } cases[] = {
        {{0, 0, 0, 1, 0, PRODUCT_RELU, PRODUCT_PLAIN}, "cuBLASLt RELU_BIAS"},
        {{0, 0, 0, 1, 0, PRODUCT_GELU_TANH, PRODUCT_PLAIN},
         "cuBLASLt GELU_BIAS"},
        {{0, 0, 0, 0, 1, PRODUCT_GELU_TANH, PRODUCT_PLAIN}, "cuBLASLt GELU"},
        {{1, 1, 0, 0, 0, PRODUCT_RELU, PRODUCT_PLAIN}, "cuBLASLt RELU_BIAS"},
        {{1, 2, 0, 0, 0, PRODUCT_RELU, PRODUCT_TRANSPOSE_B}, "cuBLASLt RELU"},
        {{0, 0, 0, 1, 0, PRODUCT_GELU_ERF, PRODUCT_PLAIN},
         "cuBLAS + epilogue kernel (cuBLASLt: an erf GELU"},
        {{0, 0, 1, 0, 0, PRODUCT_NONE, PRODUCT_TRANSPOSE_B}, "cuBLAS"},
        {{0, 0, 1, 0, 0, PRODUCT_RELU, PRODUCT_TRANSPOSE_A},
         "cuBLAS + epilogue kernel (cuBLASLt: a batch"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        dfg_graph *g = product_graph(&cases[c].spec);
        if (!g)
            fail_msg("%s", dfg_last_error());
        dfg_program *fused = compile(g, 1);
        dfg_compile_options o;
        cuda_test_compile_options(&o);
        o.fuse_operators = 0;
        dfg_program *plain = NULL;
        assert_int_equal(dfg_compile(g, &o, &plain), DFG_OK);
        dfg_graph_destroy(g);
        const char *runner = product_runner(fused);
        if (strncmp(runner, cases[c].runner, strlen(cases[c].runner)) != 0)
            fail_msg("case %d runs on '%s', expected '%s...'", (int)c, runner,
                     cases[c].runner);
        int64_t in_n[3], out_n[2];
        int32_t n_in, n_out;
        product_graph_sizes(&cases[c].spec, in_n, &n_in, out_n, &n_out);
        float *cpu = product_output(plain, "cpu", &cases[c].spec, 0);
        float *gpu = product_output(fused, "cuda", &cases[c].spec, 0);
        float *alone = product_output(fused, "cuda", &cases[c].spec, 1);
        double e = relative_error(gpu, cpu, (size_t)out_n[0]);
        if (!(e < 1e-5))
            fail_msg("case %d (%s): relative error %g", (int)c, runner, e);
        assert_memory_equal(alone, gpu, (size_t)out_n[0] * sizeof *gpu);
        free(cpu), free(gpu), free(alone);
        dfg_program_destroy(fused);
        dfg_program_destroy(plain);
    }
}

/* The loss after three training steps of the bundled cnn: the same bits
 * from two sessions (deterministic backward algorithms), close to the
 * backend's own path. */
static void test_training_bitwise(void **state)
{
    (void)state;
    dfg_graph *g;
    assert_int_equal(dfg_model_build_training("cnn", NULL, &g), DFG_OK);
    dfg_training_options t;
    dfg_training_options_init(&t);
    t.loss = "loss";
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    cuda_test_compile_options(&o);
    o.training = &t;
    dfg_program *p;
    if (dfg_compile(g, &o, &p) != DFG_OK)
        fail_msg("compile: %s", dfg_last_error());
    static float x[32 * 8 * 8];
    int64_t labels[32];
    for (int i = 0; i < 32 * 64; i++)
        x[i] = random_value() + 0.5f;
    for (int i = 0; i < 32; i++)
        labels[i] = i % 10;
    float loss[3][3];
    const char *cudnn[3] = {NULL, NULL, "0"};
    for (int k = 0; k < 3; k++) {
        dfg_status st;
        dfg_session *s = session(p, "cuda", cudnn[k], NULL, &st);
        if (!s)
            fail_msg("session: %s", dfg_last_error());
        const void *ins[2] = {x, labels};
        for (int step = 0; step < 3; step++) {
            void *outs[1] = {&loss[k][step]};
            if (dfg_session_run(s, ins, outs) != DFG_OK)
                fail_msg("run: %s", dfg_last_error());
        }
        dfg_session_destroy(s);
    }
    assert_memory_equal(loss[0], loss[1], sizeof loss[0]);
    for (int step = 0; step < 3; step++)
        assert_true(fabsf(loss[0][step] - loss[2][step]) <=
                    1e-4f * fabsf(loss[2][step]) + 1e-5f);
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
}

int main(void)
{
    int ready = cuda_test_device_ready();
    if (ready != 0)
        return ready;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_cpu),
        cmocka_unit_test(test_fused_epilogue),
        cmocka_unit_test(test_every_epilogue),
        cmocka_unit_test(test_products),
        cmocka_unit_test(test_training_bitwise),
    };
#ifndef DFG_HAVE_CUDNN
    puts("the CUDA backend is built without cuDNN (the 'cudnn' feature)");
    return 77;
#endif
    return cmocka_run_group_tests(tests, NULL, NULL);
}
