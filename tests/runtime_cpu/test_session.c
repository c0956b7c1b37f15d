/* Sessions (runtime/executor.c) on the CPU backend: results against a
 * double-precision reference, the input/output buffers, no allocation
 * during runs (through the session's allocator and through malloc & co.,
 * wrapped at link time), sessions sharing their program's weights, and the
 * errors for unknown backends and unsupported ops. Threads sharing one
 * program: test_session_threads.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dfg/dfg.h"
#include "program/program.h"
#include "runtime/backend.h"
#include "tests/support/libc_calls.h"
#include "tests/support/program_fixtures.h"

/* --- helpers */

static const dfg_backend *cpu(void)
{
    const dfg_backend *backend = NULL;
    assert_int_equal(dfg_backend_find("cpu", &backend), DFG_OK);
    return backend;
}

static dfg_program *compile_fixture(uint64_t seed, fixture_weights *w,
                                    dfg_planner planner)
{
    dfg_program *program = NULL;
    dfg_status s = fixture_compile(seed, w, planner, &program);
    if (s != DFG_OK)
        fail_msg("compile: %s", dfg_last_error());
    return program;
}

static void check_outputs(const fixture_weights *w, const float *x,
                          const float *probs, const float *sums)
{
    double ref_probs[FIX_BATCH * FIX_OUT], ref_sums[2];
    fixture_reference(w, x, ref_probs, ref_sums);
    double e1 = fixture_relative_error(probs, ref_probs, FIX_BATCH * FIX_OUT);
    double e2 = fixture_relative_error(sums, ref_sums, 2);
    if (e1 > 1e-5 || e2 > 1e-5)
        fail_msg("relative errors %g (probs) and %g (sums)", e1, e2);
}

/* 1 if some step of session runs on a library (oneDNN). */
static int runs_a_library(const dfg_program *program,
                          const dfg_session *session)
{
    dfg_plan_stats stats;
    dfg_program_stats(program, &stats);
    const char *none = NULL;
    assert_int_equal(dfg_session_step_library(session, stats.n_steps, &none),
                     DFG_ERR_INVALID_ARGUMENT);
    for (int32_t i = 0; i < stats.n_steps; i++) {
        const char *library = NULL;
        assert_int_equal(dfg_session_step_library(session, i, &library),
                         DFG_OK);
        if (library)
            return 1;
    }
    return 0;
}

/* --- tests */

static void test_run_matches_reference(void **state)
{
    (void)state;
    for (int planner = 0; planner < DFG_PLANNER_COUNT; planner++) {
        fixture_weights w;
        dfg_program *program = compile_fixture(100 + (uint64_t)planner, &w,
                                               (dfg_planner)planner);
        dfg_session *session = NULL;
        assert_int_equal(dfg_session_create(program, cpu(), NULL, &session), DFG_OK);
        uint64_t rng = 7 + (uint64_t)planner;
        for (int run = 0; run < 5; run++) {
            float x[FIX_BATCH * FIX_IN], probs[FIX_BATCH * FIX_OUT], sums[2];
            fixture_fill(&rng, x, FIX_BATCH * FIX_IN);
            const void *inputs[] = {x};
            void *outputs[] = {probs, sums};
            assert_int_equal(dfg_session_run(session, inputs, outputs), DFG_OK);
            check_outputs(&w, x, probs, sums);
        }
        dfg_session_destroy(session);
        dfg_program_destroy(program);
    }
}

static void test_arena_buffers(void **state)
{
    (void)state;
    fixture_weights w;
    dfg_program *program = compile_fixture(3, &w, DFG_PLANNER_GREEDY_SIZE);
    dfg_session *session = NULL;
    assert_int_equal(dfg_session_create(program, cpu(), NULL, &session), DFG_OK);
    void *in = NULL, *probs = NULL, *sums = NULL;
    assert_int_equal(dfg_session_input_buffer(session, 0, &in), DFG_OK);
    assert_int_equal(dfg_session_output_buffer(session, 0, &probs), DFG_OK);
    assert_int_equal(dfg_session_output_buffer(session, 1, &sums), DFG_OK);
    assert_non_null(in);
    assert_ptr_not_equal(probs, sums);

    float x[FIX_BATCH * FIX_IN];
    uint64_t rng = 99;
    fixture_fill(&rng, x, FIX_BATCH * FIX_IN);
    memcpy(in, x, sizeof x); /* the CPU backend's regions are host memory */
    assert_int_equal(dfg_session_run(session, NULL, NULL), DFG_OK);
    check_outputs(&w, x, probs, sums);

    void *unused = NULL;
    assert_int_equal(dfg_session_input_buffer(session, 1, &unused),
                     DFG_ERR_INVALID_ARGUMENT);
    assert_int_equal(dfg_session_output_buffer(session, -1, &unused),
                     DFG_ERR_INVALID_ARGUMENT);
    assert_int_equal(dfg_session_input_buffer(NULL, 0, &unused),
                     DFG_ERR_INVALID_ARGUMENT);
    dfg_session_destroy(session);
    dfg_program_destroy(program);
}

static void test_run_allocates_nothing(void **state)
{
    (void)state;
    static const char *const models[] = {"fixture", "mlp", "cnn", "transformer"};
    for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
        counting counts = {0, 0, 0};
        dfg_allocator allocator = counting_allocator(&counts);
        dfg_program *program = NULL;
        fixture_weights w;
        if (m == 0) {
            program = compile_fixture(5, &w, DFG_PLANNER_GREEDY_SIZE);
        } else {
            dfg_graph *graph = NULL;
            assert_int_equal(dfg_model_build(models[m], NULL, &graph), DFG_OK);
            /* Compiled for the CPU backend (the default) and mapped from
             * a file, as a .dfgp is: its convs and matmuls run on
             * oneDNN. */
            assert_int_equal(dfg_compile(graph, NULL, &program), DFG_OK);
            dfg_graph_destroy(graph);
            program = fixture_mapped(program);
            assert_non_null(program);
        }
        dfg_session *session = NULL;
        assert_int_equal(dfg_session_create(program, cpu(), &allocator, &session),
                         DFG_OK);
        assert_true(counts.allocs > 0); /* the session did use it */
        if (m > 0 && !runs_a_library(program, session))
            fail_msg("%s: no step runs on oneDNN", models[m]);
        /* One run first, so that OpenMP's thread pool exists. */
        assert_int_equal(dfg_session_run(session, NULL, NULL), DFG_OK);
        long allocs = counts.allocs, frees = counts.frees;
        long before = libc_calls_count();
        for (int run = 0; run < 20; run++)
            assert_int_equal(dfg_session_run(session, NULL, NULL), DFG_OK);
        long during = libc_calls_count() - before;
        assert_int_equal(counts.allocs, allocs);
        assert_int_equal(counts.frees, frees);
        if (during != 0)
            fail_msg("%s: %ld calls to malloc & co. during 20 runs", models[m],
                     during);
        dfg_session_destroy(session);
        assert_int_equal(counts.allocs, counts.frees);
        dfg_program_destroy(program);
    }
    /* The wrapping does see the library's allocations. */
    long before = libc_calls_count();
    fixture_weights w;
    dfg_program_destroy(compile_fixture(1, &w, DFG_PLANNER_NO_REUSE));
    assert_true(libc_calls_count() > before);
}

#define N_SESSIONS 8

/* A CPU backend that keeps the steps each session was given, in the order
 * the sessions were created, so that the test can see what they bound. */
typedef struct prepared {
    const dfg_step_args *steps;
    int32_t n_steps;
} prepared;
static prepared kept[N_SESSIONS];
static int n_kept;

static dfg_status keep_steps(dfg_backend_context *context,
                             const dfg_step_args *steps, int32_t n_steps)
{
    if (n_kept < N_SESSIONS)
        kept[n_kept++] = (prepared){steps, n_steps};
    return dfg_cpu_backend.prepare(context, steps, n_steps);
}

/* 1 if some step of session i reads data. */
static int reads(int i, const void *data)
{
    for (int32_t k = 0; k < kept[i].n_steps; k++)
        for (int32_t j = 0; j < kept[i].steps[k].n_inputs; j++)
            if (kept[i].steps[k].in[j] == data)
                return 1;
    return 0;
}

/* Runs session on the same seeded input; out receives output 0. */
static void run_seeded(const dfg_program *program, dfg_session *session,
                       float *out, size_t n)
{
    void *in = NULL, *probs = NULL;
    assert_int_equal(dfg_session_input_buffer(session, 0, &in), DFG_OK);
    assert_int_equal(dfg_session_output_buffer(session, 0, &probs), DFG_OK);
    dfg_tensor_info info;
    assert_int_equal(dfg_program_input_info(program, 0, &info), DFG_OK);
    int64_t numel = 1;
    for (int32_t d = 0; d < info.rank; d++)
        numel *= info.shape[d];
    uint64_t rng = 42;
    fixture_fill(&rng, in, numel);
    assert_int_equal(dfg_session_run(session, NULL, NULL), DFG_OK);
    memcpy(out, probs, n * sizeof *out);
}

/* Inference sessions read the program's weights in place: eight of them
 * allocate eight arenas and no copy of the weights. A session that
 * receives weights (copy_weights) gets its own copy first, leaving the
 * program and the other sessions alone. */
static void test_sessions_share_the_weights(void **state)
{
    (void)state;
    dfg_backend keeping = dfg_cpu_backend;
    keeping.prepare = keep_steps;
    n_kept = 0;
    dfg_graph *graph = NULL;
    dfg_program *program = NULL;
    assert_int_equal(dfg_model_build("cnn", NULL, &graph), DFG_OK);
    assert_int_equal(dfg_compile(graph, NULL, &program), DFG_OK);
    dfg_plan_stats stats;
    dfg_program_stats(program, &stats);
    assert_true(stats.weights_bytes > 10000);

    counting counts = {0, 0, 0};
    dfg_allocator allocator = counting_allocator(&counts);
    dfg_session *sessions[N_SESSIONS];
    for (int i = 0; i < N_SESSIONS; i++)
        assert_int_equal(dfg_session_create(program, &keeping, &allocator,
                                            &sessions[i]), DFG_OK);
    /* Beyond its arena, a session holds its step state (argument block,
     * oneDNN primitives), not a copy of the weights (layout copies are
     * the process's, shared: runtime/cpu/onednn/dnnl_weights.h). */
    long beyond_arenas = counts.bytes - N_SESSIONS * (long)stats.arena_bytes;
    if (beyond_arenas / N_SESSIONS >= (long)stats.weights_bytes / 2)
        fail_msg("%d sessions allocated %ld bytes beyond their arenas, the "
                 "weights are %llu", N_SESSIONS, beyond_arenas,
                 (unsigned long long)stats.weights_bytes);
    int32_t n_weights = 0;
    for (int32_t t = 0; t < program->n_tensors; t++) {
        const dfg_program_tensor *w = &program->tensors[t];
        if (w->kind != DFG_TENSOR_WEIGHT)
            continue;
        n_weights++;
        for (int i = 0; i < N_SESSIONS; i++)
            assert_true(reads(i, w->data));
    }
    assert_true(n_weights > 2);

    float probs0[32 * 10], probs1[32 * 10];
    run_seeded(program, sessions[0], probs0, 32 * 10);
    int32_t copied = 0;
    assert_int_equal(dfg_session_copy_weights(sessions[1], sessions[0], &copied),
                     DFG_OK);
    assert_int_equal(copied, n_weights);
    for (int32_t t = 0; t < program->n_tensors; t++) {
        const dfg_program_tensor *w = &program->tensors[t];
        if (w->kind == DFG_TENSOR_WEIGHT) {
            assert_false(reads(1, w->data));
            assert_true(reads(0, w->data));
        }
    }
    run_seeded(program, sessions[1], probs1, 32 * 10);
    assert_memory_equal(probs0, probs1, sizeof probs0);
    for (int i = 0; i < N_SESSIONS; i++)
        dfg_session_destroy(sessions[i]);
    assert_int_equal(counts.allocs, counts.frees);
    dfg_program_destroy(program);
    dfg_graph_destroy(graph);
}

/* Weights copied into a session that has run and holds them already (an
 * evaluation session given each epoch's weights): its next run reads the
 * new ones, as a fresh session given them does, never the layout copies
 * its kernels made of the old ones. */
static void test_weights_copied_again(void **state)
{
    (void)state;
    static const char *const models[] = {"cnn", "transformer"};
    for (int m = 0; m < 2; m++) {
        dfg_graph *graph = NULL;
        dfg_program *program = NULL;
        assert_int_equal(dfg_model_build(models[m], NULL, &graph), DFG_OK);
        assert_int_equal(dfg_compile(graph, NULL, &program), DFG_OK);
        dfg_graph_destroy(graph);
        dfg_session *src, *dst, *fresh;
        assert_int_equal(dfg_session_create(program, cpu(), NULL, &src), DFG_OK);
        assert_int_equal(dfg_session_create(program, cpu(), NULL, &dst), DFG_OK);
        assert_int_equal(dfg_session_create(program, cpu(), NULL, &fresh),
                         DFG_OK);
        /* src's own weights (a copy), then changed in place. */
        assert_int_equal(dfg_session_copy_weights(src, dst, NULL), DFG_OK);
        assert_int_equal(dfg_session_copy_weights(dst, src, NULL), DFG_OK);
        float *out = malloc(32 * 128 * 64 * sizeof *out);
        float *want = malloc(32 * 128 * 64 * sizeof *want);
        dfg_tensor_info info;
        assert_int_equal(dfg_program_output_info(program, 0, &info), DFG_OK);
        size_t n = 1;
        for (int32_t d = 0; d < info.rank; d++)
            n *= (size_t)info.shape[d];
        assert_true(n <= 32 * 128 * 64);
        run_seeded(program, dst, out, n);
        void *w;
        size_t bytes;
        assert_int_equal(dfg_session_weights_region(src, &w, &bytes), DFG_OK);
        for (size_t i = 0; i < bytes / sizeof(float); i++)
            ((float *)w)[i] *= 1.5f; /* every weight of both models: f32 */
        assert_int_equal(dfg_session_copy_weights(dst, src, NULL), DFG_OK);
        run_seeded(program, dst, out, n);
        assert_int_equal(dfg_session_copy_weights(fresh, src, NULL), DFG_OK);
        run_seeded(program, fresh, want, n);
        if (memcmp(out, want, n * sizeof *out) != 0)
            fail_msg("%s: a session given weights again runs the old ones",
                     models[m]);
        free(out);
        free(want);
        dfg_session_destroy(src);
        dfg_session_destroy(dst);
        dfg_session_destroy(fresh);
        dfg_program_destroy(program);
    }
}

static void test_backend_registry(void **state)
{
    (void)state;
    const dfg_backend *backend = NULL;
    assert_int_equal(dfg_backend_find("tpu", &backend), DFG_ERR_NOT_FOUND);
    assert_non_null(strstr(dfg_last_error(), "tpu"));
    backend = cpu();
    assert_string_equal(dfg_backend_name(backend), "cpu");
    assert_true(dfg_backend_available(backend));
    assert_int_equal(dfg_backend_host_memory(backend), 1);
    assert_int_equal(dfg_backend_host_memory(NULL), 0);
    const char *const *names = dfg_backend_names();
    assert_string_equal(names[0], "cpu");
    int n = 0;
    while (names[n])
        n++;
    assert_true(n >= 1);
}

/* A backend that lacks relu: session creation must name the step. */
static int no_relu(dfg_op op) { return op != DFG_OP_RELU && dfg_cpu_backend.supports_op(op); }

static void test_unsupported_op_is_named(void **state)
{
    (void)state;
    dfg_backend partial = dfg_cpu_backend;
    partial.name = "partial";
    partial.supports_op = no_relu;
    fixture_weights w;
    dfg_program *program = compile_fixture(2, &w, DFG_PLANNER_GREEDY_SIZE);
    dfg_session *session = (dfg_session *)&w; /* must be reset to NULL */
    assert_int_equal(dfg_session_create(program, &partial, NULL, &session),
                     DFG_ERR_UNSUPPORTED);
    assert_null(session);
    const char *message = dfg_last_error();
    assert_non_null(strstr(message, "'relu'"));
    assert_non_null(strstr(message, "partial"));
    assert_non_null(strstr(message, "step"));
    assert_int_equal(dfg_session_create(NULL, cpu(), NULL, &session),
                     DFG_ERR_INVALID_ARGUMENT);
    assert_int_equal(dfg_session_run(NULL, NULL, NULL), DFG_ERR_INVALID_ARGUMENT);
    dfg_program_destroy(program);
}

/* A profiled run gives the outputs of a plain one and a time for every
 * step that runs (the cnn's convs on oneDNN, an activation merged into
 * its conv timed as 0), none for a view. */
static void test_run_profiled(void **state)
{
    (void)state;
    dfg_graph *graph = NULL;
    assert_int_equal(dfg_model_build("cnn", NULL, &graph), DFG_OK);
    dfg_program *program = NULL;
    assert_int_equal(dfg_compile(graph, NULL, &program), DFG_OK);
    dfg_graph_destroy(graph);
    dfg_session *session = NULL;
    assert_int_equal(dfg_session_create(program, cpu(), NULL, &session), DFG_OK);
    dfg_plan_stats stats;
    dfg_program_stats(program, &stats);
    double *seconds = calloc((size_t)stats.n_steps, sizeof *seconds);
    assert_non_null(seconds);
    float *plain = NULL, *profiled = NULL;
    dfg_tensor_info info;
    assert_int_equal(dfg_program_output_info(program, 0, &info), DFG_OK);
    size_t n = 1;
    for (int32_t i = 0; i < info.rank; i++)
        n *= (size_t)info.shape[i];
    plain = malloc(n * sizeof *plain);
    profiled = malloc(n * sizeof *profiled);
    dfg_tensor_info in_info;
    assert_int_equal(dfg_program_input_info(program, 0, &in_info), DFG_OK);
    size_t n_in = 1;
    for (int32_t i = 0; i < in_info.rank; i++)
        n_in *= (size_t)in_info.shape[i];
    float *x = malloc(n_in * sizeof *x);
    assert_non_null(x);
    uint64_t rng = 7;
    fixture_fill(&rng, x, (int64_t)n_in);
    const void *inputs[1] = {x};
    void *plain_out[1] = {plain}, *profiled_out[1] = {profiled};
    assert_int_equal(dfg_session_run(session, inputs, plain_out), DFG_OK);
    assert_int_equal(dfg_session_run_profiled(session, inputs, profiled_out,
                                              seconds), DFG_OK);
    free(x);
    assert_memory_equal(plain, profiled, n * sizeof *plain);
    int convs = 0;
    for (int32_t i = 0; i < stats.n_steps; i++) {
        dfg_step_info step;
        assert_int_equal(dfg_program_step_info(program, i, &step), DFG_OK);
        assert_true(seconds[i] >= 0.0);
        if (strcmp(step.op, "conv2d") == 0) {
            assert_true(seconds[i] > 0.0);
            assert_true(step.flops > 0);
            convs++;
        }
        if (strcmp(step.op, "flatten") == 0 || strcmp(step.op, "reshape") == 0)
            assert_true(seconds[i] == 0.0);
    }
    assert_true(convs > 0);
    dfg_step_info step;
    assert_int_equal(dfg_program_step_info(program, stats.n_steps, &step),
                     DFG_ERR_INVALID_ARGUMENT);
    assert_int_equal(dfg_session_run_profiled(session, NULL, NULL, NULL),
                     DFG_ERR_INVALID_ARGUMENT);
    free(plain);
    free(profiled);
    free(seconds);
    dfg_session_destroy(session);
    dfg_program_destroy(program);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_matches_reference),
        cmocka_unit_test(test_arena_buffers),
        cmocka_unit_test(test_run_allocates_nothing),
        cmocka_unit_test(test_run_profiled),
        cmocka_unit_test(test_sessions_share_the_weights),
        cmocka_unit_test(test_weights_copied_again),
        cmocka_unit_test(test_backend_registry),
        cmocka_unit_test(test_unsupported_op_is_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
