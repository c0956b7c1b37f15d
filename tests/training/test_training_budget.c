/* Training steps of the bundled cnn within memory budgets: the cheap
 * recomputations every step makes, the budgets' recomputations and fused
 * weight updates, and an epoch under a budget ending with the weights of
 * an epoch without one (passes/remat*.c, passes/remat/fuse_weight_update.c). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "dfg/dfg.h"
#include "program/program.h"
#include "tests/training/training_fixtures.h"
#include "tests/support/training_options.h"

/* Without a budget, on dfg's kernels as a budgeted step is
 * (compile_bundled_training_reference); with one, as a user compiles it. */
static dfg_program *compile_cnn_accumulating(float budget_percent,
                                             int32_t accumulate)
{
    dfg_training_options t;
    dfg_training_options_init(&t);
    t.optimizer = DFG_OPTIMIZER_ADAM;
    t.learning_rate = 0.003f;
    t.memory_budget_percent = budget_percent;
    t.accumulate = accumulate;
    return budget_percent > 0.0f
               ? compile_bundled_training("cnn", &t)
               : compile_bundled_training_reference("cnn", &t);
}

static dfg_program *compile_cnn(float budget_percent)
{
    return compile_cnn_accumulating(budget_percent, 1);
}

/* The cnn's step without a budget and within budget_percent of its
 * arena, verified. */
static void compile_within(float budget_percent, dfg_program **free_plan,
                           dfg_program **budget)
{
    *free_plan = compile_cnn(0.0f);
    *budget = compile_cnn(budget_percent);
    dfg_plan_stats a, b;
    dfg_program_stats(*free_plan, &a);
    dfg_program_stats(*budget, &b);
    assert_true((double)b.arena_bytes <=
                (double)a.arena_bytes * budget_percent / 100.0);
    assert_true(b.verified);
}

static int count_recomputed(const dfg_program *p)
{
    int n = 0;
    for (int32_t s = 0; s < p->n_steps; s++)
        n += strstr(p->steps[s].name, "/recompute_") != NULL;
    return n;
}

/* Steps computing a conv's weight gradient inside its update. */
static int count_fused_updates(const dfg_program *p)
{
    int n = 0;
    for (int32_t s = 0; s < p->n_steps; s++)
        n += p->steps[s].op == DFG_OP_CONV2D_WEIGHT_ADAM_UPDATE;
    return n;
}

/* Input gradients that read a copy of their weight made before its
 * fused update and run after it (passes/remat/fuse_weight_update.c). */
static int count_input_gradients_after_update(const dfg_program *p)
{
    int n = 0;
    for (int32_t c = 0; c < p->n_steps; c++) {
        if (!strstr(p->steps[c].name, "/before_update"))
            continue;
        for (int32_t u = c + 1; u < p->n_steps; u++) {
            if (p->steps[u].op != DFG_OP_CONV2D_WEIGHT_ADAM_UPDATE ||
                p->steps[u].inputs[2] != p->steps[c].inputs[0])
                continue;
            for (int32_t s = u + 1; s < p->n_steps; s++)
                n += p->steps[s].op == DFG_OP_CONV2D_GRAD_INPUT &&
                     p->steps[s].inputs[1] == p->steps[c].outputs[0];
        }
    }
    return n;
}

/* An epoch's worth of runs (44 batches of 32 digits-sized images) of
 * free_plan and budget: the same losses and then the same weights, seen
 * through an inference program's outputs, within 1e-6 relative. */
static void assert_same_epoch(const dfg_program *free_plan,
                              const dfg_program *budget)
{
    const dfg_backend *cpu;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    dfg_session *sa, *sb;
    assert_int_equal(dfg_session_create(free_plan, cpu, NULL, &sa), DFG_OK);
    assert_int_equal(dfg_session_create(budget, cpu, NULL, &sb), DFG_OK);
    static float x[32 * 64];
    static int64_t labels[32];
    float loss_a, loss_b, norms_a[64], norms_b[64];
    uint64_t r = 12345;
    for (int run = 0; run < 44; run++) {
        for (int i = 0; i < 32 * 64; i++) {
            r = r * 6364136223846793005ULL + 1442695040888963407ULL;
            x[i] = (float)(r >> 40) / (float)(1 << 24);
        }
        for (int i = 0; i < 32; i++)
            labels[i] = (int64_t)((r >> (i % 32)) % 10);
        const void *in[2] = {x, labels};
        void *out_a[2] = {&loss_a, norms_a}, *out_b[2] = {&loss_b, norms_b};
        assert_int_equal(dfg_session_run(sa, in, out_a), DFG_OK);
        assert_int_equal(dfg_session_run(sb, in, out_b), DFG_OK);
        assert_float_equal(loss_a, loss_b, 1e-6 * fabsf(loss_a));
    }
    /* The weights, through an inference program's output. */
    dfg_graph *g;
    dfg_program *eval;
    dfg_session *ea, *eb;
    assert_int_equal(dfg_model_build("cnn", NULL, &g), DFG_OK);
    assert_int_equal(dfg_compile(g, NULL, &eval), DFG_OK);
    dfg_graph_destroy(g);
    assert_int_equal(dfg_session_create(eval, cpu, NULL, &ea), DFG_OK);
    assert_int_equal(dfg_session_create(eval, cpu, NULL, &eb), DFG_OK);
    assert_int_equal(dfg_session_copy_weights(ea, sa, NULL), DFG_OK);
    assert_int_equal(dfg_session_copy_weights(eb, sb, NULL), DFG_OK);
    float probs_a[320], probs_b[320];
    const void *in[1] = {x};
    void *out_a[1] = {probs_a}, *out_b[1] = {probs_b};
    assert_int_equal(dfg_session_run(ea, in, out_a), DFG_OK);
    assert_int_equal(dfg_session_run(eb, in, out_b), DFG_OK);
    for (int i = 0; i < 320; i++)
        assert_float_equal(probs_a[i], probs_b[i], 1e-6 * fabsf(probs_a[i]) + 1e-12);
    dfg_session_destroy(ea);
    dfg_session_destroy(eb);
    dfg_program_destroy(eval);
    dfg_session_destroy(sa);
    dfg_session_destroy(sb);
}

/* Without a budget, a training step recomputes only cheap elementwise
 * chains (batch norm from its statistics, relu, add; under 1% more
 * FLOPs), relu's comparison reads the recomputed output in backward (no
 * mask is kept across the step), and the arena is well under the 1.50
 * MiB the cnn needs keeping every relu output. */
static void test_cheap_recomputation_by_default(void **state)
{
    (void)state;
    dfg_program *p = compile_cnn(0.0f);
    dfg_plan_stats stats;
    dfg_program_stats(p, &stats);
    assert_true(stats.arena_bytes < 1200 * 1024);
    int32_t loss_step = -1, recomputed = 0;
    uint64_t extra = 0, other = 0;
    for (int32_t s = 0; s < p->n_steps; s++) {
        const dfg_program_step *step = &p->steps[s];
        if (step->op == DFG_OP_SOFTMAX_CROSS_ENTROPY)
            loss_step = s;
        if (step->op == DFG_OP_GREATER)
            assert_true(loss_step >= 0 && s > loss_step);
        if (strstr(step->name, "/recompute_")) {
            recomputed++;
            assert_true(step->op == DFG_OP_BATCH_NORM ||
                        step->op == DFG_OP_RELU || step->op == DFG_OP_ADD);
            extra += (uint64_t)step->flops;
        } else {
            other += (uint64_t)step->flops;
        }
    }
    assert_true(recomputed > 0);
    assert_true(extra * 100 < other);
    dfg_program_destroy(p);
}

/* Every training step recomputes cheap chains (batch norm and relu from
 * the conv output batch norm's backward keeps, passes/remat/remat_cheap.c):
 * the unconstrained arena is 1.01 MiB, not 1.50. Under a memory budget of
 * 95% of it, the convs' weight gradients are computed inside their
 * updates (passes/remat/fuse_weight_update.c), some input gradients then run
 * after them on a copy of the weight, more saved activations (convs)
 * are recomputed and the arena fits, and an epoch's worth of runs (44
 * batches) ends with the same weights: every recomputation is bit for
 * bit the forward's, every fused gradient the unfused one's. An
 * unreachable budget is an error naming the smallest arena reached. */
static void test_memory_budget_keeps_the_results(void **state)
{
    (void)state;
    dfg_program *free_plan, *budget;
    compile_within(95.0f, &free_plan, &budget);
    assert_true(count_recomputed(free_plan) > 0);
    assert_true(count_recomputed(budget) > count_recomputed(free_plan));
    assert_int_equal(count_fused_updates(free_plan), 0);
    assert_int_equal(count_fused_updates(budget), 8);
    assert_int_equal(count_input_gradients_after_update(free_plan), 0);
    assert_true(count_input_gradients_after_update(budget) > 0);
    assert_same_epoch(free_plan, budget);
    dfg_program_destroy(free_plan);
    dfg_program_destroy(budget);

    dfg_graph *cnn;
    assert_int_equal(dfg_model_build_training("cnn", NULL, &cnn), DFG_OK);
    dfg_training_options t;
    dfg_compile_options o;
    training_compile_options(&t, &o);
    t.memory_budget_bytes = 4096;
    dfg_program *p = NULL;
    assert_int_equal(dfg_compile(cnn, &o, &p), DFG_ERR_PLAN);
    assert_non_null(strstr(dfg_last_error(), "memory budget 4096 bytes cannot "
                                             "be met"));
    /* Below a batch-norm backward's two operands no search runs: the
     * error names that node (passes/remat/remat_floor.c). */
    assert_non_null(strstr(dfg_last_error(), "which no recomputation splits"));
    assert_non_null(strstr(dfg_last_error(), "batch_norm_train_grad"));
    /* 2^63 and above are refused, never read as a negative budget. */
    t.memory_budget_bytes = (uint64_t)1 << 63;
    assert_int_equal(dfg_compile(cnn, &o, &p), DFG_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(dfg_last_error(), "memory_budget_bytes "
                                             "9223372036854775808 exceeds"));
    t.memory_budget_bytes = UINT64_MAX;
    assert_int_equal(dfg_compile(cnn, &o, &p), DFG_ERR_INVALID_ARGUMENT);
    dfg_graph_destroy(cnn);
}

/* Half the unconstrained arena, where a block's backward may hold three
 * of its tensors and the image (issue 12): the copies that cross the
 * peak are made again image by image from the image
 * (passes/remat/remat_per_image.c), and an epoch still ends with the same
 * weights. */
static void test_half_budget_keeps_the_results(void **state)
{
    (void)state;
    dfg_program *free_plan, *budget;
    compile_within(50.0f, &free_plan, &budget);
    assert_same_epoch(free_plan, budget);
    dfg_program_destroy(free_plan);
    dfg_program_destroy(budget);
}

/* With gradient accumulation the update adds the whole gradient into its
 * accumulator: a budget recomputes, but fuses no gradient into its
 * update. */
static void test_accumulation_keeps_whole_gradients(void **state)
{
    (void)state;
    dfg_program *p = compile_cnn_accumulating(95.0f, 2);
    assert_true(count_recomputed(p) > 0);
    assert_int_equal(count_fused_updates(p), 0);
    dfg_program_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cheap_recomputation_by_default),
        cmocka_unit_test(test_memory_budget_keeps_the_results),
        cmocka_unit_test(test_half_budget_keeps_the_results),
        cmocka_unit_test(test_accumulation_keeps_whole_gradients),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
