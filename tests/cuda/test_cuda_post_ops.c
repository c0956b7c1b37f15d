/* Fused products on the emulated CUDA backend (cuda_emulator.h): the
 * graph of post_ops_graph.h compiled for the CUDA target (with fusion)
 * has every fusion in it, and runs as the CPU runs its unfused form, on
 * the backend's own path (products accumulated onto the residual, then
 * the epilogue kernel's per-element code). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dfg/compile.h"
#include "dfg/program.h"
#include "dfg/session.h"
#include "runtime/cuda/plan/target.h"
#include "tests/cuda/cuda_emulator.h"
#include "tests/cuda/post_ops_graph.h"
#include "util/error.h"

static float *run_once(const dfg_program *p, const dfg_backend *b,
                       const float *x)
{
    dfg_session *s = NULL;
    if (dfg_session_create(p, b, NULL, &s) != DFG_OK)
        fail_msg("%s", dfg_last_error());
    float *y = calloc(POST_OPS_GRAPH_OUTPUTS, sizeof *y);
    const void *ins[1] = {x};
    void *outs[1] = {y};
    if (dfg_session_run(s, ins, outs) != DFG_OK)
        fail_msg("%s", dfg_last_error());
    dfg_session_destroy(s);
    return y;
}

static void test_fused_vs_unfused(void **state)
{
    (void)state;
    dfg_graph *g = post_ops_graph();
    if (!g)
        fail_msg("%s", dfg_last_error());
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    assert_int_equal(dfg_compile_options_for(&o, &dfg_cuda_target), DFG_OK);
    dfg_program *fused = NULL, *plain = NULL;
    if (dfg_compile(g, &o, &fused) != DFG_OK)
        fail_msg("%s", dfg_last_error());
    o.fuse_operators = 0;
    assert_int_equal(dfg_compile(g, &o, &plain), DFG_OK);
    dfg_graph_destroy(g);
    dfg_plan_stats fs, ps;
    dfg_program_stats(fused, &fs);
    dfg_program_stats(plain, &ps);
    assert_int_equal(ps.n_steps - fs.n_steps, POST_OPS_GRAPH_FUSED_AWAY);
    const dfg_backend *cpu = NULL;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    float *x = malloc(POST_OPS_GRAPH_INPUTS * sizeof *x);
    for (int i = 0; i < POST_OPS_GRAPH_INPUTS; i++)
        x[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
    float *want = run_once(plain, cpu, x);
    float *got = run_once(fused, &cuda_emulator_backend, x);
    double diff = 0, norm = 0;
    for (int i = 0; i < POST_OPS_GRAPH_OUTPUTS; i++) {
        diff += ((double)got[i] - want[i]) * ((double)got[i] - want[i]);
        norm += (double)want[i] * want[i];
    }
    if (!(sqrt(diff / norm) < 1e-5))
        fail_msg("fused on the emulated backend vs unfused on the CPU: "
                 "relative error %g", sqrt(diff / norm));
    free(x), free(want), free(got);
    dfg_program_destroy(fused);
    dfg_program_destroy(plain);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fused_vs_unfused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
