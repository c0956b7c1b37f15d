/* Weights in the layouts the CPU backend's kernels read them in: copies
 * made once per program and shared by its sessions, whether the program
 * was compiled in the process or mapped from a file; the plain bytes
 * leaving memory where they may (a mapped file's pages, a program its
 * session took over); and the same kernels at the same arena for a
 * program however it was made, a conv oneDNN runs with no scratch
 * included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dfg/dfg.h"
#include "tests/runtime_cpu/dnnl_check.h"
#include "runtime/cpu_layout_rule.h"
#include "runtime/cpu/onednn/dnnl_weights.h"
#include "tests/support/program_fixtures.h"
#include "program/program_format.h"
#include "tests/support/random_data.h"

/* Sessions of one program share one reordered copy of its conv weights,
 * whether it was compiled in the process or mapped from a file: the
 * second session adds none, the last one to go frees it; a program
 * compiled without the rule keeps none. */
static void test_sessions_share_weights(void **state)
{
    (void)state;
    static const conv_case k = {"3x3", 1, 16, 10, 10, 32, 3, 3,
                                {{1, 1}, {1, 1}, {1, 1, 1, 1}, 1}, 1, NULL};
    float *weights = random_floats(32 * 16 * 9, 1.0f);
    float *bias = random_floats(32, 1.0f);
    float *input = random_floats(16 * 10 * 10, 1.0f);
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
 * (malloc'd: conv64_data). */
static void conv64_data(float **weights, float **bias, float **input)
{
    *weights = random_floats(64 * 64 * 9, 1.0f);
    *bias = random_floats(64, 1.0f);
    *input = random_floats(64 * 8 * 8, 1.0f);
}

static dfg_graph *conv64_graph(const float *weights, const float *bias)
{
    static const conv_case k = {"3x3 64", 1, 64, 8, 8, 64, 3, 3,
                                {{1, 1}, {1, 1}, {1, 1, 1, 1}, 1}, 1, "relu"};
    dfg_value y;
    return conv_graph(&k, weights, bias, 0, &y);
}

/* A program compiled from graph, which is destroyed: the program alone
 * holds its weights. */
static dfg_program *compiled_alone(dfg_graph *graph)
{
    dfg_program *p = NULL;
    assert_int_equal(dfg_compile(graph, NULL, &p), DFG_OK);
    dfg_graph_destroy(graph);
    return p;
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

/* x [1,16,14,14] -> conv 3x3 to 32 -> conv 1x1 to 32 -> conv 3x3 to 16,
 * each with its weights[i]: the 1x1 conv reads and writes tensors the
 * layout pass blocks for oneDNN, which runs it with no scratch. */
static dfg_graph *no_scratch_chain(float *const weights[3])
{
    static const int64_t channels[4] = {16, 32, 32, 16}, kernel[3] = {3, 1, 3};
    static const char *const names[3] = {"w1", "w2", "w3"};
    dfg_graph *g = NULL;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    int64_t x_shape[4] = {1, 16, 14, 14};
    dfg_value y;
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 4, x_shape, &y), DFG_OK);
    for (int i = 0; i < 3; i++) {
        int64_t k = kernel[i];
        int64_t w_shape[4] = {channels[i + 1], channels[i], k, k};
        int64_t pad = k / 2;
        dfg_conv2d_params params = {{1, 1}, {1, 1}, {pad, pad, pad, pad}, 1};
        dfg_value w;
        assert_int_equal(dfg_graph_weight(g, names[i], DFG_F32, 4, w_shape,
                                          weights[i], &w), DFG_OK);
        assert_int_equal(dfg_conv2d(g, y, w, DFG_NO_VALUE, &params, &y),
                         DFG_OK);
    }
    assert_int_equal(dfg_graph_output(g, y, "y"), DFG_OK);
    return g;
}

/* The step of p that runs the 1x1 conv. */
static int32_t pointwise_step(const dfg_program *p)
{
    for (int32_t i = 0; i < p->n_steps; i++)
        if (p->steps[i].op == DFG_OP_CONV2D &&
            p->tensors[p->steps[i].inputs[1]].type.shape[2] == 1)
            return i;
    fail_msg("no 1x1 conv step");
    return -1;
}

/* A step oneDNN runs with no scratch plans none: its workspace tensor
 * has 0 bytes (it marks the step for oneDNN), and the step runs on
 * oneDNN alike compiled in the process and saved and mapped back, to
 * what the reference kernels give. */
static void test_no_scratch_step_on_onednn(void **state)
{
    (void)state;
    float *weights[3] = {random_floats(32 * 16 * 9, 1.0f),
                         random_floats(32 * 32, 1.0f),
                         random_floats(16 * 32 * 9, 1.0f)};
    float *input = random_floats(16 * 14 * 14, 1.0f);
    dfg_graph *g = no_scratch_chain(weights);
    dfg_program *compiled = NULL, *saved = NULL, *reference = NULL;
    assert_int_equal(dfg_compile(g, NULL, &compiled), DFG_OK);
    assert_int_equal(dfg_compile(g, NULL, &saved), DFG_OK);
    saved = mapped(saved);
    dfg_compile_options options;
    dfg_compile_options_init(&options);
    options.backend_workspace = NULL;
    options.backend_workspace_for = NULL;
    assert_int_equal(dfg_compile(g, &options, &reference), DFG_OK);
    dfg_graph_destroy(g);
    int32_t s = pointwise_step(compiled);
    if (compiled->tensors[compiled->steps[s].outputs[0]].type.layout ==
        DFG_LAYOUT_PLAIN)
        skip(); /* no blocked layouts on this CPU */
    assert_int_equal(compiled->region_bytes[DFG_REGION_ARENA],
                     saved->region_bytes[DFG_REGION_ARENA]);
    for (int door = 0; door < 2; door++) {
        const dfg_program *p = door ? saved : compiled;
        int32_t t = p->steps[s].workspace;
        assert_true(t >= 0);
        assert_int_equal(p->tensors[t].bytes, 0);
    }
    dfg_session *a = NULL, *b = NULL, *r = NULL;
    assert_int_equal(dfg_session_create(compiled, cpu(), NULL, &a), DFG_OK);
    assert_int_equal(dfg_session_create(saved, cpu(), NULL, &b), DFG_OK);
    assert_int_equal(dfg_session_create(reference, cpu(), NULL, &r), DFG_OK);
    expect_same_kernels("no-scratch chain", a, b, compiled->n_steps);
    const char *library = NULL;
    assert_int_equal(dfg_session_step_library(a, s, &library), DFG_OK);
    if (!library || strncmp(library, "oneDNN", 6) != 0)
        fail_msg("the 1x1 conv runs on %s", library ? library : "dfg");
    float *ya = run_session(a, input, 16 * 14 * 14);
    float *yb = run_session(b, input, 16 * 14 * 14);
    float *yr = run_session(r, input, 16 * 14 * 14);
    assert_memory_equal(ya, yb, 16 * 14 * 14 * sizeof *ya);
    double err = relative_error(ya, yr, 16 * 14 * 14);
    if (!(err < 1e-5))
        fail_msg("oneDNN vs reference relative error %g", err);
    dfg_session_destroy(a);
    dfg_session_destroy(b);
    dfg_session_destroy(r);
    dfg_program_destroy(compiled);
    dfg_program_destroy(saved);
    dfg_program_destroy(reference);
    free(ya);
    free(yb);
    free(yr);
    free(input);
    for (int i = 0; i < 3; i++)
        free(weights[i]);
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

/* The data of p's weight of the given bytes. */
static const void *weight_of(const dfg_program *p, int64_t bytes)
{
    const void *data = NULL;
    for (int32_t i = 0; i < p->n_tensors; i++)
        if (p->tensors[i].region == DFG_REGION_WEIGHTS &&
            p->tensors[i].bytes == bytes)
            data = p->tensors[i].data;
    assert_non_null(data);
    return data;
}

/* *a, a session of kept, and *b, one that takes owned over: the same
 * kernels (what names the case); owned's plain weight of weight_bytes
 * has left memory where oneDNN holds a copy, and stays where it reads
 * the bytes as they are. */
static void kept_and_owned(const char *what, const dfg_program *kept,
                           dfg_program *owned, size_t weight_bytes,
                           dfg_session **a, dfg_session **b)
{
    const void *plain = weight_of(owned, (int64_t)weight_bytes);
    int64_t before = dfg_dnnl_weights_held_bytes();
    assert_int_equal(dfg_session_create(kept, cpu(), NULL, a), DFG_OK);
    int64_t copies = dfg_dnnl_weights_held_bytes() - before;
    assert_int_equal(dfg_session_create_owning(owned, cpu(), NULL, b),
                     DFG_OK);
    expect_same_kernels(what, *a, *b, kept->n_steps);
    size_t resident = resident_pages(plain, weight_bytes);
    if (copies > 0)
        assert_int_equal(resident, 0);
    else
        assert_true(resident > 0);
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
    conv64_data(&weights, &bias, &input);
    dfg_program *kept = compiled_alone(conv64_graph(weights, bias));
    dfg_program *owned = compiled_alone(conv64_graph(weights, bias));
    int64_t before = dfg_dnnl_weights_held_bytes();
    dfg_session *a = NULL, *b = NULL;
    kept_and_owned("kept, then owned", kept, owned, weight_bytes, &a, &b);
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
    /* A session that cannot be made destroys the program it was given
     * (LeakSanitizer and AddressSanitizer watch): one laid out for CPU
     * features this CPU lacks, refused when its steps are prepared. */
    if (dfg_cpu_layout_isa_check("avx512_core_amx") != DFG_OK) {
        owned = compiled_alone(conv64_graph(weights, bias));
        snprintf(owned->layout_isa, sizeof owned->layout_isa, "%s",
                 "avx512_core_amx");
        assert_int_equal(dfg_session_create_owning(owned, cpu(), NULL, &b),
                         DFG_ERR_UNSUPPORTED);
        assert_null(b);
    }
    dfg_session_destroy(a);
    assert_int_equal(dfg_dnnl_weights_held_bytes(), before);
    free(ya);
    free(yb);
    free(input);
    free(weights);
    free(bias);
    dfg_program_destroy(kept);
}

/* A weight larger than a slice (a fully connected layer's) is reordered
 * slice by slice, its plain pages dropped as it goes: the copy gives the
 * bits the whole reorder gives (a session of the program kept by its
 * caller), and none of the plain pages stay. */
static void test_large_weight_in_slices(void **state)
{
    (void)state;
    enum { ROWS = 4, K = 2048, N = 1536 }; /* 12 MiB of weights */
    size_t weight_bytes = (size_t)K * N * sizeof(float);
    float *weights = random_floats((int64_t)K * N, 1.0f);
    float *input = random_floats(ROWS * K, 1.0f);
    dfg_program *programs[3];
    dfg_graph *g = NULL;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
        int64_t x_shape[2] = {ROWS, K}, w_shape[2] = {N, K};
        dfg_value x, w, y;
        assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 2, x_shape, &x),
                         DFG_OK);
        assert_int_equal(dfg_graph_weight(g, "w", DFG_F32, 2, w_shape,
                                          weights, &w), DFG_OK);
        dfg_gemm_params params = {1.0f, 1.0f, 0, 1}; /* x w^T, as Linear */
        assert_int_equal(dfg_gemm(g, x, w, DFG_NO_VALUE, &params, &y),
                         DFG_OK);
        assert_int_equal(dfg_graph_output(g, y, "y"), DFG_OK);
        if (i < 2)
            programs[i] = compiled_alone(g);
        else
            assert_int_equal(dfg_compile(g, NULL, &programs[i]), DFG_OK);
    }
    dfg_program *kept = programs[0], *owned = programs[1];
    dfg_session *a = NULL, *b = NULL;
    kept_and_owned("gemm", kept, owned, weight_bytes, &a, &b);
    float *ya = run_session(a, input, ROWS * N);
    float *yb = run_session(b, input, ROWS * N);
    assert_memory_equal(ya, yb, (size_t)ROWS * N * sizeof *ya);
    dfg_session_destroy(b);
    /* Bytes the program shares with a graph still alive (g, the third)
     * stay whole. */
    const void *shared = weight_of(programs[2], (int64_t)weight_bytes);
    assert_int_equal(dfg_session_create_owning(programs[2], cpu(), NULL, &b),
                     DFG_OK);
    assert_memory_equal(shared, weights, weight_bytes);
    dfg_session_destroy(b);
    dfg_graph_destroy(g);
    dfg_session_destroy(a);
    free(ya);
    free(yb);
    free(input);
    free(weights);
    dfg_program_destroy(kept);
}

/* A mapped program's conv weights leave the resident set once reordered,
 * and come back from the file when read again: saving the program after
 * a session ran writes the same file. */
static void test_mapped_weights_come_back(void **state)
{
    (void)state;
    float *weights, *bias, *input;
    conv64_data(&weights, &bias, &input);
    dfg_graph *g = conv64_graph(weights, bias);
    dfg_program *compiled = NULL, *mapped = NULL;
    assert_int_equal(dfg_compile(g, NULL, &compiled), DFG_OK);
    mapped = fixture_reloaded(compiled);
    assert_non_null(mapped);
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

/* Each row reversed and doubled, written from to_md's offset0 on (a
 * transform by rows, as the columns conv's filters are). */
static void reverse_rows(const void *plain, const dnnl_memory_desc_t *to_md,
                         void *to)
{
    const float *w = plain;
    float *u = (float *)to + to_md->offset0;
    int64_t rows = to_md->dims[0], n = to_md->dims[1];
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < n; j++)
            u[r * n + j] = 2.0f * w[r * n + n - 1 - j];
}

/* A transform that runs by rows, written straight into the layout
 * chosen, goes a slice at a time with the plain pages dropped as it
 * goes: the same bits as the whole transform, and at most a slice of
 * plain (4 MiB) held beside the copy, where the whole transform holds
 * all of it. */
static void test_transform_by_rows(void **state)
{
    (void)state;
    enum { ROWS = 512, COLS = 6144 }; /* 12 MiB */
    size_t bytes = (size_t)ROWS * COLS * sizeof(float);
    float *values = random_floats((int64_t)ROWS * COLS, 1.0f);
    float *expected = malloc(bytes);
    assert_non_null(expected);
    dnnl_memory_desc_t md;
    dnnl_dims_t dims = {ROWS, COLS};
    assert_int_equal(dnnl_memory_desc_init_by_tag(&md, 2, dims, dnnl_f32,
                                                  dnnl_ab),
                     dnnl_success);
    reverse_rows(values, &md, expected);
    dnnl_engine_t engine = NULL;
    assert_int_equal(dnnl_engine_create(&engine, dnnl_cpu, 0), dnnl_success);
    int64_t overlaps[2];
    for (int by_rows = 1; by_rows >= 0; by_rows--) {
        /* pages of their own, as a mapped file's, that may be dropped */
        void *plain = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        assert_true(plain != MAP_FAILED);
        memcpy(plain, values, bytes);
        dfg_dnnl_weights *w = NULL;
        void *data = NULL;
        assert_int_equal(dfg_dnnl_weights_acquire_transformed(
                             engine, reverse_rows, by_rows, &md, plain, bytes,
                             &md, 0, 1, &w, &data),
                         DFG_OK);
        assert_memory_equal(data, expected, bytes);
        int64_t copies, replaced;
        dfg_dnnl_weights_held(&copies, &replaced, &overlaps[by_rows]);
        dfg_dnnl_weights_release(w);
        munmap(plain, bytes);
    }
    assert_true(overlaps[1] <= (int64_t)4 << 20);
    assert_int_equal(overlaps[0], (int64_t)bytes);
    dnnl_engine_destroy(engine);
    free(values);
    free(expected);
}

/* A matmul or gemm: A a graph input, B a weight or a graph input, a
 * gemm's C a weight (rank -1: none). onednn: whether oneDNN must take it
 * (else the reference kernel runs, as for an alpha or beta oneDNN's
 * matmul does not have). */

int main(void)
{
    const struct CMUnitTest tests[] = {
        /* first: the largest overlap is the process's so far */
        cmocka_unit_test(test_transform_by_rows),
        cmocka_unit_test(test_sessions_share_weights),
        cmocka_unit_test(test_compiled_and_saved_run_alike),
        cmocka_unit_test(test_no_scratch_step_on_onednn),
        cmocka_unit_test(test_owning_session_releases_weights),
        cmocka_unit_test(test_large_weight_in_slices),
        cmocka_unit_test(test_mapped_weights_come_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
