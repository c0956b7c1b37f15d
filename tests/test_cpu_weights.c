/* Weights in the layouts the CPU backend's kernels read them in: copies
 * made once per program and shared by its sessions, whether the program
 * was compiled in the process or mapped from a file; the plain bytes
 * leaving memory where they may (a mapped file's pages, a program its
 * session took over); and the same kernels at the same arena for a
 * program however it was made. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dfg/dfg.h"
#include "dnnl_check.h"
#include "dnnl_weights.h"
#include "program_format.h"

/* Sessions of one program share one reordered copy of its conv weights,
 * whether it was compiled in the process or mapped from a file: the
 * second session adds none, the last one to go frees it; a program
 * compiled without the rule keeps none. */
static void test_sessions_share_weights(void **state)
{
    (void)state;
    static const conv_case k = {"3x3", 1, 16, 10, 10, 32, 3, 3,
                                {{1, 1}, {1, 1}, {1, 1, 1, 1}, 1}, 1, NULL};
    float *weights = random_floats(32 * 16 * 9), *bias = random_floats(32);
    float *input = random_floats(16 * 10 * 10);
    dfg_value y;
    dfg_graph *g = conv_graph(&k, weights, bias, 0, &y);
    int64_t before = dfg_dnnl_weights_held_bytes();
    dfg_program *program = NULL;
    /* The conv is this program's peak, where its workspace would shrink
     * below oneDNN's (passes/workspace_fit.c) unless alignment rounds the
     * least and the full one to the same bytes. */
    dfg_compile_options aligned;
    dfg_compile_options_init(&aligned);
    aligned.alignment = (uint64_t)1 << 17;
    assert_int_equal(dfg_compile(g, &aligned, &program), DFG_OK);
    float *ya = NULL, *yb = NULL;
    for (int from_file = 0; from_file <= 1; from_file++) {
        if (from_file)
            program = mapped(program);
        dfg_session *a = NULL, *b = NULL;
        assert_int_equal(dfg_session_create(program, cpu(), NULL, &a), DFG_OK);
        int64_t one = dfg_dnnl_weights_held_bytes() - before;
        assert_true(one >= (int64_t)(32 * 16 * 9 * sizeof(float)));
        assert_int_equal(dfg_session_create(program, cpu(), NULL, &b), DFG_OK);
        assert_int_equal(dfg_dnnl_weights_held_bytes() - before, one);
        free(ya);
        free(yb);
        ya = run_session(a, input, 32 * 10 * 10);
        yb = run_session(b, input, 32 * 10 * 10);
        assert_memory_equal(ya, yb, 32 * 10 * 10 * sizeof *ya);
        dfg_session_destroy(a);
        assert_int_equal(dfg_dnnl_weights_held_bytes() - before, one);
        dfg_session_destroy(b);
        assert_int_equal(dfg_dnnl_weights_held_bytes(), before);
    }
    dfg_program_destroy(program);

    dfg_session *a = NULL;
    dfg_compile_options options;
    dfg_compile_options_init(&options);
    options.backend_workspace = NULL;
    options.backend_workspace_for = NULL;
    assert_int_equal(dfg_compile(g, &options, &program), DFG_OK);
    assert_int_equal(dfg_session_create(program, cpu(), NULL, &a), DFG_OK);
    assert_int_equal(dfg_dnnl_weights_held_bytes(), before);
    float *reference = run_session(a, input, 32 * 10 * 10);
    double err = relative_error(ya, reference, 32 * 10 * 10);
    if (!(err < 1e-5))
        fail_msg("shared weights vs reference relative error %g", err);
    dfg_session_destroy(a);
    dfg_program_destroy(program);
    /* A rule without the name the program records is refused. */
    options.backend_workspace = dfg_backend_workspace_rule(cpu());
    assert_int_equal(dfg_compile(g, &options, &program),
                     DFG_ERR_INVALID_ARGUMENT);
    free(ya);
    free(yb);
    free(reference);
    free(input);
    free(weights);
    free(bias);
    dfg_graph_destroy(g);
}

/* A 64 -> 64 3x3 conv + relu on 8x8 and random weights, bias and input
 * (malloc'd). */
static dfg_graph *conv64_graph(float **weights, float **bias, float **input)
{
    static const conv_case k = {"3x3 64", 1, 64, 8, 8, 64, 3, 3,
                                {{1, 1}, {1, 1}, {1, 1, 1, 1}, 1}, 1, "relu"};
    *weights = random_floats(64 * 64 * 9);
    *bias = random_floats(64);
    *input = random_floats(64 * 8 * 8);
    dfg_value y;
    return conv_graph(&k, *weights, *bias, 0, &y);
}

/* Steps of a and b (sessions of programs of n_steps steps) run on the
 * same kernels; returns how many run on a library. */
static int32_t expect_same_kernels(const char *what, const dfg_session *a,
                                   const dfg_session *b, int32_t n_steps)
{
    int32_t on_library = 0;
    for (int32_t i = 0; i < n_steps; i++) {
        const char *la = NULL, *lb = NULL;
        assert_int_equal(dfg_session_step_library(a, i, &la), DFG_OK);
        assert_int_equal(dfg_session_step_library(b, i, &lb), DFG_OK);
        if (la ? !lb || strcmp(la, lb) : lb != NULL)
            fail_msg("%s step %d: '%s', then '%s'", what, (int)i,
                     la ? la : "dfg", lb ? lb : "dfg");
        on_library += la != NULL;
    }
    return on_library;
}

/* A program is a program however it was made: every bundled model,
 * compiled in the process with the default options and the same program
 * saved and mapped back, runs each step on the same kernel at the same
 * arena. */
static void test_compiled_and_saved_run_alike(void **state)
{
    (void)state;
    for (const char *const *name = dfg_model_names(); *name; name++) {
        dfg_graph *g = NULL;
        assert_int_equal(dfg_model_build(*name, NULL, &g), DFG_OK);
        dfg_program *compiled = NULL, *saved = NULL;
        assert_int_equal(dfg_compile(g, NULL, &saved), DFG_OK);
        saved = mapped(saved); /* saved, then loaded from the file */
        assert_int_equal(dfg_compile(g, NULL, &compiled), DFG_OK);
        dfg_graph_destroy(g);
        assert_int_equal(compiled->region_bytes[DFG_REGION_ARENA],
                         saved->region_bytes[DFG_REGION_ARENA]);
        assert_int_equal(compiled->n_steps, saved->n_steps);
        dfg_session *a = NULL, *b = NULL;
        assert_int_equal(dfg_session_create(compiled, cpu(), NULL, &a),
                         DFG_OK);
        assert_int_equal(dfg_session_create(saved, cpu(), NULL, &b), DFG_OK);
        int32_t on_library =
            expect_same_kernels(*name, a, b, compiled->n_steps);
        /* Not vacuous: the models with convs or matmuls use oneDNN. */
        if (strcmp(*name, "cnn") == 0 || strcmp(*name, "transformer") == 0)
            assert_true(on_library > 0);
        dfg_session_destroy(a);
        dfg_session_destroy(b);
        dfg_program_destroy(compiled);
        dfg_program_destroy(saved);
    }
}

/* Pages of [data, data + bytes) wholly inside it that are resident. */
static size_t resident_pages(const void *data, size_t bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t first = ((uintptr_t)data + page - 1) & ~(uintptr_t)(page - 1);
    uintptr_t last = ((uintptr_t)data + bytes) & ~(uintptr_t)(page - 1);
    if (first >= last)
        return 0;
    size_t n = (last - first) / page, resident = 0;
    unsigned char *in_core = malloc(n);
    assert_non_null(in_core);
    assert_int_equal(mincore((void *)first, last - first, in_core), 0);
    for (size_t i = 0; i < n; i++)
        resident += in_core[i] & 1u;
    free(in_core);
    return resident;
}

/* A session that takes its program over (dfg_session_create_owning) runs
 * the kernels a session of the same program kept by its caller runs, and
 * the plain weights it reads from a copy in oneDNN's layout leave memory;
 * the program is then neither saved nor given to another session. */
static void test_owning_session_releases_weights(void **state)
{
    (void)state;
    size_t weight_bytes = 64 * 64 * 9 * sizeof(float);
    float *weights, *bias, *input;
    dfg_graph *g = conv64_graph(&weights, &bias, &input);
    dfg_program *kept = NULL, *owned = NULL;
    assert_int_equal(dfg_compile(g, NULL, &kept), DFG_OK);
    assert_int_equal(dfg_compile(g, NULL, &owned), DFG_OK);
    const void *plain = NULL;
    for (int32_t i = 0; i < owned->n_tensors; i++)
        if (owned->tensors[i].region == DFG_REGION_WEIGHTS &&
            owned->tensors[i].bytes == (int64_t)weight_bytes)
            plain = owned->tensors[i].data;
    assert_non_null(plain);
    int64_t before = dfg_dnnl_weights_held_bytes();
    dfg_session *a = NULL, *b = NULL;
    assert_int_equal(dfg_session_create(kept, cpu(), NULL, &a), DFG_OK);
    int64_t copies = dfg_dnnl_weights_held_bytes() - before;
    assert_int_equal(dfg_session_create_owning(owned, cpu(), NULL, &b),
                     DFG_OK);
    expect_same_kernels("kept, then owned", a, b, kept->n_steps);
    /* The copy replaced the plain bytes; where oneDNN reads them as they
     * are, they stay. */
    size_t resident = resident_pages(plain, weight_bytes);
    if (copies > 0)
        assert_int_equal(resident, 0);
    else
        assert_true(resident > 0);
    float *ya = run_session(a, input, 64 * 8 * 8);
    float *yb = run_session(b, input, 64 * 8 * 8);
    assert_memory_equal(ya, yb, 64 * 8 * 8 * sizeof *ya);
    const dfg_program *taken = dfg_session_program(b);
    uint8_t *data = NULL;
    size_t size = 0;
    assert_int_equal(dfg_program_serialize(taken, NULL, &data, &size),
                     DFG_ERR_INVALID_ARGUMENT);
    dfg_session *c = NULL;
    assert_int_equal(dfg_session_create(taken, cpu(), NULL, &c),
                     DFG_ERR_INVALID_ARGUMENT);
    assert_int_equal(dfg_session_copy_weights(a, b, NULL),
                     DFG_ERR_INVALID_ARGUMENT);
    dfg_session_destroy(b); /* and its program */
    dfg_session_destroy(a);
    assert_int_equal(dfg_dnnl_weights_held_bytes(), before);
    free(ya);
    free(yb);
    free(input);
    free(weights);
    free(bias);
    dfg_program_destroy(kept);
    dfg_graph_destroy(g);
}

/* A mapped program's conv weights leave the resident set once reordered,
 * and come back from the file when read again: saving the program after
 * a session ran writes the same file. */
static void test_mapped_weights_come_back(void **state)
{
    (void)state;
    float *weights, *bias, *input;
    dfg_graph *g = conv64_graph(&weights, &bias, &input);
    dfg_program *compiled = NULL, *mapped = NULL;
    assert_int_equal(dfg_compile(g, NULL, &compiled), DFG_OK);
    char path[] = "/tmp/dfg-test-dnnl-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(dfg_program_save(compiled, path), DFG_OK);
    assert_int_equal(dfg_program_load(path, NULL, &mapped), DFG_OK);
    dfg_session *session = NULL;
    assert_int_equal(dfg_session_create(mapped, cpu(), NULL, &session), DFG_OK);
    float *out = run_session(session, input, 64 * 8 * 8);
    dfg_session_destroy(session);
    uint8_t *before = NULL, *after = NULL;
    size_t n_before = 0, n_after = 0;
    assert_int_equal(dfg_program_serialize(compiled, NULL, &before, &n_before),
                     DFG_OK);
    assert_int_equal(dfg_program_serialize(mapped, NULL, &after, &n_after),
                     DFG_OK);
    assert_int_equal(n_before, n_after);
    assert_memory_equal(before, after, n_before);
    /* The same output as a session of the program it was saved from. */
    assert_int_equal(dfg_session_create(compiled, cpu(), NULL, &session), DFG_OK);
    float *again = run_session(session, input, 64 * 8 * 8);
    assert_memory_equal(out, again, 64 * 8 * 8 * sizeof *out);
    dfg_session_destroy(session);
    unlink(path);
    free(before);
    free(after);
    free(out);
    free(again);
    free(input);
    free(weights);
    free(bias);
    dfg_program_destroy(mapped);
    dfg_program_destroy(compiled);
    dfg_graph_destroy(g);
}

/* A matmul or gemm: A a graph input, B a weight or a graph input, a
 * gemm's C a weight (rank -1: none). onednn: whether oneDNN must take it
 * (else the reference kernel runs, as for an alpha or beta oneDNN's
 * matmul does not have). */

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sessions_share_weights),
        cmocka_unit_test(test_compiled_and_saved_run_alike),
        cmocka_unit_test(test_owning_session_releases_weights),
        cmocka_unit_test(test_mapped_weights_come_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
