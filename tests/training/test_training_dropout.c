/* Dropout in a training step: a dropout becomes dropout_train, each run
 * draws another mask from the seeded Philox stream, and the seed makes
 * the masks (so the losses) repeat; compiling for the CUDA backend, which
 * has no kernel for it, refuses it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "dfg/builder.h"
#include "dfg/compile.h"
#include "dfg/session.h"
#include "dfg/training.h"
#include "runtime/cuda/plan/target.h"
#include "program/program.h"
#include "tests/support/training_options.h"

/* The classifier with dropout (p 0.5) on its prediction, and its MSE. */
static dfg_graph *dropout_classifier(void)
{
    dfg_graph *g;
    dfg_value x, w, h, y;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 2, (int64_t[]){4, 3}, &x),
                     DFG_OK);
    assert_int_equal(dfg_graph_weight(g, "w", DFG_F32, 2, (int64_t[]){3, 5},
                                      (float[15]){0.5f, -0.3f, 0.2f, 0.1f},
                                      &w), DFG_OK);
    assert_int_equal(dfg_matmul(g, x, w, &h), DFG_OK);
    assert_int_equal(dfg_dropout(g, h, 0.5f, &y), DFG_OK);
    assert_int_equal(dfg_graph_output(g, y, "prediction"), DFG_OK);
    assert_int_equal(dfg_graph_add_loss(g, DFG_LOSS_MSE, NULL), DFG_OK);
    return g;
}

/* The classifier compiled as a training step with the given seed, for
 * target (NULL: no backend in particular). */
static dfg_status compile_training(uint64_t seed, const dfg_target *target,
                                   dfg_program **p)
{
    dfg_graph *g = dropout_classifier();
    dfg_training_options t;
    dfg_compile_options o;
    training_compile_options(&t, &o);
    t.seed = seed;
    if (target)
        assert_int_equal(dfg_compile_options_for(&o, target), DFG_OK);
    dfg_status st = dfg_compile(g, &o, p);
    dfg_graph_destroy(g);
    return st;
}

static dfg_program *compile_dropout_classifier(uint64_t seed)
{
    dfg_program *p;
    assert_int_equal(compile_training(seed, NULL, &p), DFG_OK);
    int found = 0;
    for (int32_t s = 0; s < p->n_steps; s++)
        found += p->steps[s].op == DFG_OP_DROPOUT_TRAIN;
    assert_int_equal(found, 1);
    return p;
}

/* The losses of three runs on one batch (learning rate aside, the masks
 * make them differ). */
static void dropout_losses(uint64_t seed, float *losses)
{
    dfg_program *p = compile_dropout_classifier(seed);
    const dfg_backend *cpu;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    dfg_session *s;
    assert_int_equal(dfg_session_create(p, cpu, NULL, &s), DFG_OK);
    float x[12], targets[20], norms[1];
    for (int i = 0; i < 12; i++)
        x[i] = 0.1f * (float)(i % 5) - 0.2f;
    for (int i = 0; i < 20; i++)
        targets[i] = 0.05f * (float)(i % 7);
    for (int run = 0; run < 3; run++)
        assert_int_equal(dfg_session_run(s, (const void *[]){x, targets},
                                         (void *[]){&losses[run], norms}),
                         DFG_OK);
    dfg_session_destroy(s);
    dfg_program_destroy(p);
}

/* A training step drops: a dropout becomes dropout_train, each run draws
 * another mask, and the seed makes the masks (so the losses) repeat. */
static void test_dropout_trains_with_seeded_masks(void **state)
{
    (void)state;
    float a[3], b[3], c[3];
    dropout_losses(1, a);
    dropout_losses(1, b);
    dropout_losses(2, c);
    assert_memory_equal(a, b, sizeof a);
    assert_true(a[0] != a[1] && a[1] != a[2]);
    assert_true(a[0] != c[0] || a[1] != c[1] || a[2] != c[2]);
}

/* The CUDA backend has no dropout_train kernel: compiling for its target
 * refuses the step by name (not a session that fails to start later). */
static void test_cuda_target_refuses_dropout_train(void **state)
{
    (void)state;
    dfg_program *p = NULL;
    assert_int_equal(compile_training(1, &dfg_cuda_target, &p),
                     DFG_ERR_UNSUPPORTED);
    assert_null(p);
    assert_non_null(strstr(dfg_last_error(),
                           "the cuda backend has no kernel for dropout_train"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dropout_trains_with_seeded_masks),
        cmocka_unit_test(test_cuda_target_refuses_dropout_train),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
