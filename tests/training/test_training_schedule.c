/* Learning-rate schedules (include/dfg/training.h): the factor every
 * optimizer step takes (src/math/training.h) against the formulas of
 * torch's LinearLR warm-up, StepLR and CosineAnnealingLR written here
 * apart, a compiled warm-up that scales the first update as it says, and
 * schedule options that are refused. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dfg/dfg.h"
#include "math/training.h"
#include "tests/training/training_fixtures.h"

/* The factor of optimizer step t (1-based): linear warm-up over w steps,
 * then gamma^floor((t - w - 1) / s) or the cosine over c steps. */
static double reference(int64_t t, int64_t w, int64_t s, double gamma,
                        int64_t c)
{
    if (w > 0 && t <= w)
        return (double)t / (double)w;
    int64_t u = t - w;
    double f = 1.0;
    if (s > 0)
        for (int64_t k = 0; k < (u - 1) / s; k++)
            f *= gamma;
    if (c > 0)
        f *= u - 1 >= c ? 0.0 : 0.5 * (1.0 + cos(M_PI * (double)(u - 1) / c));
    return f;
}

static void test_factor_follows_the_formulas(void **state)
{
    (void)state;
    static const struct {
        int64_t warmup, step_size;
        float gamma;
        int64_t cosine;
    } cases[] = {{0, 0, 0.1f, 0}, {0, 3, 0.5f, 0}, {4, 0, 0.1f, 0},
                 {4, 2, 0.1f, 0}, {5, 0, 0.1f, 10}, {0, 0, 0.1f, 7},
                 {1, 1, 0.9f, 0}, {0, 7, 1.0f, 0}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        float hyper[DFG_HYPER_SIZE] = {0};
        hyper[DFG_HYPER_WARMUP] = (float)cases[k].warmup;
        hyper[DFG_HYPER_STEP_SIZE] = (float)cases[k].step_size;
        hyper[DFG_HYPER_GAMMA] = cases[k].gamma;
        hyper[DFG_HYPER_DECAY_STEPS] = (float)cases[k].cosine;
        for (int64_t t = 1; t <= 40; t++) {
            double want = reference(t, cases[k].warmup, cases[k].step_size,
                                    cases[k].gamma, cases[k].cosine);
            double got = dfg_schedule_factor((double)t, hyper);
            if (!(fabs(got - want) <= 1e-6 * (1.0 + want)))
                fail_msg("case %zu, step %lld: factor %.9g, want %.9g", k,
                         (long long)t, got, want);
        }
    }
}

/* One SGD step (momentum 0) of the mlp on a fixed batch; returns the sum
 * of its weights' squared update norms: lr^2 times the squared gradient
 * norm, the same gradient for every program of the same start. */
static double first_update(dfg_training_options *t)
{
    dfg_program *p = compile_bundled_training("mlp", t);
    int64_t n_norms;
    dfg_session *s = training_session(p, &n_norms);
    float x[32 * 64], loss, norms[64];
    assert_true(n_norms <= 64);
    int64_t labels[32];
    for (int i = 0; i < 32 * 64; i++)
        x[i] = (float)((i * 37) % 17) / 17.0f;
    for (int i = 0; i < 32; i++)
        labels[i] = i % 10;
    assert_int_equal(dfg_session_run(s, (const void *[]){x, labels},
                                     (void *[]){&loss, norms}), DFG_OK);
    double total = 0.0;
    for (int64_t k = 0; k < n_norms; k++)
        total += norms[k];
    dfg_session_destroy(s);
    dfg_program_destroy(p);
    return total;
}

static void sgd(dfg_training_options *t)
{
    dfg_training_options_init(t);
    t->optimizer = DFG_OPTIMIZER_SGD;
    t->momentum = 0.0f;
}

/* A warm-up of 4 steps takes a quarter of the rate at step 1: a 16th of
 * the squared update; a step decay leaves step 1 whole. */
static void test_warmup_scales_the_first_update(void **state)
{
    (void)state;
    dfg_training_options t;
    sgd(&t);
    double constant = first_update(&t);
    sgd(&t);
    t.warmup_steps = 4;
    double warm = first_update(&t);
    sgd(&t);
    t.lr_step_size = 1;
    t.lr_gamma = 0.5f;
    double step = first_update(&t);
    assert_true(constant > 0.0);
    if (!(fabs(warm * 16.0 - constant) <= 1e-4 * constant))
        fail_msg("warm-up: %g, constant %g (want a 16th)", warm, constant);
    if (!(fabs(step - constant) <= 1e-6 * constant))
        fail_msg("step decay at step 1: %g, constant %g", step, constant);
}

static void expect_refused(dfg_training_options *t, const char *words)
{
    dfg_graph *g;
    assert_int_equal(dfg_model_build_training("mlp", NULL, &g), DFG_OK);
    t->loss = "loss";
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    o.training = t;
    dfg_program *p = NULL;
    assert_int_equal(dfg_compile(g, &o, &p), DFG_ERR_INVALID_ARGUMENT);
    assert_null(p);
    if (!strstr(dfg_last_error(), words))
        fail_msg("'%s' lacks '%s'", dfg_last_error(), words);
    dfg_graph_destroy(g);
}

static void test_bad_schedules_are_refused(void **state)
{
    (void)state;
    dfg_training_options t;
    sgd(&t);
    t.lr_step_size = 2;
    t.decay_steps = 5;
    expect_refused(&t, "together");
    sgd(&t);
    t.lr_step_size = 2;
    t.lr_gamma = 0.0f;
    expect_refused(&t, "lr_gamma");
    sgd(&t);
    t.warmup_steps = -1;
    expect_refused(&t, "warmup_steps");
    sgd(&t);
    t.lr_step_size = ((int64_t)1 << 24) + 1;
    expect_refused(&t, "lr_step_size");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_factor_follows_the_formulas),
        cmocka_unit_test(test_warmup_scales_the_first_update),
        cmocka_unit_test(test_bad_schedules_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
