/* Attention on a GPU (suite 'cuda'): the BERT-like graph
 * (attention_graph.h) compiled for the CUDA target runs its fused
 * attention step on the device as the CPU runs the unfused graph: f32 on
 * the unfused steps (cuBLAS + softmax kernel, within 1e-5), and f16
 * without a mask on cuDNN's fused attention where the build has cuDNN
 * (its step says so; within 1e-2 of the f32 CPU run). Exits 77 (skipped),
 * saying why, when the backend is not built or cannot run here. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dfg/compile.h"
#include "dfg/session.h"
#include "math/elementwise.h"
#include "tests/cuda/cuda_test_device.h"
#include "tests/support/attention_graph.h"

static uint32_t seed = 2024;

static float random_value(void)
{
    seed = seed * 1664525u + 1013904223u;
    return (float)(seed >> 8) / 8388608.0f - 1.0f;
}

static const dfg_backend *backend(const char *name)
{
    const dfg_backend *b = NULL;
    assert_int_equal(dfg_backend_find(name, &b), DFG_OK);
    return b;
}

static dfg_program *compile(attention_variant v, dfg_dtype dtype, int cuda)
{
    dfg_graph *g = attention_graph(v, dtype);
    dfg_compile_options o;
    if (cuda)
        cuda_test_compile_options(&o);
    else
        dfg_compile_options_init(&o);
    dfg_program *p = NULL;
    if (!g || dfg_compile(g, &o, &p) != DFG_OK)
        fail_msg("%s", dfg_last_error());
    dfg_graph_destroy(g);
    return p;
}

/* Runs p on the backend from inputs in[]; the output as f32. What ran
 * the session's attention step into runs_on ("" for the backend's own
 * kernels). */
static void run(const dfg_program *p, const char *name, void **in,
                dfg_dtype dtype, float *out, char runs_on[160])
{
    dfg_session *s = NULL;
    uint16_t narrow[ATTENTION_OUT];
    void *outs[1] = {dtype == DFG_F32 ? (void *)out : narrow};
    if (dfg_session_create(p, backend(name), NULL, &s) != DFG_OK ||
        dfg_session_run(s, (const void *const *)in, outs) != DFG_OK)
        fail_msg("%s: %s", name, dfg_last_error());
    for (int i = 0; dtype != DFG_F32 && i < ATTENTION_OUT; i++)
        out[i] = dfg_f16_to_f32(narrow[i]);
    dfg_plan_stats stats;
    dfg_program_stats(p, &stats);
    runs_on[0] = '\0';
    for (int32_t i = 0; i < stats.n_steps; i++) {
        dfg_step_info info;
        const char *library = NULL;
        if (dfg_program_step_info(p, i, &info) == DFG_OK &&
            strcmp(info.op, "attention") == 0) {
            assert_int_equal(dfg_session_step_library(s, i, &library), DFG_OK);
            snprintf(runs_on, 160, "%s", library ? library : "");
        }
    }
    dfg_session_destroy(s);
}

static double distance(const float *a, const float *b)
{
    double diff = 0.0, norm = 0.0;
    for (int i = 0; i < ATTENTION_OUT; i++) {
        diff += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        norm += (double)b[i] * b[i];
    }
    return sqrt(diff / norm);
}

static void check(attention_variant v, dfg_dtype dtype, double tolerance)
{
    dfg_program *fused = compile(v, dtype, 1), *plain = compile(v, DFG_F32, 0);
    assert_int_equal(attention_steps(fused), 1);
    float *in[4];
    uint16_t *narrow[4];
    for (int i = 0; i < 4; i++) {
        int64_t n = i == 3 ? ATTENTION_MASK : ATTENTION_QKV;
        in[i] = malloc((size_t)n * sizeof(float));
        narrow[i] = malloc((size_t)n * sizeof(uint16_t));
        for (int64_t j = 0; j < n; j++) {
            narrow[i][j] = dfg_f32_to_f16(2.0f * random_value());
            in[i][j] = dfg_f16_to_f32(narrow[i][j]);
        }
    }
    float want[ATTENTION_OUT], got[ATTENTION_OUT];
    char cpu_runs_on[160], runs_on[160];
    run(plain, "cpu", (void **)in, DFG_F32, want, cpu_runs_on);
    run(fused, "cuda", dtype == DFG_F32 ? (void **)in : (void **)narrow,
        dtype, got, runs_on);
    printf("%s attention runs on: %s\n", dfg_dtype_name(dtype), runs_on);
    assert_non_null(strstr(runs_on, dtype == DFG_F32 ? "not f32" : "cuDNN"));
#ifdef DFG_HAVE_CUDNN
    if (dtype != DFG_F32)
        assert_string_equal(runs_on, "cuDNN fused attention");
#endif
    if (!(distance(got, want) < tolerance))
        fail_msg("%s: cuda vs cpu %g", dfg_dtype_name(dtype),
                 distance(got, want));
    for (int i = 0; i < 4; i++)
        free(in[i]), free(narrow[i]);
    dfg_program_destroy(fused);
    dfg_program_destroy(plain);
}

static void test_f32_unfused_steps(void **state)
{
    (void)state;
    check(ATTENTION_BERT, DFG_F32, 1e-5);
}

static void test_f16_on_cudnn(void **state)
{
    (void)state;
    check(ATTENTION_NO_MASK, DFG_F16, 1e-2);
}

int main(void)
{
    int ready = cuda_test_device_ready();
    if (ready != 0)
        return ready;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f32_unfused_steps),
        cmocka_unit_test(test_f16_on_cudnn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
