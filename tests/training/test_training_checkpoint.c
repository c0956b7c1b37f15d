/* Training checkpoints (include/dfg/training_checkpoint.h): a run
 * resumed from a checkpoint ends bit for bit where a straight run ends,
 * and a file that is corrupted, truncated, of another program or seed,
 * or not a checkpoint at all is refused with the session left as it was. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "dfg/dfg.h"
#include "tests/support/file_bytes.h"
#include "tests/support/scratch_dir.h"
#include "tests/training/training_fixtures.h"

/* A CPU session of a bundled model's Adam training step and its batch. */
typedef struct trainer {
    dfg_program *program;
    dfg_session *session;
    float *x;
    int64_t *labels;
} trainer;

static int64_t elements(const dfg_program *p, int32_t input)
{
    dfg_tensor_info info;
    assert_int_equal(dfg_program_input_info(p, input, &info), DFG_OK);
    int64_t n = 1;
    for (int32_t d = 0; d < info.rank; d++)
        n *= info.shape[d];
    return n;
}

static void trainer_make(trainer *t, const char *model)
{
    dfg_training_options o;
    dfg_training_options_init(&o);
    o.optimizer = DFG_OPTIMIZER_ADAM;
    o.learning_rate = 0.01f;
    o.decay_steps = 8;
    t->program = compile_bundled_training(model, &o);
    const dfg_backend *cpu;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    assert_int_equal(dfg_session_create(t->program, cpu, NULL, &t->session),
                     DFG_OK);
    int64_t n = elements(t->program, 0), m = elements(t->program, 1);
    t->x = malloc((size_t)n * sizeof *t->x);
    t->labels = malloc((size_t)m * sizeof *t->labels);
    assert_non_null(t->x);
    assert_non_null(t->labels);
    for (int64_t i = 0; i < n; i++)
        t->x[i] = (float)((i * 37) % 17) / 16.0f - 0.5f;
    for (int64_t i = 0; i < m; i++)
        t->labels[i] = (i * 7) % 10;
}

static void trainer_free(trainer *t)
{
    free(t->x);
    free(t->labels);
    dfg_session_destroy(t->session);
    dfg_program_destroy(t->program);
}

static void train_steps(trainer *t, int steps)
{
    const void *inputs[2] = {t->x, t->labels};
    for (int i = 0; i < steps; i++)
        assert_int_equal(dfg_session_run(t->session, inputs, NULL), DFG_OK);
}


static void test_resumed_run_is_bit_identical(void **state)
{
    (void)state;
    dfg_checkpoint_position at = {4, 4, 77, 5};
    trainer straight, first, second;
    trainer_make(&straight, "mlp");
    train_steps(&straight, 4);
    assert_int_equal(dfg_checkpoint_save(straight.session, &at,
                                         scratch_path("straight")), DFG_OK);
    trainer_make(&first, "mlp");
    train_steps(&first, 2);
    at.epoch = at.step = 2;
    assert_int_equal(dfg_checkpoint_save(first.session, &at,
                                         scratch_path("half")), DFG_OK);
    trainer_free(&first);
    trainer_make(&second, "mlp");
    dfg_checkpoint_position back;
    assert_int_equal(dfg_checkpoint_load(second.session, scratch_path("half"),
                                         5, &back), DFG_OK);
    assert_int_equal(back.epoch, 2);
    assert_int_equal(back.step, 2);
    assert_int_equal(back.rng_state, 77);
    train_steps(&second, 2);
    at.epoch = at.step = 4;
    assert_int_equal(dfg_checkpoint_save(second.session, &at,
                                         scratch_path("resumed")), DFG_OK);
    size_t a, b;
    void *x = file_bytes(scratch_path("straight"), &a);
    void *y = file_bytes(scratch_path("resumed"), &b);
    assert_non_null(x);
    assert_non_null(y);
    assert_int_equal(a, b);
    assert_memory_equal(x, y, a);
    free(x);
    free(y);
    trainer_free(&second);
    trainer_free(&straight);
}

/* Loading `bytes` (size) as a checkpoint fails with DFG_ERR_FORMAT and
 * leaves t's weights region as it was. */
static void expect_refused(trainer *t, const void *bytes, size_t size,
                           uint64_t seed, const char *message)
{
    scratch_write(scratch_path("bad"), bytes, size);
    void *region;
    size_t n;
    assert_int_equal(dfg_session_weights_region(t->session, &region, &n),
                     DFG_OK);
    void *before = malloc(n);
    assert_non_null(before);
    memcpy(before, region, n);
    dfg_checkpoint_position at = {-9, -9, 0, 0};
    assert_int_equal(dfg_checkpoint_load(t->session, scratch_path("bad"), seed,
                                         &at), DFG_ERR_FORMAT);
    if (!strstr(dfg_last_error(), message))
        fail_msg("'%s' lacks '%s'", dfg_last_error(), message);
    assert_memory_equal(before, region, n);
    assert_int_equal(at.epoch, -9);
    free(before);
}

static void test_bad_checkpoints_are_refused(void **state)
{
    (void)state;
    trainer t, other;
    trainer_make(&t, "mlp");
    train_steps(&t, 1);
    dfg_checkpoint_position at = {1, 1, 0, 5};
    assert_int_equal(dfg_checkpoint_save(t.session, &at, scratch_path("good")),
                     DFG_OK);
    size_t size;
    uint8_t *good = file_bytes(scratch_path("good"), &size);
    assert_non_null(good);
    uint8_t *bad = malloc(size);
    assert_non_null(bad);
    train_steps(&t, 1); /* the region now differs from the file's */
    memcpy(bad, good, size);
    bad[size / 2] ^= 0x10;
    expect_refused(&t, bad, size, 5, "weights are corrupted");
    memcpy(bad, good, size);
    bad[40] ^= 1; /* the step */
    expect_refused(&t, bad, size, 5, "header is corrupted");
    expect_refused(&t, good, size - 3, 5, "bytes, its header says");
    expect_refused(&t, good, 20, 5, "shorter than");
    memset(bad, 'x', 100);
    expect_refused(&t, bad, 100, 5, "not a dfg training checkpoint");
    expect_refused(&t, good, size, 6, "seed 5, not 6");
    memcpy(bad, good, size);
    bad[8] = 2;
    expect_refused(&t, bad, size, 5, "version 2");
    /* A good file of another program. */
    trainer_make(&other, "cnn");
    expect_refused(&other, good, size, 5, "another program");
    trainer_free(&other);
    /* The good file still loads. */
    assert_int_equal(dfg_checkpoint_load(t.session, scratch_path("good"), 5,
                                         &at), DFG_OK);
    assert_int_equal(at.step, 1);
    free(bad);
    free(good);
    trainer_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resumed_run_is_bit_identical),
        cmocka_unit_test(test_bad_checkpoints_are_refused),
    };
    return cmocka_run_group_tests(tests, scratch_dir_setup,
                                  scratch_dir_teardown);
}
