/* A saved view is recomputed with the value it views
 * (passes/remat/remat_core.c): attention's context, a transpose that the
 * output projection's weight gradient reads through a reshape, is kept
 * for that reader alone, so under a memory budget the reshape is made
 * again from the transpose made again, and the transpose's bytes are free
 * in between. Here: x -> matmul -> transpose -> reshape r -> four
 * matmul+tanh layers -> mse; r's weight gradient is the only backward
 * reader of the transpose. The budget is met by that chain (8 FLOPs a
 * byte) rather than by a tanh layer (16), the plan verifies, and six
 * Adam steps give the losses of the unconstrained program. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "dfg/dfg.h"
#include "program/program_flops.h"
#include "tests/support/training_options.h"

#define OK(x) assert_int_equal((x), DFG_OK)
#define BATCH 256
#define ROWS 2
#define COLS 16
#define WIDTH (ROWS * COLS)
#define OUT 8
#define LAYERS 4

static uint64_t next(uint64_t *r)
{
    *r = *r * 6364136223846793005ULL + 1442695040888963407ULL;
    return *r;
}

static dfg_value weight(dfg_graph *g, const char *name, int64_t rows,
                        int64_t cols, uint64_t *r)
{
    static float data[WIDTH * WIDTH];
    float scale = 1.0f / sqrtf((float)rows);
    for (int64_t i = 0; i < rows * cols; i++)
        data[i] = ((float)(next(r) >> 40) / (float)(1 << 24) - 0.5f) * scale;
    dfg_value w;
    OK(dfg_graph_weight(g, name, DFG_F32, 2, (int64_t[]){rows, cols}, data,
                        &w));
    return w;
}

static dfg_graph *transposed_context(void)
{
    dfg_graph *g;
    dfg_value x, a, t, v, h;
    uint64_t r = 11;
    OK(dfg_graph_create(NULL, &g));
    OK(dfg_graph_input(g, "x", DFG_F32, 3, (int64_t[]){BATCH, ROWS, COLS},
                       &x));
    OK(dfg_matmul(g, x, weight(g, "w_in", COLS, COLS, &r), &a));
    OK(dfg_transpose(g, a, 3, (int64_t[]){0, 2, 1}, &t));
    OK(dfg_reshape(g, t, 2, (int64_t[]){BATCH, WIDTH}, &v));
    h = v;
    for (int layer = 0; layer < LAYERS; layer++) {
        char name[16];
        snprintf(name, sizeof name, "w%d", layer);
        OK(dfg_matmul(g, h, weight(g, name, WIDTH, WIDTH, &r), &h));
        OK(dfg_tanh(g, h, &h));
    }
    OK(dfg_matmul(g, h, weight(g, "w_out", WIDTH, OUT, &r), &h));
    OK(dfg_graph_output(g, h, "prediction"));
    OK(dfg_graph_add_loss(g, DFG_LOSS_MSE, NULL));
    return g;
}

static dfg_status compile(uint64_t budget_bytes, dfg_program **p)
{
    return training_compile_adam(transposed_context(), budget_bytes, p);
}

static void run_steps(const dfg_program *p, float *losses)
{
    const dfg_backend *cpu;
    dfg_session *s;
    OK(dfg_backend_find("cpu", &cpu));
    OK(dfg_session_create(p, cpu, NULL, &s));
    static float x[BATCH * WIDTH], targets[BATCH * OUT];
    uint64_t r = 5;
    for (int i = 0; i < BATCH * WIDTH; i++)
        x[i] = (float)(next(&r) >> 40) / (float)(1 << 24) - 0.5f;
    for (int i = 0; i < BATCH * OUT; i++)
        targets[i] = (float)((next(&r) >> 20) & 0xff) / 256.0f - 0.5f;
    for (int step = 0; step < 6; step++) {
        const void *in[2] = {x, targets};
        float norms[8];
        void *out[2] = {&losses[step], norms};
        OK(dfg_session_run(s, in, out));
    }
    dfg_session_destroy(s);
}

/* 1 if a step that recomputes is a reshape. */
static int recomputes_a_reshape(const dfg_program *p)
{
    dfg_plan_stats stats;
    dfg_program_stats(p, &stats);
    for (int32_t s = 0; s < stats.n_steps; s++) {
        dfg_step_info info;
        OK(dfg_program_step_info(p, s, &info));
        if (strcmp(info.op, "reshape") == 0 &&
            strstr(info.name, "/recompute_"))
            return 1;
    }
    return 0;
}

static void test_the_view_comes_back_with_its_transpose(void **state)
{
    (void)state;
    dfg_program *free_plan, *tight;
    OK(compile(0, &free_plan));
    dfg_plan_stats a, b;
    dfg_program_stats(free_plan, &a);
    /* The transpose is 32 KiB; half of it must go. */
    uint64_t budget = a.arena_bytes - (uint64_t)BATCH * WIDTH * 2;
    if (compile(budget, &tight) != DFG_OK)
        fail_msg("%s", dfg_last_error());
    dfg_program_stats(tight, &b);
    assert_true(b.arena_bytes <= budget);
    OK(dfg_program_verify(tight));
    assert_true(recomputes_a_reshape(tight));
    assert_false(recomputes_a_reshape(free_plan));
    /* The chain's matmul alone, no tanh layer's. */
    int32_t steps;
    uint64_t extra, other;
    dfg_program_recomputation(tight, &steps, &extra, &other);
    assert_true(steps > 0);
    assert_int_equal(extra, 2ull * BATCH * ROWS * COLS * COLS);
    float losses[6], others[6];
    run_steps(free_plan, losses);
    run_steps(tight, others);
    for (int step = 0; step < 6; step++)
        assert_float_equal(losses[step], others[step],
                           1e-6 * fabsf(losses[step]));
    assert_true(losses[5] < losses[0]);
    dfg_program_destroy(free_plan);
    dfg_program_destroy(tight);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_view_comes_back_with_its_transpose),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
