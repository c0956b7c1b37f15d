/* The CPU backend's oneDNN steps against its reference kernels. Matmul and
 * gemm: against a double-precision reference, for each case whether
 * oneDNN took the step or left it to the reference kernel. Convs: each
 * graph is built twice, once with its conv weights as weights, compiled with the
 * CPU backend's workspace rule (the convs then run on oneDNN, their
 * scratch planned in the arena, an activation after them as a post-op),
 * and once with the weights as a graph input (which oneDNN, reordering
 * weights once, does not take: the reference kernels run), run on the
 * same random data, and the outputs compared by relative error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dfg/dfg.h"
#include "dnnl_steps.h"
#include "dnnl_weights.h"
#include "program_fixtures.h"
#include "program_format.h"

static uint64_t rng = 12345;

static float uniform(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    float u = (float)(((rng * 0x2545f4914f6cdd1du) >> 40) * (1.0 / 16777216.0));
    return 2.0f * u - 1.0f;
}

static float *random_floats(int64_t n)
{
    float *x = malloc((size_t)n * sizeof *x);
    assert_non_null(x);
    for (int64_t i = 0; i < n; i++)
        x[i] = uniform();
    return x;
}

static const dfg_backend *cpu(void)
{
    const dfg_backend *b = NULL;
    assert_int_equal(dfg_backend_find("cpu", &b), DFG_OK);
    return b;
}

/* Runs graph, compiled with or without the CPU rule, on inputs; returns
 * the first output (malloc'd) and its element count. */
/* program saved and loaded back mapped, as a .dfgp is: only a mapped
 * program's weights are reordered for oneDNN (a compiled one's stay
 * on the heap, and a blocked copy would hold them twice). */
static dfg_program *mapped(dfg_program *program)
{
    dfg_program *loaded = fixture_mapped(program);
    assert_non_null(loaded);
    return loaded;
}

static float *run_graph(const dfg_graph *graph, int with_rule,
                        const void *const *inputs, int64_t *n_out)
{
    dfg_compile_options options;
    dfg_compile_options_init(&options); /* the CPU backend's rule */
    /* A lone conv is its program's peak, where its workspace would
     * shrink below oneDNN's (passes/workspace_fit.c) unless alignment
     * rounds the least and the full one to the same bytes. */
    options.alignment = (uint64_t)1 << 17;
    if (!with_rule) {
        options.backend_workspace = NULL;
        options.backend_workspace_for = NULL;
    }
    dfg_program *program = NULL;
    assert_int_equal(dfg_compile(graph, &options, &program), DFG_OK);
    program = mapped(program);
    dfg_session *session = NULL;
    assert_int_equal(dfg_session_create(program, cpu(), NULL, &session), DFG_OK);
    dfg_tensor_info info;
    assert_int_equal(dfg_program_output_info(program, 0, &info), DFG_OK);
    int64_t n = 1;
    for (int32_t i = 0; i < info.rank; i++)
        n *= info.shape[i];
    float *y = malloc((size_t)n * sizeof *y);
    assert_non_null(y);
    void *outputs[1] = {y};
    assert_int_equal(dfg_session_run(session, inputs, outputs), DFG_OK);
    dfg_session_destroy(session);
    dfg_program_destroy(program);
    *n_out = n;
    return y;
}

/* ||a - b|| / ||b|| */
static double relative_error(const float *a, const float *b, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = (double)a[i] - (double)b[i];
        num += d * d;
        den += (double)b[i] * (double)b[i];
    }
    return sqrt(num / den);
}

typedef struct conv_case {
    const char *what;
    int64_t n, c, h, w, m, kh, kw;
    dfg_conv2d_params params;
    int bias;
    const char *activation; /* an op applied to the conv's output, or NULL */
} conv_case;

/* x -> conv2d (w, b) -> activation -> y; w is a graph input (after x)
 * when w_as_input. */
static dfg_graph *conv_graph(const conv_case *k, const float *weights,
                             const float *bias, int w_as_input,
                             dfg_value *y)
{
    dfg_graph *g = NULL;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    int32_t group = k->params.group ? k->params.group : 1;
    int64_t x_shape[4] = {k->n, k->c, k->h, k->w};
    int64_t w_shape[4] = {k->m, k->c / group, k->kh, k->kw};
    dfg_value x, w, b = DFG_NO_VALUE;
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 4, x_shape, &x), DFG_OK);
    if (w_as_input)
        assert_int_equal(dfg_graph_input(g, "w", DFG_F32, 4, w_shape, &w),
                         DFG_OK);
    else
        assert_int_equal(
            dfg_graph_weight(g, "w", DFG_F32, 4, w_shape, weights, &w), DFG_OK);
    if (k->bias)
        assert_int_equal(dfg_graph_weight(g, "b", DFG_F32, 1, &k->m, bias, &b),
                         DFG_OK);
    assert_int_equal(dfg_conv2d(g, x, w, b, &k->params, y), DFG_OK);
    if (k->activation) {
        dfg_attrs attrs;
        dfg_attrs_init(&attrs);
        attrs.clip_min = 0.0f; /* relu6, for clip */
        attrs.clip_max = 0.5f;
        dfg_value z;
        assert_int_equal(dfg_graph_node(g, k->activation, NULL, y, 1, &attrs,
                                        &z, 1), DFG_OK);
        *y = z;
    }
    assert_int_equal(dfg_graph_output(g, *y, "y"), DFG_OK);
    return g;
}

static void check_conv(const conv_case *k)
{
    int32_t group = k->params.group ? k->params.group : 1;
    int64_t n_w = k->m * (k->c / group) * k->kh * k->kw;
    float *weights = random_floats(n_w), *bias = random_floats(k->m);
    float *input = random_floats(k->n * k->c * k->h * k->w);
    dfg_value y, y_ref;
    dfg_graph *g = conv_graph(k, weights, bias, 0, &y);
    dfg_graph *g_ref = conv_graph(k, weights, bias, 1, &y_ref);
    const void *inputs[2] = {input, weights};
    int64_t n_fast, n_ref;
    float *fast = run_graph(g, 1, inputs, &n_fast);
    float *ref = run_graph(g_ref, 0, inputs, &n_ref);
    assert_int_equal(n_fast, n_ref);
    double err = relative_error(fast, ref, n_ref);
    if (!(err < 1e-5))
        fail_msg("%s: oneDNN vs reference relative error %g", k->what, err);
    /* oneDNN takes the conv: its rule asks for scratch. */
    dfg_type types[4] = {{DFG_F32, 4, {k->n, k->c, k->h, k->w}, 0},
                         {DFG_F32, 4, {k->m, k->c / group, k->kh, k->kw}, 0},
                         {DFG_F32, 1, {k->m}, 0},
                         {DFG_F32, 4, {0}, 0}};
    dfg_tensor_info y_info;
    /* (the activation keeps the conv's shape) */
    assert_int_equal(dfg_graph_value_info(g, y, &y_info), DFG_OK);
    memcpy(types[3].shape, y_info.shape, sizeof y_info.shape);
    if (!k->bias)
        types[2].rank = -1;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.group = group;
    memcpy(attrs.strides, k->params.strides, sizeof attrs.strides);
    memcpy(attrs.dilations, k->params.dilations, sizeof attrs.dilations);
    memcpy(attrs.pads, k->params.pads, sizeof k->params.pads);
    assert_true(dfg_cpu_step_workspace(DFG_OP_CONV2D, &attrs, types, 3,
                                       types + 3, 1) > 0);
    free(fast);
    free(ref);
    free(input);
    free(weights);
    free(bias);
    dfg_graph_destroy(g);
    dfg_graph_destroy(g_ref);
}

static void test_conv_variants(void **state)
{
    (void)state;
    static const conv_case cases[] = {
        {"3x3 pad 1", 2, 16, 14, 14, 32, 3, 3, {{1, 1}, {1, 1}, {1, 1, 1, 1}, 1}, 1, NULL},
        {"1x1 no bias", 1, 24, 9, 9, 40, 1, 1, {{1, 1}, {1, 1}, {0, 0, 0, 0}, 1}, 0, NULL},
        {"strided 7x7, 3 channels", 1, 3, 32, 32, 16, 7, 7,
         {{2, 2}, {1, 1}, {3, 3, 3, 3}, 1}, 1, NULL},
        {"grouped", 2, 16, 10, 10, 24, 3, 3, {{1, 1}, {1, 1}, {1, 1, 1, 1}, 4}, 1, NULL},
        {"depthwise strided", 1, 32, 15, 15, 32, 3, 3,
         {{2, 2}, {1, 1}, {1, 1, 1, 1}, 32}, 1, NULL},
        {"depthwise 5x5", 2, 24, 12, 12, 24, 5, 5, {{1, 1}, {1, 1}, {2, 2, 2, 2}, 24}, 0, NULL},
        {"dilated, asymmetric pads", 1, 8, 17, 13, 12, 3, 3,
         {{1, 2}, {2, 3}, {2, 1, 0, 3}, 1}, 1, NULL},
        {"channels not a multiple of 8", 3, 5, 11, 11, 7, 3, 2,
         {{2, 1}, {1, 1}, {1, 0, 1, 1}, 1}, 1, NULL},
        {"+ relu", 1, 16, 8, 8, 16, 3, 3, {{1, 1}, {1, 1}, {1, 1, 1, 1}, 1}, 1, "relu"},
        {"depthwise + clip", 2, 16, 9, 9, 16, 3, 3, {{1, 1}, {1, 1}, {1, 1, 1, 1}, 16}, 1, "clip"},
        {"1x1 + sigmoid", 1, 8, 7, 7, 24, 1, 1, {{1, 1}, {1, 1}, {0, 0, 0, 0}, 1}, 0, "sigmoid"},
        {"+ gelu", 1, 8, 6, 6, 8, 3, 3, {{1, 1}, {1, 1}, {1, 1, 1, 1}, 1}, 1, "gelu"},
        {"+ tanh", 1, 8, 6, 6, 8, 3, 3, {{1, 1}, {1, 1}, {1, 1, 1, 1}, 1}, 1, "tanh"},
        {"+ leaky_relu", 1, 8, 6, 6, 8, 3, 3, {{1, 1}, {1, 1}, {1, 1, 1, 1}, 1}, 1, "leaky_relu"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_conv(&cases[i]);
}

/* The output of a session of program on input (malloc'd, n floats). */
static float *run_session(dfg_session *session, const float *input, int64_t n)
{
    float *y = malloc((size_t)n * sizeof *y);
    assert_non_null(y);
    const void *inputs[1] = {input};
    void *outputs[1] = {y};
    assert_int_equal(dfg_session_run(session, inputs, outputs), DFG_OK);
    return y;
}

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
        int32_t on_library = 0;
        for (int32_t i = 0; i < compiled->n_steps; i++) {
            const char *la = NULL, *lb = NULL;
            assert_int_equal(dfg_session_step_library(a, i, &la), DFG_OK);
            assert_int_equal(dfg_session_step_library(b, i, &lb), DFG_OK);
            if (la ? !lb || strcmp(la, lb) : lb != NULL)
                fail_msg("%s step %d: '%s' compiled, '%s' saved", *name,
                         (int)i, la ? la : "dfg", lb ? lb : "dfg");
            on_library += la != NULL;
        }
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
    static const conv_case k = {"3x3 64", 1, 64, 8, 8, 64, 3, 3,
                                {{1, 1}, {1, 1}, {1, 1, 1, 1}, 1}, 1, "relu"};
    size_t weight_bytes = 64 * 64 * 9 * sizeof(float);
    float *weights = random_floats(64 * 64 * 9), *bias = random_floats(64);
    float *input = random_floats(64 * 8 * 8);
    dfg_value y;
    dfg_graph *g = conv_graph(&k, weights, bias, 0, &y);
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
    const char *library_a = NULL, *library_b = NULL;
    for (int32_t i = 0; i < kept->n_steps; i++) {
        assert_int_equal(dfg_session_step_library(a, i, &library_a), DFG_OK);
        assert_int_equal(dfg_session_step_library(b, i, &library_b), DFG_OK);
        assert_true(library_a ? library_b && !strcmp(library_a, library_b)
                              : !library_b);
    }
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
    static const conv_case k = {"3x3 64", 1, 64, 8, 8, 64, 3, 3,
                                {{1, 1}, {1, 1}, {1, 1, 1, 1}, 1}, 1, "relu"};
    float *weights = random_floats(64 * 64 * 9), *bias = random_floats(64);
    float *input = random_floats(64 * 8 * 8);
    dfg_value y;
    dfg_graph *g = conv_graph(&k, weights, bias, 0, &y);
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
typedef struct matmul_case {
    const char *what;
    const char *op;
    int32_t a_rank, b_rank, c_rank;
    int64_t a_shape[4], b_shape[4], c_shape[2];
    int b_weight;
    int trans_a, trans_b;
    float alpha, beta;
    int onednn;
    /* A row of N values added after the product: 0 none, 1 add(y, row),
     * -1 add(row, y), row a weight; 2 add(y, row), row a graph input. */
    int row;
    int fused; /* the add became the product's bias (no step of its own) */
    /* A linear layer (a 2-D product of a row-major A and a weight B):
     * where oneDNN's matmul does not block B (AVX2), it runs as a 1x1
     * convolution (runtime/cpu/dnnl_linear.h). */
    int linear;
} matmul_case;

/* How many steps of the program run op. */
static int32_t steps_of(const dfg_program *program, const char *op)
{
    int32_t count = 0;
    dfg_plan_stats stats;
    dfg_program_stats(program, &stats);
    for (int32_t i = 0; i < stats.n_steps; i++) {
        dfg_step_info info;
        assert_int_equal(dfg_program_step_info(program, i, &info), DFG_OK);
        count += strcmp(info.op, op) == 0;
    }
    return count;
}

/* What runs the last step of op in session (NULL: dfg's kernel). */
static const char *library_of(const dfg_program *program,
                              const dfg_session *session, const char *op)
{
    const char *library = NULL;
    dfg_plan_stats stats;
    dfg_program_stats(program, &stats);
    for (int32_t i = 0; i < stats.n_steps; i++) {
        dfg_step_info info;
        assert_int_equal(dfg_program_step_info(program, i, &info), DFG_OK);
        if (strcmp(info.op, op) == 0)
            assert_int_equal(dfg_session_step_library(session, i, &library),
                             DFG_OK);
    }
    return library;
}

/* y + row (the case's row), as a graph node; *row_data receives the
 * row's values (malloc'd). */
static dfg_value row_added(dfg_graph *g, const matmul_case *k, dfg_value y,
                           float **row_data)
{
    dfg_tensor_info info;
    assert_int_equal(dfg_graph_value_info(g, y, &info), DFG_OK);
    int64_t n = info.shape[info.rank - 1];
    *row_data = random_floats(n);
    dfg_value operands[2] = {y, y}, z;
    if (k->row == 2)
        assert_int_equal(dfg_graph_input(g, "row", DFG_F32, 1, &n, &operands[1]),
                         DFG_OK);
    else
        assert_int_equal(dfg_graph_weight(g, "row", DFG_F32, 1, &n, *row_data,
                                          &operands[k->row < 0 ? 0 : 1]),
                         DFG_OK);
    assert_int_equal(dfg_graph_node(g, "add", "bias", operands, 2, NULL, &z, 1),
                     DFG_OK);
    return z;
}

static int64_t count_of(int32_t rank, const int64_t *shape)
{
    int64_t n = 1;
    for (int32_t d = 0; d < rank; d++)
        n *= shape[d];
    return n;
}

/* Index into an operand of rank `rank` (aligned right) of the output's
 * batch entry `index` over `batch_rank` dims, broadcasting dims of 1. */
static int64_t batch_start(int32_t rank, const int64_t *shape,
                           int32_t batch_rank, const int64_t *batch,
                           int64_t index)
{
    int64_t start = 0, stride = shape[rank - 2] * shape[rank - 1];
    for (int32_t d = batch_rank - 1; d >= 0; d--) {
        int32_t own = d - (batch_rank - (rank - 2));
        int64_t i = index % batch[d];
        index /= batch[d];
        if (own < 0)
            continue;
        start += (shape[own] == 1 ? 0 : i) * stride;
        stride *= shape[own];
    }
    return start;
}

/* The case's output in double: [batch.., m, n] (a 1-D B is [k, 1]). */
static double *matmul_reference(const matmul_case *vector_k, const float *a,
                                const float *b, const float *c, int64_t *n_out)
{
    matmul_case column = *vector_k;
    if (column.b_rank == 1) {
        column.b_rank = 2;
        column.b_shape[1] = 1;
    }
    const matmul_case *k = &column;
    int gemm = strcmp(k->op, "gemm") == 0;
    int64_t m = k->a_shape[k->a_rank - (gemm && k->trans_a ? 1 : 2)];
    int64_t kk = k->a_shape[k->a_rank - (gemm && k->trans_a ? 2 : 1)];
    int64_t n = k->b_shape[k->b_rank - (gemm && k->trans_b ? 2 : 1)];
    int32_t batch_rank = (k->a_rank > k->b_rank ? k->a_rank : k->b_rank) - 2;
    int64_t batch[4], batch_count = 1;
    for (int32_t d = 0; d < batch_rank; d++) {
        int32_t da = d - (batch_rank - (k->a_rank - 2));
        int32_t db = d - (batch_rank - (k->b_rank - 2));
        int64_t x = da >= 0 ? k->a_shape[da] : 1, y = db >= 0 ? k->b_shape[db] : 1;
        batch[d] = x > y ? x : y;
        batch_count *= batch[d];
    }
    double *out = malloc((size_t)(batch_count * m * n) * sizeof *out);
    assert_non_null(out);
    for (int64_t e = 0; e < batch_count; e++) {
        const float *ae = a + batch_start(k->a_rank, k->a_shape, batch_rank, batch, e);
        const float *be = b + batch_start(k->b_rank, k->b_shape, batch_rank, batch, e);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double sum = 0.0;
                for (int64_t t = 0; t < kk; t++)
                    sum += (double)(gemm && k->trans_a ? ae[t * m + i] : ae[i * kk + t]) *
                           (double)(gemm && k->trans_b ? be[j * kk + t] : be[t * n + j]);
                double y = gemm ? k->alpha * sum : sum;
                if (gemm && k->c_rank >= 0) {
                    int64_t rows = k->c_rank == 2 ? k->c_shape[0] : 1;
                    int64_t cols = k->c_rank >= 1 ? k->c_shape[k->c_rank - 1] : 1;
                    y += k->beta * c[(rows == 1 ? 0 : i) * cols + (cols == 1 ? 0 : j)];
                }
                out[(e * m + i) * n + j] = y;
            }
    }
    *n_out = batch_count * m * n;
    return out;
}

static void check_matmul(const matmul_case *k)
{
    float *a = random_floats(count_of(k->a_rank, k->a_shape));
    float *b = random_floats(count_of(k->b_rank, k->b_shape));
    float *c = random_floats(k->c_rank >= 0 ? count_of(k->c_rank, k->c_shape) : 1);
    dfg_graph *g = NULL;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    dfg_value operands[3], y;
    assert_int_equal(dfg_graph_input(g, "a", DFG_F32, k->a_rank, k->a_shape,
                                     &operands[0]), DFG_OK);
    if (k->b_weight)
        assert_int_equal(dfg_graph_weight(g, "b", DFG_F32, k->b_rank, k->b_shape,
                                          b, &operands[1]), DFG_OK);
    else
        assert_int_equal(dfg_graph_input(g, "b", DFG_F32, k->b_rank, k->b_shape,
                                         &operands[1]), DFG_OK);
    if (k->c_rank >= 0)
        assert_int_equal(dfg_graph_weight(g, "c", DFG_F32, k->c_rank, k->c_shape,
                                          c, &operands[2]), DFG_OK);
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.trans_a = k->trans_a;
    attrs.trans_b = k->trans_b;
    attrs.alpha = k->alpha;
    attrs.beta = k->beta;
    assert_int_equal(dfg_graph_node(g, k->op, "product", operands,
                                    k->c_rank >= 0 ? 3 : 2, &attrs, &y, 1),
                     DFG_OK);
    float *row = NULL;
    if (k->row)
        y = row_added(g, k, y, &row);
    assert_int_equal(dfg_graph_output(g, y, "y"), DFG_OK);
    dfg_program *program = NULL;
    assert_int_equal(dfg_compile(g, NULL, &program), DFG_OK);
    program = mapped(program);
    dfg_session *session = NULL;
    assert_int_equal(dfg_session_create(program, cpu(), NULL, &session), DFG_OK);
    int64_t n = 0;
    double *ref = matmul_reference(k, a, b, c, &n);
    dfg_tensor_info y_info;
    assert_int_equal(dfg_graph_value_info(g, y, &y_info), DFG_OK);
    for (int64_t i = 0; row && i < n; i++)
        ref[i] += row[i % y_info.shape[y_info.rank - 1]];
    float *out = malloc((size_t)n * sizeof *out);
    assert_non_null(out);
    const void *inputs[3] = {a, k->b_weight ? (const void *)row : b, row};
    void *outputs[1] = {out};
    assert_int_equal(dfg_session_run(session, inputs, outputs), DFG_OK);
    double num = 0.0, den = 0.0;
    for (int64_t i = 0; i < n; i++) {
        num += ((double)out[i] - ref[i]) * ((double)out[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    if (!(sqrt(num / den) < 1e-6))
        fail_msg("%s: relative error %g against the double reference",
                 k->what, sqrt(num / den));
    const char *library = library_of(program, session, k->op);
    if (k->row && (steps_of(program, "add") == 0) != k->fused)
        fail_msg("%s: the add is %s", k->what,
                 k->fused ? "a step" : "fused");
    if ((library != NULL) != k->onednn)
        fail_msg("%s: runs on %s, expected %s", k->what,
                 library ? library : "the reference kernel",
                 k->onednn ? "oneDNN" : "the reference kernel");
    dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
    int unblocked_matmul =
        isa == dnnl_cpu_isa_avx2 || isa == dnnl_cpu_isa_avx2_vnni;
    if (library && unblocked_matmul &&
        (strstr(library, "jit_1x1") != NULL) != k->linear)
        fail_msg("%s: runs on %s, expected %s", k->what, library,
                 k->linear ? "a 1x1 convolution" : "a matmul");
    dfg_session_destroy(session);
    dfg_program_destroy(program);
    dfg_graph_destroy(g);
    free(out);
    free(ref);
    free(a);
    free(b);
    free(c);
    free(row);
}

static void test_matmul_variants(void **state)
{
    (void)state;
    static const matmul_case cases[] = {
        {"2-D weight, odd sizes", "matmul", 2, 2, -1, {7, 13}, {13, 5}, {0}, 1, 0, 0, 1, 1, 1, 0, 0, 1},
        {"batch folded into rows", "matmul", 3, 2, -1, {2, 5, 33}, {33, 19}, {0}, 1, 0, 0, 1, 1, 1, 0, 0, 1},
        {"batched weight", "matmul", 3, 3, -1, {4, 6, 8}, {4, 8, 3}, {0}, 1, 0, 0, 1, 1, 1, 0, 0, 0},
        {"batched activations", "matmul", 4, 4, -1, {2, 3, 9, 17}, {2, 3, 17, 11}, {0}, 0, 0, 0, 1, 1, 1, 0, 0, 0},
        {"broadcast batch dims", "matmul", 4, 3, -1, {3, 1, 6, 10}, {4, 10, 7}, {0}, 0, 0, 0, 1, 1, 1, 0, 0, 0},
        {"activation B under a batch", "matmul", 2, 3, -1, {5, 9}, {3, 9, 4}, {0}, 0, 0, 0, 1, 1, 1, 0, 0, 0},
        {"1-D B: the reference", "matmul", 2, 1, -1, {5, 9}, {9}, {0}, 1, 0, 0, 1, 1, 0, 0, 0, 0},
        {"gemm transB, bias [N]", "gemm", 2, 2, 1, {5, 12}, {7, 12}, {7}, 1, 0, 1, 1, 1, 1, 0, 0, 1},
        {"gemm transA, C [M,1]: the reference", "gemm", 2, 2, 2, {12, 5}, {12, 7}, {5, 1}, 1, 1, 0, 1, 1, 0, 0, 0, 0},
        {"gemm transposed, C [M,N]: the reference", "gemm", 2, 2, 2, {11, 3}, {9, 11}, {3, 9}, 1, 1, 1, 1, 1, 0, 0, 0, 0},
        {"gemm both transposed, C [1,N]", "gemm", 2, 2, 2, {11, 3}, {9, 11}, {1, 9}, 1, 1, 1, 1, 1, 1, 0, 0, 0},
        {"gemm scalar C: the reference", "gemm", 2, 2, 0, {4, 6}, {6, 10}, {0}, 1, 0, 0, 1, 1, 0, 0, 0, 0},
        {"gemm, no C", "gemm", 2, 2, -1, {1, 31}, {31, 17}, {0}, 1, 0, 0, 1, 1, 1, 0, 0, 1},
        {"gemm activation B", "gemm", 2, 2, 1, {6, 8}, {5, 8}, {5}, 0, 0, 1, 1, 1, 1, 0, 0, 0},
        {"gemm alpha 0.5: the reference", "gemm", 2, 2, 1, {5, 12}, {12, 7}, {7}, 1, 0, 0, 0.5f, 1, 0, 0, 0, 0},
        {"gemm beta 2: the reference", "gemm", 2, 2, 1, {5, 12}, {12, 7}, {7}, 1, 0, 0, 1, 2.0f, 0, 0, 0, 0},
        {"+ a bias row: its bias", "matmul", 3, 2, -1, {2, 5, 33}, {33, 19}, {0}, 1, 0, 0, 1, 1, 1, 1, 1, 1},
        {"bias row + (either order)", "matmul", 2, 2, -1, {6, 10}, {10, 4}, {0}, 1, 0, 0, 1, 1, 1, -1, 1, 1},
        {"gemm without C + a bias row", "gemm", 2, 2, -1, {3, 8}, {5, 8}, {0}, 1, 0, 1, 1, 1, 1, 1, 1, 1},
        {"gemm with C + a row: an add", "gemm", 2, 2, 1, {3, 8}, {8, 5}, {5}, 1, 0, 0, 1, 1, 1, 1, 0, 1},
        {"batched product + a row: its bias", "matmul", 3, 3, -1, {4, 6, 8}, {4, 8, 3}, {0}, 1, 0, 0, 1, 1, 1, 1, 1, 0},
        {"+ an input row: its bias", "matmul", 2, 2, -1, {6, 10}, {10, 4}, {0}, 1, 0, 0, 1, 1, 1, 2, 1, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_matmul(&cases[i]);
}

/* softmax along the last axis on oneDNN (runtime/cpu/dnnl_softmax.c),
 * against a double reference, on rows wide enough to overflow exp unless
 * the maximum is subtracted; along another axis, or compiled for the
 * reference kernels (rule 0: no backend workspace rule, --no-onednn), the
 * reference kernel. */
static void check_softmax(int32_t axis, int rule, int onednn)
{
    const int64_t shape[3] = {3, 5, 37};
    int64_t n = 3 * 5 * 37;
    float *x = random_floats(n), *y = malloc((size_t)n * sizeof *y);
    assert_non_null(y);
    for (int64_t i = 0; i < n; i++)
        x[i] *= 100.0f;
    dfg_graph *g = NULL;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    dfg_value in, out;
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 3, shape, &in), DFG_OK);
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.axis = axis;
    assert_int_equal(dfg_graph_node(g, "softmax", "softmax", &in, 1, &attrs,
                                    &out, 1), DFG_OK);
    assert_int_equal(dfg_graph_output(g, out, "y"), DFG_OK);
    dfg_compile_options options;
    dfg_compile_options_init(&options);
    if (!rule)
        options.backend_workspace = NULL;
    dfg_program *program = NULL;
    assert_int_equal(dfg_compile(g, &options, &program), DFG_OK);
    dfg_session *session = NULL;
    assert_int_equal(dfg_session_create(program, cpu(), NULL, &session), DFG_OK);
    const void *inputs[1] = {x};
    void *outputs[1] = {y};
    assert_int_equal(dfg_session_run(session, inputs, outputs), DFG_OK);
    int64_t stride = axis == 2 || axis == -1 ? 1 : 37, len = axis == 1 ? 5 : 37;
    double num = 0.0, den = 0.0;
    for (int64_t i = 0; i < n; i++) {
        int64_t at = i % stride + (i / (stride * len)) * stride * len;
        double max = -INFINITY, sum = 0.0;
        for (int64_t j = 0; j < len; j++)
            max = fmax(max, x[at + j * stride]);
        for (int64_t j = 0; j < len; j++)
            sum += exp((double)x[at + j * stride] - max);
        double ref = exp((double)x[i] - max) / sum;
        num += (y[i] - ref) * (y[i] - ref);
        den += ref * ref;
    }
    if (!(sqrt(num / den) < 1e-6))
        fail_msg("softmax axis %d: relative error %g", axis, sqrt(num / den));
    if ((library_of(program, session, "softmax") != NULL) != onednn)
        fail_msg("softmax axis %d: expected %s", axis,
                 onednn ? "oneDNN" : "the reference kernel");
    dfg_session_destroy(session);
    dfg_program_destroy(program);
    dfg_graph_destroy(g);
    free(x);
    free(y);
}

static void test_softmax(void **state)
{
    (void)state;
    check_softmax(-1, 1, 1);
    check_softmax(2, 1, 1);
    check_softmax(1, 1, 0);
    check_softmax(-1, 0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_variants),
        cmocka_unit_test(test_sessions_share_weights),
        cmocka_unit_test(test_compiled_and_saved_run_alike),
        cmocka_unit_test(test_owning_session_releases_weights),
        cmocka_unit_test(test_mapped_weights_come_back),
        cmocka_unit_test(test_matmul_variants),
        cmocka_unit_test(test_softmax),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
