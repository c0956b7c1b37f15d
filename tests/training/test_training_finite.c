/* Training that stops on a non-finite step (include/dfg/finite_training.h):
 * a NaN in the input, or a learning rate that overflows, ends the run
 * with DFG_ERR_NOT_FINITE naming the step, and the session keeps the
 * weights of the last finite step. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "dfg/dfg.h"
#include "tests/training/training_fixtures.h"

/* The bundled mlp's training step, a CPU session of it and one batch. */
typedef struct fixture {
    dfg_program *program;
    dfg_session *session;
    float *pixels;   /* input 0, f32 */
    int64_t *labels; /* input 1, i64 */
    int64_t n_pixels;
} fixture;

static int64_t elements(const dfg_tensor_info *info)
{
    int64_t n = 1;
    for (int32_t d = 0; d < info->rank; d++)
        n *= info->shape[d];
    return n;
}

static void setup(fixture *f, dfg_optimizer optimizer, float lr)
{
    dfg_training_options t;
    dfg_training_options_init(&t);
    t.optimizer = optimizer;
    t.learning_rate = lr;
    f->program = compile_bundled_training("mlp", &t);
    const dfg_backend *cpu;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    assert_int_equal(dfg_session_create(f->program, cpu, NULL, &f->session),
                     DFG_OK);
    dfg_tensor_info x, labels;
    assert_int_equal(dfg_program_input_info(f->program, 0, &x), DFG_OK);
    assert_int_equal(dfg_program_input_info(f->program, 1, &labels), DFG_OK);
    assert_int_equal(x.dtype, DFG_F32);
    assert_int_equal(labels.dtype, DFG_I64);
    f->n_pixels = elements(&x);
    f->pixels = malloc((size_t)f->n_pixels * sizeof *f->pixels);
    f->labels = malloc((size_t)elements(&labels) * sizeof *f->labels);
    assert_non_null(f->pixels);
    assert_non_null(f->labels);
    for (int64_t i = 0; i < f->n_pixels; i++)
        f->pixels[i] = (float)((i * 37) % 17) / 16.0f;
    for (int64_t i = 0; i < elements(&labels); i++)
        f->labels[i] = i % 10;
}

static void teardown(fixture *f)
{
    free(f->pixels);
    free(f->labels);
    dfg_session_destroy(f->session);
    dfg_program_destroy(f->program);
}

static dfg_status run(fixture *f, dfg_finite_guard *g)
{
    const void *inputs[2] = {f->pixels, f->labels};
    return dfg_finite_guard_run(g, f->session, inputs, NULL);
}

/* A copy of the session's weights region. */
static void *region_copy(dfg_session *s, size_t *bytes)
{
    void *region;
    assert_int_equal(dfg_session_weights_region(s, &region, bytes), DFG_OK);
    void *copy = malloc(*bytes);
    assert_non_null(copy);
    memcpy(copy, region, *bytes);
    return copy;
}

/* Every f32 weight of the session is finite. */
static void assert_weights_finite(const fixture *f)
{
    void *region;
    size_t bytes;
    assert_int_equal(dfg_session_weights_region(f->session, &region, &bytes),
                     DFG_OK);
    /* The region holds f32 weights and state, and an i64 step counter
     * whose small values read as finite floats. */
    const float *x = region;
    for (size_t i = 0; i < bytes / sizeof *x; i++)
        if (!isfinite(x[i]))
            fail_msg("weights region float %zu is %g", i, (double)x[i]);
}

/* One NaN pixel at step 3: refused, naming step 3; the region is byte for
 * byte that of step 2, and training goes on from it. */
static void test_nan_input_keeps_the_last_finite_weights(void **state)
{
    (void)state;
    fixture f;
    setup(&f, DFG_OPTIMIZER_ADAM, 0.003f);
    dfg_finite_guard g;
    assert_int_equal(dfg_finite_guard_init(&g, f.session, NULL), DFG_OK);
    assert_int_equal(run(&f, &g), DFG_OK);
    assert_int_equal(run(&f, &g), DFG_OK);
    assert_int_equal(g.steps, 2);
    size_t bytes;
    void *step2 = region_copy(f.session, &bytes);
    float pixel = f.pixels[f.n_pixels / 2];
    f.pixels[f.n_pixels / 2] = NAN;
    assert_int_equal(run(&f, &g), DFG_ERR_NOT_FINITE);
    assert_non_null(strstr(dfg_last_error(), "step 3: 'loss' is NaN; the "
                                             "weights of step 2 are kept"));
    assert_int_equal(g.steps, 2);
    size_t after_bytes;
    void *after = region_copy(f.session, &after_bytes);
    assert_int_equal(after_bytes, bytes);
    assert_memory_equal(after, step2, bytes);
    assert_weights_finite(&f);
    f.pixels[f.n_pixels / 2] = pixel;
    assert_int_equal(run(&f, &g), DFG_OK);
    assert_int_equal(g.steps, 3);
    /* Weights, optimizer state and step counter as if the refused step
     * never ran: the same bytes as three clean steps of a new session. */
    fixture clean;
    setup(&clean, DFG_OPTIMIZER_ADAM, 0.003f);
    dfg_finite_guard cg;
    assert_int_equal(dfg_finite_guard_init(&cg, clean.session, NULL), DFG_OK);
    for (int i = 0; i < 3; i++)
        assert_int_equal(run(&clean, &cg), DFG_OK);
    void *resumed = region_copy(f.session, &bytes);
    void *reference = region_copy(clean.session, &after_bytes);
    assert_memory_equal(resumed, reference, bytes);
    free(resumed);
    free(reference);
    dfg_finite_guard_free(&cg);
    teardown(&clean);
    free(after);
    free(step2);
    dfg_finite_guard_free(&g);
    dfg_finite_guard_free(&g);
    teardown(&f);
}

/* SGD at lr 1e30: the weights overflow within a few steps; the step that
 * would make them non-finite is refused and they stay finite. */
static void test_huge_learning_rate_stops(void **state)
{
    (void)state;
    fixture f;
    setup(&f, DFG_OPTIMIZER_SGD, 1e30f);
    dfg_finite_guard g;
    assert_int_equal(dfg_finite_guard_init(&g, f.session, NULL), DFG_OK);
    dfg_status st = DFG_OK;
    for (int i = 0; i < 20 && st == DFG_OK; i++)
        st = run(&f, &g);
    assert_int_equal(st, DFG_ERR_NOT_FINITE);
    assert_non_null(strstr(dfg_last_error(), "step "));
    assert_non_null(strstr(dfg_last_error(), "are kept"));
    assert_weights_finite(&f);
    dfg_finite_guard_free(&g);
    teardown(&f);
}

/* An inference session has no weights region of its own to restore. */
static void test_inference_session_refused(void **state)
{
    (void)state;
    dfg_graph *graph;
    assert_int_equal(dfg_model_build("mlp", NULL, &graph), DFG_OK);
    dfg_program *p;
    assert_int_equal(dfg_compile(graph, NULL, &p), DFG_OK);
    const dfg_backend *cpu;
    dfg_session *s;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    assert_int_equal(dfg_session_create(p, cpu, NULL, &s), DFG_OK);
    dfg_finite_guard g;
    assert_int_equal(dfg_finite_guard_init(&g, s, NULL),
                     DFG_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(dfg_last_error(), "no weights region"));
    dfg_finite_guard_free(&g);
    dfg_session_destroy(s);
    dfg_program_destroy(p);
    dfg_graph_destroy(graph);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nan_input_keeps_the_last_finite_weights),
        cmocka_unit_test(test_huge_learning_rate_stops),
        cmocka_unit_test(test_inference_session_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
