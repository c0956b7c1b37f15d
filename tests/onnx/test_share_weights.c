/* Weights once (passes/share_weights.c, the ONNX importer's Identity): a
 * model built here holds a weight W, its transpose WT as a second
 * initializer (read by a batched and a 2-D MatMul, as PyTorch writes a
 * tied output projection), two byte-identical biases, and W shared
 * through an Identity node. Compiled, it holds W and one bias only: the
 * weights region and the parameter count say so, and the outputs equal
 * the program compiled with share_weights off (every copy kept) and a
 * double-precision reference. A large transposed copy is not even read
 * by the importer. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "dfg/dfg.h"
#include "ir/graph.h"
#include "program/program.h"
#include "tests/support/onnx_builder.h"
#include "tests/support/onnx_run.h"

#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT

enum { R = 5, K = 4, BATCH = 2, ROWS = 3, N_OUT = 4 };

typedef struct tied_model {
    float w[R * K], wt[K * R], bias[R];
    float x[BATCH * ROWS * K], u[ROWS * K], z[ROWS * R];
} tied_model;

static void fill(float *to, const float *from, int64_t n)
{
    memcpy(to, from, (size_t)n * sizeof *to);
}

static void tied_model_init(tied_model *m)
{
    float *r = onnx_run_random_floats(R * K);
    fill(m->w, r, R * K);
    free(r);
    for (int i = 0; i < R; i++)
        for (int k = 0; k < K; k++)
            m->wt[k * R + i] = m->w[i * K + k];
    r = onnx_run_random_floats(R);
    fill(m->bias, r, R);
    free(r);
    r = onnx_run_random_floats(BATCH * ROWS * K);
    fill(m->x, r, BATCH * ROWS * K);
    free(r);
    r = onnx_run_random_floats(ROWS * K);
    fill(m->u, r, ROWS * K);
    free(r);
    r = onnx_run_random_floats(ROWS * R);
    fill(m->z, r, ROWS * R);
    free(r);
}

static void node(onnx_builder *b, const char *op, const char *a,
                 const char *c, const char *y)
{
    onnx_builder_node(b, op, y, (const char *[]){a, c, NULL},
                      (const char *[]){y, NULL});
}

/* y1 = x @ WT + B1 (x [2, 3, K]), y2 = u @ WT + B2, y3 = Gemm(u, W,
 * transB), y4 = z @ Identity(W). */
static void build(onnx_builder *b, const tied_model *m)
{
    onnx_builder_init(b, 13);
    onnx_builder_input(b, "x", F32, 3, (const int64_t[]){BATCH, ROWS, K},
                       NULL);
    onnx_builder_input(b, "u", F32, 2, (const int64_t[]){ROWS, K}, NULL);
    onnx_builder_input(b, "z", F32, 2, (const int64_t[]){ROWS, R}, NULL);
    onnx_builder_initializer(b, "W", F32, 2, (const int64_t[]){R, K}, m->w,
                             sizeof m->w);
    onnx_builder_initializer(b, "WT", F32, 2, (const int64_t[]){K, R}, m->wt,
                             sizeof m->wt);
    onnx_builder_initializer(b, "B1", F32, 1, (const int64_t[]){R}, m->bias,
                             sizeof m->bias);
    onnx_builder_initializer(b, "B2", F32, 1, (const int64_t[]){R}, m->bias,
                             sizeof m->bias);
    node(b, "MatMul", "x", "WT", "xw");
    node(b, "Add", "xw", "B1", "y1");
    node(b, "MatMul", "u", "WT", "uw");
    node(b, "Add", "uw", "B2", "y2");
    Onnx__NodeProto *gemm = onnx_builder_node(
        b, "Gemm", "y3", (const char *[]){"u", "W", NULL},
        (const char *[]){"y3", NULL});
    onnx_builder_attr_int(gemm, "transB", 1);
    onnx_builder_node(b, "Identity", "W_shared", (const char *[]){"W", NULL},
                      (const char *[]){"W_shared", NULL});
    node(b, "MatMul", "z", "W_shared", "y4");
    for (int i = 1; i <= N_OUT; i++) {
        char name[4] = {'y', (char)('0' + i), 0};
        onnx_builder_output(b, name);
    }
}

static const int64_t out_numel[N_OUT] = {BATCH * ROWS * R, ROWS * R,
                                         ROWS * R, ROWS * K};

/* The outputs computed in double from m. */
static void reference(const tied_model *m, double *ref[N_OUT])
{
    for (int r = 0; r < BATCH * ROWS; r++)
        for (int j = 0; j < R; j++) {
            double s = m->bias[j], t = m->bias[j], g = 0;
            for (int k = 0; k < K; k++) {
                s += (double)m->x[r * K + k] * m->w[j * K + k];
                if (r < ROWS) {
                    t += (double)m->u[r * K + k] * m->w[j * K + k];
                    g += (double)m->u[r * K + k] * m->w[j * K + k];
                }
            }
            ref[0][r * R + j] = s;
            if (r < ROWS) {
                ref[1][r * R + j] = t;
                ref[2][r * R + j] = g;
            }
        }
    for (int r = 0; r < ROWS; r++)
        for (int k = 0; k < K; k++) {
            double s = 0;
            for (int j = 0; j < R; j++)
                s += (double)m->z[r * R + j] * m->w[j * K + k];
            ref[3][r * K + k] = s;
        }
}

static dfg_program *compile(const onnx_builder *b, int share)
{
    dfg_graph *graph;
    dfg_status st = onnx_builder_import(b, &graph);
    if (st != DFG_OK)
        fail_msg("import: %s", dfg_last_error());
    dfg_compile_options options;
    dfg_compile_options_init(&options);
    options.share_weights = share;
    dfg_program *program;
    st = dfg_compile(graph, &options, &program);
    if (st != DFG_OK)
        fail_msg("compile: %s", dfg_last_error());
    dfg_graph_destroy(graph);
    assert_int_equal(dfg_program_verify(program), DFG_OK);
    return program;
}

/* A session of p on the cpu backend. */
static dfg_session *cpu_session(const dfg_program *p)
{
    const dfg_backend *cpu;
    dfg_session *session;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    assert_int_equal(dfg_session_create(p, cpu, NULL, &session), DFG_OK);
    return session;
}

/* Runs p on m's inputs into out[N_OUT] (floats). */
static void run(const dfg_program *p, const tied_model *m, float *out[N_OUT])
{
    assert_int_equal(dfg_program_num_outputs(p), N_OUT);
    dfg_session *session = cpu_session(p);
    const void *in[3] = {m->x, m->u, m->z};
    assert_int_equal(dfg_session_run(session, in, (void *const *)out),
                     DFG_OK);
    dfg_session_destroy(session);
}

/* Elements of the program's weights and constants. */
static int64_t parameters(const dfg_program *p)
{
    int64_t n = 0;
    for (int32_t i = 0; i < p->n_tensors; i++)
        if (p->tensors[i].region == DFG_REGION_WEIGHTS)
            n += dfg_type_numel(&p->tensors[i].type);
    return n;
}

static void test_tied_weights_held_once(void **state)
{
    (void)state;
    tied_model m;
    tied_model_init(&m);
    onnx_builder b;
    build(&b, &m);
    dfg_program *shared = compile(&b, 1), *apart = compile(&b, 0);
    onnx_builder_free(&b);
    dfg_plan_stats s, a;
    dfg_program_stats(shared, &s);
    dfg_program_stats(apart, &a);
    /* W and one bias, each aligned on its own: the distinct initializers. */
    const int64_t align = (int64_t)s.alignment;
    int64_t distinct = dfg_align_up(R * K * 4, align) +
                       dfg_align_up(R * 4, align);
    assert_int_equal((int64_t)s.weights_bytes, distinct);
    assert_int_equal(parameters(shared), R * K + R);
    /* Apart: W, WT and both biases (the Identity reads W itself). */
    assert_int_equal(parameters(apart), 2 * R * K + 2 * R);
    assert_true(a.weights_bytes > s.weights_bytes);

    float *got[N_OUT], *kept[N_OUT];
    double *ref[N_OUT];
    for (int i = 0; i < N_OUT; i++) {
        got[i] = calloc((size_t)out_numel[i], sizeof *got[i]);
        kept[i] = calloc((size_t)out_numel[i], sizeof *kept[i]);
        ref[i] = calloc((size_t)out_numel[i], sizeof *ref[i]);
    }
    run(shared, &m, got);
    run(apart, &m, kept);
    reference(&m, ref);
    for (int i = 0; i < N_OUT; i++) {
        onnx_run_expect_close(got[i], ref[i], out_numel[i]);
        for (int64_t e = 0; e < out_numel[i]; e++)
            assert_true(fabsf(got[i][e] - kept[i][e]) <=
                        1e-5f * (1.0f + fabsf(kept[i][e])));
        free(got[i]);
        free(kept[i]);
        free(ref[i]);
    }
    dfg_program_destroy(shared);
    dfg_program_destroy(apart);
}

/* A model with inputs `first` (rank, dims) and v [R, K], and W. */
static void begin_with_w(onnx_builder *b, const tied_model *m,
                         const char *first, int rank, const int64_t *dims)
{
    onnx_builder_init(b, 13);
    onnx_builder_input(b, first, F32, rank, dims, NULL);
    onnx_builder_input(b, "v", F32, 2, (const int64_t[]){R, K}, NULL);
    onnx_builder_initializer(b, "W", F32, 2, (const int64_t[]){R, K}, m->w,
                             sizeof m->w);
}

/* y2 = v + W (W read as it is) beside y1, compiled: the builder is
 * freed. */
static dfg_program *finish_with_w(onnx_builder *b)
{
    node(b, "Add", "v", "W", "y2");
    onnx_builder_output(b, "y1");
    onnx_builder_output(b, "y2");
    dfg_program *p = compile(b, 1);
    onnx_builder_free(b);
    return p;
}

/* A matrix and its transpose, each read by an op that cannot read the
 * other transposed (adds), both stay. */
static void test_transposed_copy_kept_for_other_readers(void **state)
{
    (void)state;
    tied_model m;
    tied_model_init(&m);
    onnx_builder b;
    begin_with_w(&b, &m, "u", 2, (const int64_t[]){K, R});
    onnx_builder_initializer(&b, "WT", F32, 2, (const int64_t[]){K, R}, m.wt,
                             sizeof m.wt);
    node(&b, "Add", "u", "WT", "y1");
    dfg_program *p = finish_with_w(&b);
    assert_int_equal(parameters(p), 2 * R * K);
    dfg_program_destroy(p);
}

/* A Transpose of an initializer, which the importer folds into a
 * constant, is the kept weight read transposed: W once, and x @ W^T. */
static void test_folded_transpose_read_transposed(void **state)
{
    (void)state;
    tied_model m;
    tied_model_init(&m);
    onnx_builder b;
    begin_with_w(&b, &m, "x", 3, (const int64_t[]){BATCH, ROWS, K});
    Onnx__NodeProto *t = onnx_builder_node(
        &b, "Transpose", "WT", (const char *[]){"W", NULL},
        (const char *[]){"WT", NULL});
    onnx_builder_attr_ints(t, "perm", (const int64_t[]){1, 0}, 2);
    node(&b, "MatMul", "x", "WT", "y1");
    dfg_program *p = finish_with_w(&b);
    assert_int_equal(parameters(p), R * K);
    float y1[BATCH * ROWS * R], y2[R * K];
    dfg_session *session = cpu_session(p);
    assert_int_equal(dfg_session_run(session, (const void *[]){m.x, m.wt},
                                     (void *const[]){y1, y2}), DFG_OK);
    double ref[BATCH * ROWS * R];
    for (int r = 0; r < BATCH * ROWS; r++)
        for (int j = 0; j < R; j++) {
            ref[r * R + j] = 0;
            for (int k = 0; k < K; k++)
                ref[r * R + j] += (double)m.x[r * K + k] * m.w[j * K + k];
        }
    onnx_run_expect_close(y1, ref, BATCH * ROWS * R);
    dfg_session_destroy(session);
    dfg_program_destroy(p);
}

enum { BIG_R = 1024, BIG_K = 160 }; /* W: 640 KiB, past the importer's
                                       twin size */

/* Imports b's model from a file (the importer reads it mapped); keep:
 * dfg_onnx_options.keep_transposed_copies. */
static dfg_graph *import_file(const onnx_builder *b, int keep)
{
    char path[] = "/tmp/dfg_twin_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t size;
    uint8_t *bytes = onnx_builder_pack(b, &size);
    assert_int_equal(write(fd, bytes, size), (ssize_t)size);
    close(fd);
    free(bytes);
    dfg_onnx_options options;
    dfg_onnx_options_init(&options);
    options.keep_transposed_copies = keep;
    dfg_graph *g;
    dfg_status st = dfg_onnx_import_file(path, &options, NULL, &g);
    unlink(path);
    if (st != DFG_OK)
        fail_msg("import: %s", dfg_last_error());
    return g;
}

/* The kind of g's value named name. */
static int kind_of(const dfg_graph *g, const char *name)
{
    for (int32_t v = 0; v < g->n_values; v++)
        if (g->values[v].name && strcmp(g->values[v].name, name) == 0)
            return (int)g->values[v].kind;
    fail_msg("no value '%s'", name);
    return -1;
}

/* A large initializer WT holding W's transpose is never read into memory
 * by the importer: WT becomes a transpose of W, which the compiled
 * program reads in place (no copy in another layout either, as two
 * steps read it: y1 = u @ WT, y2 = z @ W), and the outputs are the
 * products'. Kept apart when asked. */
static void test_large_transposed_twin_not_read(void **state)
{
    (void)state;
    float *w = onnx_run_random_floats(BIG_R * BIG_K);
    float *wt = malloc(sizeof *wt * BIG_R * BIG_K);
    float *u = onnx_run_random_floats(ROWS * BIG_K);
    float *z = onnx_run_random_floats(ROWS * BIG_R);
    for (int i = 0; i < BIG_R; i++)
        for (int k = 0; k < BIG_K; k++)
            wt[k * BIG_R + i] = w[i * BIG_K + k];
    onnx_builder b;
    onnx_builder_init(&b, 13);
    onnx_builder_input(&b, "u", F32, 2, (const int64_t[]){ROWS, BIG_K}, NULL);
    onnx_builder_input(&b, "z", F32, 2, (const int64_t[]){ROWS, BIG_R}, NULL);
    onnx_builder_initializer(&b, "W", F32, 2, (const int64_t[]){BIG_R, BIG_K},
                             w, sizeof *w * BIG_R * BIG_K);
    onnx_builder_initializer(&b, "WT", F32, 2,
                             (const int64_t[]){BIG_K, BIG_R}, wt,
                             sizeof *wt * BIG_R * BIG_K);
    node(&b, "MatMul", "u", "WT", "y1");
    node(&b, "MatMul", "z", "W", "y2");
    onnx_builder_output(&b, "y1");
    onnx_builder_output(&b, "y2");

    dfg_graph *kept = import_file(&b, 1);
    assert_int_equal(kind_of(kept, "WT"), DFG_VALUE_WEIGHT);
    dfg_graph_destroy(kept);
    dfg_graph *g = import_file(&b, 0);
    onnx_builder_free(&b);
    assert_int_equal(kind_of(g, "WT"), DFG_VALUE_NODE_OUTPUT);
    dfg_compile_options options;
    dfg_compile_options_init(&options);
    dfg_program *p;
    if (dfg_compile(g, &options, &p) != DFG_OK)
        fail_msg("compile: %s", dfg_last_error());
    dfg_graph_destroy(g);
    assert_int_equal(dfg_program_verify(p), DFG_OK);
    assert_int_equal(parameters(p), BIG_R * BIG_K);

    dfg_session *session = cpu_session(p);
    dfg_memory_prediction m;
    assert_int_equal(dfg_session_memory_predict(session, 0, &m), DFG_OK);
    assert_int_equal(m.weight_copy_bytes, 0);
    float *y1 = malloc(sizeof *y1 * ROWS * BIG_R);
    float *y2 = malloc(sizeof *y2 * ROWS * BIG_K);
    assert_int_equal(dfg_session_run(session, (const void *[]){u, z},
                                     (void *const[]){y1, y2}), DFG_OK);
    double *r1 = calloc(ROWS * BIG_R, sizeof *r1);
    double *r2 = calloc(ROWS * BIG_K, sizeof *r2);
    for (int r = 0; r < ROWS; r++)
        for (int i = 0; i < BIG_R; i++)
            for (int k = 0; k < BIG_K; k++) {
                r1[r * BIG_R + i] += (double)u[r * BIG_K + k] * w[i * BIG_K + k];
                r2[r * BIG_K + k] += (double)z[r * BIG_R + i] * w[i * BIG_K + k];
            }
    onnx_run_expect_close(y1, r1, ROWS * BIG_R);
    onnx_run_expect_close(y2, r2, ROWS * BIG_K);
    dfg_session_destroy(session);
    dfg_program_destroy(p);
    free(w), free(wt), free(u), free(z), free(y1), free(y2), free(r1), free(r2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tied_weights_held_once),
        cmocka_unit_test(test_transposed_copy_kept_for_other_readers),
        cmocka_unit_test(test_folded_transpose_read_transposed),
        cmocka_unit_test(test_large_transposed_twin_not_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
