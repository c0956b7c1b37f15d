/* BLAS scratch planned into matmul, gemm and conv2d steps for device
 * backends (dfg_compile_options.blas_workspace_bytes). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "dfg/dfg.h"
#include "program/program.h"

#define OK(call) assert_int_equal((call), DFG_OK)

static dfg_program *compile_model(const char *name, uint64_t blas_bytes)
{
    dfg_graph *graph;
    OK(dfg_model_build(name, NULL, &graph));
    dfg_compile_options options;
    dfg_compile_options_init(&options);
    options.blas_workspace_bytes = blas_bytes;
    /* A device's program: the CPU backend's rule plans nothing here. */
    options.backend_workspace = NULL;
    options.backend_workspace_for = NULL;
    dfg_program *program;
    OK(dfg_compile(graph, &options, &program));
    dfg_graph_destroy(graph);
    return program;
}

/* The bytes of step s's op's workspace rule on its operands. */
static int64_t rule_bytes(const dfg_program *p, int32_t s)
{
    const dfg_program_step *st = &p->steps[s];
    dfg_type in[8], out = p->tensors[st->outputs[0]].type;
    for (int32_t i = 0; i < st->n_inputs && i < 8; i++)
        in[i] = st->inputs[i] >= 0 ? p->tensors[st->inputs[i]].type
                                   : (dfg_type){DFG_F32, -1, {0}, 0};
    const dfg_op_info *info = dfg_op_get(st->op);
    return info->workspace ? info->workspace(&st->attrs, in, st->n_inputs,
                                             &out, 1)
                           : 0;
}

/* Every BLAS step gets its op's own bytes (in full: the plan shrinks a
 * conv's only without scratch, passes/workspace_fit.c) plus the scratch
 * after a 256-byte boundary; no other step gets any; the plan still
 * verifies. */
static void blas_steps_carry_the_scratch(void **state)
{
    (void)state;
    const uint64_t blas = 1 << 20;
    const char *models[] = {"mlp", "cnn", "transformer"};
    for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
        dfg_program *plain = compile_model(models[m], 0);
        dfg_program *device = compile_model(models[m], blas);
        assert_int_equal(plain->n_steps, device->n_steps);
        int blas_steps = 0;
        for (int32_t s = 0; s < device->n_steps; s++) {
            const dfg_program_step *a = &plain->steps[s], *b = &device->steps[s];
            int64_t own = a->workspace >= 0 ? plain->tensors[a->workspace].bytes : 0;
            int64_t got = b->workspace >= 0 ? device->tensors[b->workspace].bytes : 0;
            if (dfg_op_uses_blas(b->op)) {
                blas_steps++;
                assert_int_equal(got, dfg_align_up(rule_bytes(device, s), 256) +
                                          (int64_t)blas);
            } else {
                assert_int_equal(got, own);
            }
        }
        assert_true(blas_steps > 0);
        dfg_plan_stats stats;
        dfg_program_stats(device, &stats);
        assert_true(stats.verified);
        OK(dfg_program_verify(device));
        dfg_program_destroy(plain);
        dfg_program_destroy(device);
    }
}

/* The loader accepts the scratch, and the CPU backend runs such a program
 * to the outputs of one without it (within float rounding: without
 * scratch, a conv at the peak may have a smaller workspace, whose chunks
 * sum in another order). */
static void programs_with_scratch_load_and_run(void **state)
{
    (void)state;
    dfg_program *plain = compile_model("cnn", 0);
    dfg_program *device = compile_model("cnn", 4096);
    char path[] = "/tmp/dfg-blas-workspace-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    OK(dfg_program_save(device, path));
    dfg_program *loaded;
    OK(dfg_program_load(path, NULL, &loaded));
    remove(path);

    const dfg_backend *cpu;
    OK(dfg_backend_find("cpu", &cpu));
    dfg_tensor_info in_info, out_info;
    OK(dfg_program_input_info(plain, 0, &in_info));
    OK(dfg_program_output_info(plain, 0, &out_info));
    size_t n_in = 1, n_out = 1;
    for (int32_t i = 0; i < in_info.rank; i++)
        n_in *= (size_t)in_info.shape[i];
    for (int32_t i = 0; i < out_info.rank; i++)
        n_out *= (size_t)out_info.shape[i];
    float *x = malloc(n_in * sizeof *x);
    float *y0 = malloc(n_out * sizeof *y0), *y1 = malloc(n_out * sizeof *y1);
    assert_non_null(x);
    assert_non_null(y0);
    assert_non_null(y1);
    srand(7);
    for (size_t i = 0; i < n_in; i++)
        x[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    dfg_program *programs[2] = {plain, loaded};
    float *outputs[2] = {y0, y1};
    for (int k = 0; k < 2; k++) {
        dfg_session *session;
        OK(dfg_session_create(programs[k], cpu, NULL, &session));
        const void *inputs[] = {x};
        void *outs[] = {outputs[k]};
        OK(dfg_session_run(session, inputs, outs));
        dfg_session_destroy(session);
    }
    double diff = 0.0, norm = 0.0;
    for (size_t i = 0; i < n_out; i++) {
        diff += ((double)y0[i] - y1[i]) * ((double)y0[i] - y1[i]);
        norm += (double)y1[i] * y1[i];
    }
    assert_true(norm > 0.0 && sqrt(diff / norm) < 1e-6);
    free(x);
    free(y0);
    free(y1);
    dfg_program_destroy(plain);
    dfg_program_destroy(device);
    dfg_program_destroy(loaded);
}

static void too_much_scratch_is_rejected(void **state)
{
    (void)state;
    dfg_graph *graph;
    OK(dfg_model_build("mlp", NULL, &graph));
    dfg_compile_options options;
    dfg_compile_options_init(&options);
    options.blas_workspace_bytes = DFG_MAX_BLAS_WORKSPACE + 1;
    dfg_program *program = NULL;
    assert_int_equal(dfg_compile(graph, &options, &program),
                     DFG_ERR_INVALID_ARGUMENT);
    assert_null(program);
    assert_non_null(strstr(dfg_last_error(), "blas_workspace_bytes"));
    dfg_graph_destroy(graph);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(blas_steps_carry_the_scratch),
        cmocka_unit_test(programs_with_scratch_load_and_run),
        cmocka_unit_test(too_much_scratch_is_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
