/* The executor's whole-run path (runtime/backend.h, reserve_io and
 * run_io: the CUDA backend stages a run's inputs and outputs through
 * pinned memory and synchronises once): a backend with those calls (the
 * CPU backend's copies and steps behind them, counted) gets its staging
 * reserved once at session creation for every input and output byte, and
 * one call per run with each input's and output's host buffer, region
 * address and size (none for NULL inputs or outputs), and computes what
 * the CPU backend computes; a failure names the step. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dfg/dfg.h"
#include "runtime/backend.h"
#include "util/error.h"

static struct {
    int reserves, runs;
    size_t reserved;
    int32_t n_inputs, n_outputs;
    size_t in_bytes[4], out_bytes[4];
    const void *in_host[4];
    int fail_step; /* >= 0: run_io fails there */
} seen;

static dfg_status reserve_io(dfg_backend_context *c, size_t bytes)
{
    (void)c;
    seen.reserves++;
    seen.reserved = bytes;
    return DFG_OK;
}

static dfg_status run_io(dfg_backend_context *c,
                         const dfg_backend_transfer *inputs, int32_t n_inputs,
                         const dfg_backend_transfer *outputs,
                         int32_t n_outputs, int32_t *failed_step)
{
    seen.runs++;
    seen.n_inputs = n_inputs;
    seen.n_outputs = n_outputs;
    for (int32_t i = 0; i < n_inputs && i < 4; i++) {
        seen.in_bytes[i] = inputs[i].bytes;
        seen.in_host[i] = inputs[i].host;
    }
    for (int32_t i = 0; i < n_outputs && i < 4; i++)
        seen.out_bytes[i] = outputs[i].bytes;
    if (seen.fail_step >= 0) {
        *failed_step = seen.fail_step;
        return dfg_error(DFG_ERR_DEVICE, "a device fault");
    }
    const dfg_backend *cpu = &dfg_cpu_backend;
    dfg_status st = DFG_OK;
    for (int32_t i = 0; i < n_inputs && st == DFG_OK; i++)
        st = cpu->upload(c, inputs[i].region, inputs[i].host, inputs[i].bytes);
    if (st == DFG_OK)
        st = cpu->run_all(c, failed_step);
    if (st == DFG_OK)
        st = cpu->synchronize(c);
    for (int32_t i = 0; i < n_outputs && st == DFG_OK; i++)
        st = cpu->download(c, outputs[i].host, outputs[i].region,
                           outputs[i].bytes);
    return st;
}

static dfg_backend staged;

static void setup_backend(void)
{
    staged = dfg_cpu_backend;
    /* The CPU's name: the program's steps then get the workspaces its
     * kernels were planned with (executor.c). */
    staged.run_step = NULL;
    staged.reserve_io = reserve_io;
    staged.run_io = run_io;
}

static dfg_program *mlp(void)
{
    dfg_graph *g;
    assert_int_equal(dfg_model_build("mlp", NULL, &g), DFG_OK);
    dfg_program *p;
    assert_int_equal(dfg_compile(g, NULL, &p), DFG_OK);
    dfg_graph_destroy(g);
    return p;
}

static void test_one_call_per_run(void **state)
{
    (void)state;
    setup_backend();
    memset(&seen, 0, sizeof seen);
    seen.fail_step = -1;
    dfg_program *p = mlp();
    assert_int_equal(dfg_program_num_inputs(p), 1);
    assert_int_equal(dfg_program_num_outputs(p), 1);
    dfg_tensor_info in, out;
    assert_int_equal(dfg_program_input_info(p, 0, &in), DFG_OK);
    assert_int_equal(dfg_program_output_info(p, 0, &out), DFG_OK);
    size_t in_bytes = sizeof(float) * (size_t)(in.shape[0] * in.shape[1]);
    size_t out_bytes = sizeof(float) * (size_t)(out.shape[0] * out.shape[1]);

    dfg_session *s, *reference;
    const dfg_backend *cpu;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    assert_int_equal(dfg_session_create(p, &staged, NULL, &s), DFG_OK);
    assert_int_equal(dfg_session_create(p, cpu, NULL, &reference), DFG_OK);
    assert_int_equal(seen.reserves, 1);
    assert_int_equal(seen.reserved, in_bytes + out_bytes);

    float *x = malloc(in_bytes), *y = malloc(out_bytes), *want = malloc(out_bytes);
    for (size_t i = 0; i < in_bytes / sizeof *x; i++)
        x[i] = (float)((i * 37) % 17) / 16.0f;
    const void *ins[1] = {x};
    void *outs[1] = {y}, *wants[1] = {want};
    for (int run = 1; run <= 2; run++) {
        assert_int_equal(dfg_session_run(s, ins, outs), DFG_OK);
        assert_int_equal(seen.runs, run);
        assert_int_equal(seen.n_inputs, 1);
        assert_int_equal(seen.n_outputs, 1);
        assert_int_equal(seen.in_bytes[0], in_bytes);
        assert_ptr_equal(seen.in_host[0], x);
        assert_int_equal(seen.out_bytes[0], out_bytes);
    }
    assert_int_equal(dfg_session_run(reference, ins, wants), DFG_OK);
    assert_memory_equal(y, want, out_bytes);
    assert_int_equal(seen.reserves, 1);

    /* No outputs asked for: no output copies; a NULL entry: refused
     * before the backend is called. */
    assert_int_equal(dfg_session_run(s, ins, NULL), DFG_OK);
    assert_int_equal(seen.n_outputs, 0);
    outs[0] = NULL;
    assert_int_equal(dfg_session_run(s, ins, outs), DFG_ERR_INVALID_ARGUMENT);
    assert_int_equal(seen.runs, 3);

    /* A failed run names its step. */
    seen.fail_step = 0;
    outs[0] = y;
    assert_int_equal(dfg_session_run(s, ins, outs), DFG_ERR_DEVICE);
    assert_non_null(strstr(dfg_last_error(), "step 0"));
    assert_non_null(strstr(dfg_last_error(), "a device fault"));

    free(x), free(y), free(want);
    dfg_session_destroy(s);
    dfg_session_destroy(reference);
    dfg_program_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_call_per_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
