/* Threads running sessions of one program at once (runtime/executor.c):
 * each thread creates its own session, runs it many times and must agree
 * with the others and with a double-precision reference, for a compiled
 * program and for one mapped from a file; the sessions read the program's
 * weights in place, concurrently. scripts/test also runs this test built
 * with ThreadSanitizer (OMP_NUM_THREADS=1, since libgomp is not built
 * for it), which must report no race. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dfg/dfg.h"
#include "tests/support/program_fixtures.h"

#define N_THREADS 4
#define RUNS_PER_THREAD 25

typedef struct thread_job {
    const dfg_program *program;
    const float *x;
    float probs[FIX_BATCH * FIX_OUT], sums[2];
    int failures;
} thread_job;

static void *run_thread(void *arg)
{
    thread_job *job = arg;
    const dfg_backend *cpu = NULL;
    dfg_session *session = NULL;
    if (dfg_backend_find("cpu", &cpu) != DFG_OK ||
        dfg_session_create(job->program, cpu, NULL, &session) != DFG_OK) {
        job->failures++;
        return NULL;
    }
    const void *inputs[] = {job->x};
    void *outputs[] = {job->probs, job->sums};
    float first[FIX_BATCH * FIX_OUT];
    for (int run = 0; run < RUNS_PER_THREAD; run++) {
        if (dfg_session_run(session, inputs, outputs) != DFG_OK)
            job->failures++;
        if (run == 0)
            memcpy(first, job->probs, sizeof first);
        else if (memcmp(first, job->probs, sizeof first) != 0)
            job->failures++;
    }
    dfg_session_destroy(session);
    return NULL;
}

static void run_threads(const dfg_program *program, const fixture_weights *w)
{
    float x[FIX_BATCH * FIX_IN];
    uint64_t rng = 1234;
    fixture_fill(&rng, x, FIX_BATCH * FIX_IN);
    thread_job jobs[N_THREADS];
    pthread_t threads[N_THREADS];
    for (int t = 0; t < N_THREADS; t++) {
        memset(&jobs[t], 0, sizeof jobs[t]);
        jobs[t].program = program;
        jobs[t].x = x;
        assert_int_equal(pthread_create(&threads[t], NULL, run_thread, &jobs[t]), 0);
    }
    for (int t = 0; t < N_THREADS; t++)
        assert_int_equal(pthread_join(threads[t], NULL), 0);
    double ref_probs[FIX_BATCH * FIX_OUT], ref_sums[2];
    fixture_reference(w, x, ref_probs, ref_sums);
    for (int t = 0; t < N_THREADS; t++) {
        assert_int_equal(jobs[t].failures, 0);
        assert_memory_equal(jobs[t].probs, jobs[0].probs, sizeof jobs[0].probs);
        assert_memory_equal(jobs[t].sums, jobs[0].sums, sizeof jobs[0].sums);
    }
    assert_true(fixture_relative_error(jobs[0].probs, ref_probs,
                                       FIX_BATCH * FIX_OUT) < 1e-5);
    assert_true(fixture_relative_error(jobs[0].sums, ref_sums, 2) < 1e-5);
}

static void test_threads_share_a_compiled_program(void **state)
{
    (void)state;
    fixture_weights w;
    dfg_program *program = NULL;
    assert_int_equal(fixture_compile(11, &w, DFG_PLANNER_GREEDY_BREADTH,
                                     &program), DFG_OK);
    run_threads(program, &w);
    dfg_program_destroy(program);
}

static void test_threads_share_a_mapped_program(void **state)
{
    (void)state;
    fixture_weights w;
    dfg_program *compiled = NULL, *mapped = NULL;
    assert_int_equal(fixture_compile(12, &w, DFG_PLANNER_GREEDY_SIZE,
                                     &compiled), DFG_OK);
    mapped = fixture_reloaded(compiled); /* the file is gone, mapped */
    assert_non_null(mapped);
    run_threads(mapped, &w);
    dfg_program_destroy(mapped);
    dfg_program_destroy(compiled);
}

/* The bundled cnn, its convs on oneDNN: four threads create their
 * sessions at once, so the first to come reorders the conv weights into
 * the copy they all share (runtime/cpu/onednn/dnnl_weights.c) while the others
 * wait for it; mapped from a file, whose conv weight pages then go. */
typedef struct cnn_job {
    const dfg_program *program;
    const float *x;
    float *y;
    int failures;
} cnn_job;

static void *run_cnn_thread(void *arg)
{
    cnn_job *job = arg;
    const dfg_backend *cpu = NULL;
    dfg_session *session = NULL;
    const void *inputs[] = {job->x};
    void *outputs[] = {job->y};
    if (dfg_backend_find("cpu", &cpu) != DFG_OK ||
        dfg_session_create(job->program, cpu, NULL, &session) != DFG_OK ||
        dfg_session_run(session, inputs, outputs) != DFG_OK)
        job->failures++;
    dfg_session_destroy(session);
    return NULL;
}

static int64_t elements(const dfg_tensor_info *info)
{
    int64_t n = 1;
    for (int32_t i = 0; i < info->rank; i++)
        n *= info->shape[i];
    return n;
}

static void test_threads_share_conv_weights(void **state)
{
    (void)state;
    dfg_graph *graph = NULL;
    assert_int_equal(dfg_model_build("cnn", NULL, &graph), DFG_OK);
    dfg_compile_options reference_options;
    dfg_compile_options_init(&reference_options);
    reference_options.backend_workspace = NULL;
    reference_options.backend_workspace_for = NULL;
    dfg_program *compiled = NULL, *mapped = NULL, *reference = NULL;
    assert_int_equal(dfg_compile(graph, NULL, &compiled), DFG_OK);
    assert_int_equal(dfg_compile(graph, &reference_options, &reference),
                     DFG_OK);
    dfg_graph_destroy(graph);
    mapped = fixture_reloaded(compiled);
    assert_non_null(mapped);
    dfg_tensor_info in, out;
    assert_int_equal(dfg_program_input_info(mapped, 0, &in), DFG_OK);
    assert_int_equal(dfg_program_output_info(mapped, 0, &out), DFG_OK);
    int64_t n_in = elements(&in), n_out = elements(&out);
    float *x = malloc((size_t)n_in * sizeof *x);
    float *y = calloc((size_t)(N_THREADS + 1) * (size_t)n_out, sizeof *y);
    assert_non_null(x);
    assert_non_null(y);
    uint64_t rng = 99;
    fixture_fill(&rng, x, n_in);
    cnn_job jobs[N_THREADS + 1];
    pthread_t threads[N_THREADS];
    for (int t = 0; t <= N_THREADS; t++)
        jobs[t] = (cnn_job){.program = t < N_THREADS ? mapped : reference,
                            .x = x, .y = y + t * n_out};
    for (int t = 0; t < N_THREADS; t++)
        assert_int_equal(pthread_create(&threads[t], NULL, run_cnn_thread,
                                        &jobs[t]), 0);
    for (int t = 0; t < N_THREADS; t++)
        assert_int_equal(pthread_join(threads[t], NULL), 0);
    run_cnn_thread(&jobs[N_THREADS]);
    double num = 0, den = 0;
    for (int t = 0; t <= N_THREADS; t++) {
        assert_int_equal(jobs[t].failures, 0);
        if (t < N_THREADS)
            assert_memory_equal(jobs[t].y, jobs[0].y,
                                (size_t)n_out * sizeof *y);
    }
    for (int64_t i = 0; i < n_out; i++) {
        double d = (double)jobs[0].y[i] - (double)jobs[N_THREADS].y[i];
        num += d * d;
        den += (double)jobs[N_THREADS].y[i] * (double)jobs[N_THREADS].y[i];
    }
    assert_true(num <= 1e-10 * den); /* relative error 1e-5 */
    free(x);
    free(y);
    dfg_program_destroy(mapped);
    dfg_program_destroy(compiled);
    dfg_program_destroy(reference);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_share_a_compiled_program),
        cmocka_unit_test(test_threads_share_a_mapped_program),
        cmocka_unit_test(test_threads_share_conv_weights),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
