/* The compiler's one constant evaluator (runtime/evaluate.h): importing
 * an ONNX model and compiling it folds its constants with no session and
 * no compile but the caller's own (counted through -Wl,--wrap), and a
 * value folded by the importer, one folded by the fold pass and one
 * computed at run time are the same bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dfg/dfg.h"
#include "tests/support/onnx_builder.h"

#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define I64 ONNX__TENSOR_PROTO__DATA_TYPE__INT64

/* ---- counting the library's compiles and sessions ------------------------ */

static long compiles, sessions;

dfg_status __real_dfg_compile(const dfg_graph *graph,
                              const dfg_compile_options *options,
                              dfg_program **out);
dfg_status __wrap_dfg_compile(const dfg_graph *graph,
                              const dfg_compile_options *options,
                              dfg_program **out);
dfg_status __wrap_dfg_compile(const dfg_graph *graph,
                              const dfg_compile_options *options,
                              dfg_program **out)
{
    compiles++;
    return __real_dfg_compile(graph, options, out);
}

dfg_status __real_dfg_session_create(const dfg_program *program,
                                     const dfg_backend *backend,
                                     const dfg_allocator *allocator,
                                     dfg_session **out);
dfg_status __wrap_dfg_session_create(const dfg_program *program,
                                     const dfg_backend *backend,
                                     const dfg_allocator *allocator,
                                     dfg_session **out);
dfg_status __wrap_dfg_session_create(const dfg_program *program,
                                     const dfg_backend *backend,
                                     const dfg_allocator *allocator,
                                     dfg_session **out)
{
    sessions++;
    return __real_dfg_session_create(program, backend, allocator, out);
}

/* ---- models ----------------------------------------------------------- */

enum { ROWS = 4, COLS = 6, N = ROWS * COLS };

/* c: fixed values of both signs and several magnitudes. */
static void constant_values(float *c)
{
    for (int i = 0; i < N; i++)
        c[i] = (float)((i * 37 % 23) - 11) * 0.37f;
}

/* y = x + exp(sigmoid(transpose(transpose(c)))) + reshape(x's shape), c an
 * initializer: every node but the last add folds at import, the reshape's
 * shape through Shape -> Gather -> Unsqueeze -> Concat. */
static dfg_graph *import_model(void)
{
    const int64_t dims[2] = {ROWS, COLS}, scalar = 1, minus_one[1] = {-1};
    const int64_t one[1] = {1}, axes[1] = {0}, perm[2] = {1, 0};
    float c[N];
    constant_values(c);
    onnx_builder b;
    onnx_builder_init(&b, 13);
    onnx_builder_input(&b, "x", F32, 2, dims, NULL);
    onnx_builder_initializer(&b, "c", F32, 2, dims, c, sizeof c);
    onnx_builder_initializer(&b, "one", I64, 0, NULL, &scalar, 8);
    onnx_builder_initializer(&b, "rest", I64, 1, one, minus_one, 8);
    onnx_builder_initializer(&b, "axes", I64, 1, one, axes, 8);
    onnx_builder_node(&b, "Shape", "shape", (const char *[]){"x", NULL},
                      (const char *[]){"s", NULL});
    onnx_builder_attr_int(onnx_builder_node(&b, "Gather", "gather",
                          (const char *[]){"s", "one", NULL},
                          (const char *[]){"n", NULL}), "axis", 0);
    onnx_builder_node(&b, "Unsqueeze", "unsq",
                      (const char *[]){"n", "axes", NULL},
                      (const char *[]){"n1", NULL});
    onnx_builder_attr_int(onnx_builder_node(&b, "Concat", "concat",
                          (const char *[]){"rest", "n1", NULL},
                          (const char *[]){"to", NULL}), "axis", 0);
    onnx_builder_attr_ints(onnx_builder_node(&b, "Transpose", "t1",
                           (const char *[]){"c", NULL},
                           (const char *[]){"ct", NULL}), "perm", perm, 2);
    onnx_builder_attr_ints(onnx_builder_node(&b, "Transpose", "t2",
                           (const char *[]){"ct", NULL},
                           (const char *[]){"c2", NULL}), "perm", perm, 2);
    onnx_builder_node(&b, "Sigmoid", "sig", (const char *[]){"c2", NULL},
                      (const char *[]){"s1", NULL});
    onnx_builder_node(&b, "Exp", "exp", (const char *[]){"s1", NULL},
                      (const char *[]){"e", NULL});
    onnx_builder_node(&b, "Reshape", "reshape",
                      (const char *[]){"e", "to", NULL},
                      (const char *[]){"er", NULL});
    onnx_builder_node(&b, "Add", "add", (const char *[]){"x", "er", NULL},
                      (const char *[]){"y", NULL});
    onnx_builder_output(&b, "y");
    size_t size;
    uint8_t *bytes = onnx_builder_pack(&b, &size);
    onnx_builder_free(&b);
    dfg_graph *graph = NULL;
    assert_int_equal(dfg_onnx_import_memory(bytes, size, NULL, NULL, &graph),
                     DFG_OK);
    free(bytes);
    return graph;
}

/* The same computation recorded with the builder: c a graph constant,
 * so the fold pass (or, with folding off, run time) computes it. */
static dfg_graph *built_model(void)
{
    const int64_t dims[2] = {ROWS, COLS}, to[2] = {ROWS, COLS};
    const int64_t perm[2] = {1, 0};
    float c[N];
    constant_values(c);
    dfg_graph *g;
    dfg_value x, k, t1, t2, s, e, r, y;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 2, dims, &x), DFG_OK);
    assert_int_equal(dfg_graph_constant(g, "c", DFG_F32, 2, dims, c, &k),
                     DFG_OK);
    assert_int_equal(dfg_transpose(g, k, 2, perm, &t1), DFG_OK);
    assert_int_equal(dfg_transpose(g, t1, 2, perm, &t2), DFG_OK);
    assert_int_equal(dfg_sigmoid(g, t2, &s), DFG_OK);
    assert_int_equal(dfg_exp(g, s, &e), DFG_OK);
    assert_int_equal(dfg_reshape(g, e, 2, to, &r), DFG_OK);
    assert_int_equal(dfg_add(g, x, r, &y), DFG_OK);
    assert_int_equal(dfg_graph_output(g, y, "y"), DFG_OK);
    return g;
}

/* Compiles graph (folding as fold says) and runs it on x into y. */
static void run(const dfg_graph *graph, int fold, const float *x, float *y)
{
    dfg_compile_options options;
    dfg_compile_options_init(&options);
    options.fold_constants = fold;
    dfg_program *program;
    dfg_session *session;
    const dfg_backend *cpu;
    assert_int_equal(dfg_compile(graph, &options, &program), DFG_OK);
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    assert_int_equal(dfg_session_create(program, cpu, NULL, &session), DFG_OK);
    assert_int_equal(dfg_session_run(session, (const void *[]){x},
                                     (void *[]){y}), DFG_OK);
    dfg_session_destroy(session);
    dfg_program_destroy(program);
}

static void input_values(float *x)
{
    for (int i = 0; i < N; i++)
        x[i] = (float)(i % 7) * 0.5f - 1.25f;
}

/* ---- tests ------------------------------------------------------------ */

static void test_no_session_and_one_compile(void **state)
{
    (void)state;
    compiles = sessions = 0;
    dfg_graph *imported = import_model();
    assert_int_equal(dfg_graph_num_nodes(imported), 1); /* the add */
    dfg_graph *built = built_model();
    dfg_program *a, *b;
    assert_int_equal(dfg_compile(imported, NULL, &a), DFG_OK);
    assert_int_equal(dfg_compile(built, NULL, &b), DFG_OK);
    /* Both graphs folded to one step, with the caller's compile each and
     * no session. */
    dfg_plan_stats stats;
    dfg_program_stats(a, &stats);
    assert_int_equal(stats.n_steps, 1);
    dfg_program_stats(b, &stats);
    assert_int_equal(stats.n_steps, 1);
    assert_int_equal(compiles, 2);
    assert_int_equal(sessions, 0);
    dfg_program_destroy(a);
    dfg_program_destroy(b);
    dfg_graph_destroy(imported);
    dfg_graph_destroy(built);
}

static void test_folded_bytes_are_run_time_bytes(void **state)
{
    (void)state;
    float x[N], imported_y[N], folded_y[N], computed_y[N];
    input_values(x);
    dfg_graph *imported = import_model();
    dfg_graph *built = built_model();
    run(imported, 1, x, imported_y);
    run(built, 1, x, folded_y);
    run(built, 0, x, computed_y);
    assert_memory_equal(imported_y, folded_y, sizeof folded_y);
    assert_memory_equal(folded_y, computed_y, sizeof computed_y);
    dfg_graph_destroy(imported);
    dfg_graph_destroy(built);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_session_and_one_compile),
        cmocka_unit_test(test_folded_bytes_are_run_time_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
