/* What ONNX Runtime accepts or refuses at a model's edges, dfg does too:
 * graph outputs that are a graph input, an initializer, or an output
 * listed again are copies of those values; MaxPool and AveragePool whose
 * explicit pads reach the kernel's size (a window could lie entirely in
 * the padding) are refused at import; bool bytes other than 0 and 1, in
 * an input or an initializer, are true. */
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
#define BOOL ONNX__TENSOR_PROTO__DATA_TYPE__BOOL

/* Compiles graph (destroyed) and runs it once on the CPU. */
static void run(dfg_graph *graph, const void *const *inputs,
                void *const *outputs)
{
    dfg_program *program;
    dfg_session *session;
    const dfg_backend *cpu;
    if (dfg_compile(graph, NULL, &program) != DFG_OK)
        fail_msg("compile: %s", dfg_last_error());
    dfg_graph_destroy(graph);
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    assert_int_equal(dfg_session_create(program, cpu, NULL, &session), DFG_OK);
    assert_int_equal(dfg_session_run(session, inputs, outputs), DFG_OK);
    dfg_session_destroy(session);
    dfg_program_destroy(program);
}

static void test_outputs_that_are_inputs_weights_or_repeated(void **state)
{
    (void)state;
    const int64_t dims[1] = {3};
    const float w[3] = {1.5f, -2.0f, 3.25f}, x[3] = {-1.0f, 5.0f, 0.5f};
    onnx_builder b;
    onnx_builder_init(&b, 13);
    onnx_builder_input(&b, "x", F32, 1, dims, NULL);
    onnx_builder_initializer(&b, "W", F32, 1, dims, w, sizeof w);
    onnx_builder_node(&b, "Relu", "relu", (const char *[]){"x", NULL},
                      (const char *[]){"y", NULL});
    onnx_builder_output(&b, "y");
    onnx_builder_output(&b, "x");
    onnx_builder_output(&b, "W");
    onnx_builder_output(&b, "y");
    dfg_graph *graph = NULL;
    if (onnx_builder_import(&b, &graph) != DFG_OK)
        fail_msg("import: %s", dfg_last_error());
    onnx_builder_free(&b);
    float out[4][3];
    memset(out, 0, sizeof out);
    const void *inputs[1] = {x};
    void *outputs[4] = {out[0], out[1], out[2], out[3]};
    run(graph, inputs, outputs);
    const float relu[3] = {0.0f, 5.0f, 0.5f};
    assert_memory_equal(out[0], relu, sizeof relu);
    assert_memory_equal(out[1], x, sizeof x);
    assert_memory_equal(out[2], w, sizeof w);
    assert_memory_equal(out[3], relu, sizeof relu);
}

/* A pool over x [1, 1, 4, 4] (or [1, 1, 4, 4, 4] when rank is 5) with
 * the given kernel, pads (begins then ends) and auto_pad (NULL: none). */
static dfg_status import_pool(const char *op, int rank, const int64_t *kernel,
                              const int64_t *pads, const char *auto_pad)
{
    const int64_t dims[5] = {1, 1, 4, 4, 4};
    int spatial = rank - 2;
    onnx_builder b;
    onnx_builder_init(&b, 13);
    onnx_builder_input(&b, "x", F32, rank, dims, NULL);
    Onnx__NodeProto *node =
        onnx_builder_node(&b, op, "pool", (const char *[]){"x", NULL},
                          (const char *[]){"y", NULL});
    onnx_builder_attr_ints(node, "kernel_shape", kernel, (size_t)spatial);
    if (pads)
        onnx_builder_attr_ints(node, "pads", pads, 2 * (size_t)spatial);
    if (auto_pad)
        onnx_builder_attr_string(node, "auto_pad", auto_pad);
    onnx_builder_output(&b, "y");
    dfg_graph *graph = NULL;
    dfg_status st = onnx_builder_import(&b, &graph);
    onnx_builder_free(&b);
    dfg_graph_destroy(graph);
    return st;
}

static void expect_refused(dfg_status st, const char *needle)
{
    const char *message = dfg_last_error();
    if (st != DFG_ERR_FORMAT || !strstr(message, needle))
        fail_msg("expected a format error with '%s', got %d: %s", needle,
                 (int)st, st == DFG_OK ? "" : message);
}

static void test_pool_pads_reaching_the_kernel(void **state)
{
    (void)state;
    const int64_t k2[2] = {2, 2}, k3[3] = {2, 2, 2};
    expect_refused(import_pool("MaxPool", 4, k2, (const int64_t[]){2, 0, 0, 0},
                               NULL),
                   "pads[0] = 2 is not smaller than the kernel's 2");
    expect_refused(import_pool("MaxPool", 4, k2, (const int64_t[]){0, 0, 0, 3},
                               NULL),
                   "pads[3] = 3");
    expect_refused(import_pool("AveragePool", 4, k2,
                               (const int64_t[]){0, 2, 0, 0}, NULL),
                   "pads[1] = 2");
    expect_refused(import_pool("MaxPool", 5, k3,
                               (const int64_t[]){0, 0, 0, 2, 0, 0}, NULL),
                   "pads[3] = 2");
    /* Below the kernel, or computed by auto_pad: imported. */
    assert_int_equal(import_pool("MaxPool", 4, k2,
                                 (const int64_t[]){1, 1, 1, 1}, NULL),
                     DFG_OK);
    assert_int_equal(import_pool("MaxPool", 5, k3,
                                 (const int64_t[]){1, 1, 1, 1, 1, 1}, NULL),
                     DFG_OK);
    assert_int_equal(import_pool("MaxPool", 4, k2, NULL, "SAME_UPPER"),
                     DFG_OK);
}

/* out = Cast<float>(c) + Cast<float>(K), c a bool input, K a bool
 * initializer whose raw bytes are not all 0 and 1. */
static void test_bool_bytes_are_normalised(void **state)
{
    (void)state;
    const int64_t dims[1] = {4};
    const uint8_t k[4] = {0, 7, 0, 128}, c[4] = {0, 1, 2, 255};
    onnx_builder b;
    onnx_builder_init(&b, 13);
    onnx_builder_input(&b, "c", BOOL, 1, dims, NULL);
    onnx_builder_initializer(&b, "K", BOOL, 1, dims, k, sizeof k);
    Onnx__NodeProto *cast = onnx_builder_node(
        &b, "Cast", "cast_c", (const char *[]){"c", NULL},
        (const char *[]){"cf", NULL});
    onnx_builder_attr_int(cast, "to", F32);
    cast = onnx_builder_node(&b, "Cast", "cast_k", (const char *[]){"K", NULL},
                             (const char *[]){"kf", NULL});
    onnx_builder_attr_int(cast, "to", F32);
    onnx_builder_node(&b, "Add", "sum", (const char *[]){"cf", "kf", NULL},
                      (const char *[]){"y", NULL});
    onnx_builder_output(&b, "y");
    dfg_graph *graph = NULL;
    if (onnx_builder_import(&b, &graph) != DFG_OK)
        fail_msg("import: %s", dfg_last_error());
    onnx_builder_free(&b);
    float y[4] = {0};
    const void *inputs[1] = {c};
    void *outputs[1] = {y};
    run(graph, inputs, outputs);
    const float want[4] = {0.0f, 2.0f, 1.0f, 2.0f};
    assert_memory_equal(y, want, sizeof want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_outputs_that_are_inputs_weights_or_repeated),
        cmocka_unit_test(test_pool_pads_reaching_the_kernel),
        cmocka_unit_test(test_bool_bytes_are_normalised),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
