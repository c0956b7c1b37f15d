/* The trainer (include/dfg/trainer.h) on the bundled mlp: steps lower the
 * loss, predictions follow the weights (written ones included), the
 * evaluation's loss is the cross entropy of the prediction, a NaN step
 * is refused with the weights kept, a checkpoint round trip restores the
 * weights and the step count, and bad arguments are refused. */
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
#include "tests/support/scratch_dir.h"

#define BATCH 32
#define FEATURES 64
#define CLASSES 10

static float x[BATCH * FEATURES];
static int64_t labels[BATCH];

static dfg_trainer *make_trainer(void)
{
    for (int i = 0; i < BATCH * FEATURES; i++)
        x[i] = (float)((i * 37) % 17) / 17.0f;
    for (int i = 0; i < BATCH; i++)
        labels[i] = i % CLASSES;
    dfg_graph *g;
    assert_int_equal(dfg_model_build("mlp", NULL, &g), DFG_OK);
    dfg_trainer_options o;
    dfg_trainer_options_init(&o);
    o.training.optimizer = DFG_OPTIMIZER_ADAM;
    o.training.learning_rate = 0.003f;
    dfg_trainer *t;
    if (dfg_trainer_create(g, &o, &t) != DFG_OK)
        fail_msg("%s", dfg_last_error());
    dfg_graph_destroy(g);
    assert_int_equal(dfg_trainer_batch(t), BATCH);
    assert_int_equal(dfg_trainer_prediction_size(t), CLASSES);
    return t;
}

/* The mlp predicts probabilities (a softmax): the loss is -log p[label]. */
static double cross_entropy(const float *probs)
{
    double sum = 0.0;
    for (int i = 0; i < BATCH; i++)
        sum -= log((double)probs[i * CLASSES + labels[i]]);
    return sum / BATCH;
}

static void test_steps_learn_and_evaluate(void **state)
{
    (void)state;
    dfg_trainer *t = make_trainer();
    float first = 0.0f, loss = 0.0f, eval = 0.0f, probs[BATCH * CLASSES];
    for (int k = 0; k < 20; k++)
        assert_int_equal(dfg_trainer_step(t, x, labels, k ? &loss : &first),
                         DFG_OK);
    assert_true(loss < 0.5f * first);
    assert_int_equal(dfg_trainer_steps(t), 20);
    assert_int_equal(dfg_trainer_evaluate(t, x, labels, &eval, probs), DFG_OK);
    assert_true(fabs(eval - cross_entropy(probs)) <= 1e-4 * (1.0 + eval));
    dfg_trainer_destroy(t);
}

static void test_weights_read_and_written(void **state)
{
    (void)state;
    dfg_trainer *t = make_trainer();
    assert_true(dfg_trainer_num_weights(t) >= 6);
    float before[BATCH * CLASSES], after[BATCH * CLASSES];
    assert_int_equal(dfg_trainer_predict(t, x, before), DFG_OK);
    for (int32_t i = 0; i < dfg_trainer_num_weights(t); i++) {
        float *w;
        int64_t n;
        assert_int_equal(dfg_trainer_weight(t, dfg_trainer_weight_name(t, i),
                                            &w, &n), DFG_OK);
        assert_true(n > 0);
        memset(w, 0, (size_t)n * sizeof *w);
    }
    /* Every weight 0: every class equally likely. */
    assert_int_equal(dfg_trainer_predict(t, x, after), DFG_OK);
    for (int k = 0; k < BATCH * CLASSES; k++)
        assert_true(fabsf(after[k] - 0.1f) < 1e-6f);
    assert_true(fabsf(before[0] - 0.1f) > 1e-6f);
    float *w;
    int64_t n;
    assert_int_equal(dfg_trainer_weight(t, "no such weight", &w, &n),
                     DFG_ERR_NOT_FOUND);
    assert_null(dfg_trainer_weight_name(t, -1));
    dfg_trainer_destroy(t);
}

static void test_nan_keeps_the_weights(void **state)
{
    (void)state;
    dfg_trainer *t = make_trainer();
    assert_int_equal(dfg_trainer_step(t, x, labels, NULL), DFG_OK);
    float before[BATCH * CLASSES], after[BATCH * CLASSES];
    assert_int_equal(dfg_trainer_predict(t, x, before), DFG_OK);
    float kept = x[5];
    x[5] = NAN;
    float loss;
    assert_int_equal(dfg_trainer_step(t, x, labels, &loss),
                     DFG_ERR_NOT_FINITE);
    assert_non_null(strstr(dfg_last_error(), "step 2"));
    assert_true(isnan(loss));
    x[5] = kept;
    assert_int_equal(dfg_trainer_predict(t, x, after), DFG_OK);
    assert_memory_equal(before, after, sizeof before);
    assert_int_equal(dfg_trainer_steps(t), 1);
    dfg_trainer_destroy(t);
}

static void test_checkpoint_round_trip(void **state)
{
    (void)state;
    assert_int_equal(scratch_dir_make("dfg-trainer"), 0);
    const char *path = scratch_path("ckpt");
    dfg_trainer *a = make_trainer(), *b = make_trainer();
    for (int k = 0; k < 3; k++)
        assert_int_equal(dfg_trainer_step(a, x, labels, NULL), DFG_OK);
    dfg_checkpoint_position at = {1, 3, 5, 0}, got;
    assert_int_equal(dfg_trainer_checkpoint_save(a, &at, path), DFG_OK);
    assert_int_equal(dfg_trainer_checkpoint_load(b, path, 0, &got), DFG_OK);
    assert_int_equal(got.step, 3);
    assert_int_equal(dfg_trainer_steps(b), 3);
    float pa[BATCH * CLASSES], pb[BATCH * CLASSES];
    assert_int_equal(dfg_trainer_predict(a, x, pa), DFG_OK);
    assert_int_equal(dfg_trainer_predict(b, x, pb), DFG_OK);
    assert_memory_equal(pa, pb, sizeof pa);
    float la, lb;
    assert_int_equal(dfg_trainer_step(a, x, labels, &la), DFG_OK);
    assert_int_equal(dfg_trainer_step(b, x, labels, &lb), DFG_OK);
    assert_memory_equal(&la, &lb, sizeof la);
    dfg_trainer_destroy(a);
    dfg_trainer_destroy(b);
    scratch_dir_remove();
}

static void test_bad_arguments(void **state)
{
    (void)state;
    dfg_trainer_options o;
    dfg_trainer_options_init(&o);
    dfg_trainer *t = (dfg_trainer *)&o;
    assert_int_equal(dfg_trainer_create(NULL, &o, &t),
                     DFG_ERR_INVALID_ARGUMENT);
    assert_null(t);
    dfg_graph *g;
    assert_int_equal(dfg_model_build("mlp", NULL, &g), DFG_OK);
    o.training.learning_rate = -1.0f;
    assert_int_equal(dfg_trainer_create(g, &o, &t), DFG_ERR_INVALID_ARGUMENT);
    assert_null(t);
    dfg_graph_destroy(g);
    assert_int_equal(dfg_trainer_step(NULL, x, labels, NULL),
                     DFG_ERR_INVALID_ARGUMENT);
    dfg_trainer_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steps_learn_and_evaluate),
        cmocka_unit_test(test_weights_read_and_written),
        cmocka_unit_test(test_nan_keeps_the_weights),
        cmocka_unit_test(test_checkpoint_round_trip),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
