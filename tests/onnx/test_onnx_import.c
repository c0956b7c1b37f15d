/* The ONNX importer: small models built here with protobuf-c, checked
 * numerically against a double-precision reference; and malformed models
 * (truncations, byte flips, cycles, missing inputs, huge and overflowing
 * dims, unresolved symbolic dims, unsupported ops, wrong attribute types,
 * external data leaving the model's directory), each of which must end
 * with an error, never a crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "dfg/dfg.h"
#include "tests/support/onnx_builder.h"

#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define I64 ONNX__TENSOR_PROTO__DATA_TYPE__INT64

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double next_uniform(void) /* [-1, 1) */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / (double)(1ull << 52) - 1.0;
}

static dfg_status import_builder(const onnx_builder *b,
                                 const dfg_onnx_options *options,
                                 dfg_graph **graph)
{
    size_t size;
    uint8_t *bytes = onnx_builder_pack(b, &size);
    dfg_status st = dfg_onnx_import_memory(bytes, size, options, NULL, graph);
    free(bytes);
    return st;
}

/* Compiles graph and runs it once on one input and one output. */
static void run_graph(dfg_graph *graph, const void *input, void *output)
{
    dfg_program *program;
    dfg_session *session;
    const dfg_backend *cpu;
    assert_int_equal(dfg_compile(graph, NULL, &program), DFG_OK);
    assert_int_equal(dfg_program_verify(program), DFG_OK);
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    assert_int_equal(dfg_session_create(program, cpu, NULL, &session), DFG_OK);
    const void *inputs[1] = {input};
    void *outputs[1] = {output};
    assert_int_equal(dfg_session_run(session, inputs, outputs), DFG_OK);
    dfg_session_destroy(session);
    dfg_program_destroy(program);
}

/* y = relu(x @ W + b) with x [2,3], W [3,4], b [4] as initializers. */
static void build_gemm_relu(onnx_builder *b, float *w, float *bias)
{
    const int64_t x_dims[2] = {2, 3}, w_dims[2] = {3, 4}, b_dims[1] = {4};
    onnx_builder_init(b, 13);
    onnx_builder_input(b, "x", F32, 2, x_dims, NULL);
    onnx_builder_initializer(b, "W", F32, 2, w_dims, w, 12 * sizeof *w);
    onnx_builder_initializer(b, "B", F32, 1, b_dims, bias, 4 * sizeof *bias);
    onnx_builder_node(b, "Gemm", "gemm", (const char *[]){"x", "W", "B", NULL},
                      (const char *[]){"h", NULL});
    onnx_builder_node(b, "Relu", "relu", (const char *[]){"h", NULL},
                      (const char *[]){"y", NULL});
    onnx_builder_output(b, "y");
}

/* y [2,4] against relu(x W + bias) in double. */
static void check_gemm_relu(const float *x, const float *w, const float *bias,
                            const float *y)
{
    double err = 0, norm = 0;
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 4; c++) {
            double ref = bias[c];
            for (int k = 0; k < 3; k++)
                ref += (double)x[r * 3 + k] * w[k * 4 + c];
            ref = ref > 0 ? ref : 0;
            err += (y[r * 4 + c] - ref) * (y[r * 4 + c] - ref);
            norm += ref * ref;
        }
    assert_true(norm > 0);
    assert_true(err <= 1e-12 * norm);
}

static void test_gemm_relu_matches_reference(void **state)
{
    (void)state;
    float w[12], bias[4], x[6], y[8];
    for (int i = 0; i < 12; i++)
        w[i] = (float)next_uniform();
    for (int i = 0; i < 4; i++)
        bias[i] = (float)next_uniform();
    for (int i = 0; i < 6; i++)
        x[i] = (float)next_uniform();
    onnx_builder b;
    build_gemm_relu(&b, w, bias);
    dfg_graph *graph;
    assert_int_equal(import_builder(&b, NULL, &graph), DFG_OK);
    onnx_builder_free(&b);
    run_graph(graph, x, y);
    check_gemm_relu(x, w, bias, y);
    dfg_graph_destroy(graph);
}

/* The same model from a file, where the importer maps the file and reads
 * the initializers' raw_data there, with B stored as float_data instead
 * (not raw): the same result as from memory. */
static void test_file_import_matches_memory(void **state)
{
    (void)state;
    float w[12], bias[4], x[6], y_memory[8], y_file[8];
    for (int i = 0; i < 12; i++)
        w[i] = (float)next_uniform();
    for (int i = 0; i < 4; i++)
        bias[i] = (float)next_uniform();
    for (int i = 0; i < 6; i++)
        x[i] = (float)next_uniform();
    onnx_builder b;
    build_gemm_relu(&b, w, bias);
    Onnx__TensorProto *b_init = b.graph.initializer[1];
    b_init->has_raw_data = 0;
    b_init->float_data = bias;
    b_init->n_float_data = 4;
    size_t size;
    uint8_t *bytes = onnx_builder_pack(&b, &size);
    onnx_builder_free(&b);
    char path[] = "/tmp/dfg-onnx-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, bytes, size), (ssize_t)size);
    close(fd);
    dfg_graph *from_memory, *from_file;
    assert_int_equal(dfg_onnx_import_memory(bytes, size, NULL, NULL,
                                            &from_memory), DFG_OK);
    assert_int_equal(dfg_onnx_import_file(path, NULL, NULL, &from_file),
                     DFG_OK);
    unlink(path);
    free(bytes);
    run_graph(from_memory, x, y_memory);
    run_graph(from_file, x, y_file);
    check_gemm_relu(x, w, bias, y_file);
    assert_memory_equal(y_memory, y_file, sizeof y_file);
    dfg_graph_destroy(from_memory);
    dfg_graph_destroy(from_file);
}

/* Reshape's shape computed by Shape -> Gather -> Unsqueeze -> Concat, as
 * exporters write flatten: the subgraph folds away, leaving one node. */
static void test_shape_subgraph_folds(void **state)
{
    (void)state;
    const int64_t x_dims[3] = {2, 3, 4}, scalar = 0, minus_one[1] = {-1};
    const int64_t one[1] = {1}, axes[1] = {0};
    onnx_builder b;
    onnx_builder_init(&b, 13);
    onnx_builder_input(&b, "x", F32, 3, x_dims, NULL);
    onnx_builder_initializer(&b, "zero", I64, 0, NULL, &scalar, 8);
    onnx_builder_initializer(&b, "rest", I64, 1, one, minus_one, 8);
    onnx_builder_initializer(&b, "axes", I64, 1, one, axes, 8);
    onnx_builder_node(&b, "Shape", "shape", (const char *[]){"x", NULL},
                      (const char *[]){"s", NULL});
    Onnx__NodeProto *g = onnx_builder_node(
        &b, "Gather", "gather", (const char *[]){"s", "zero", NULL},
        (const char *[]){"n", NULL});
    onnx_builder_attr_int(g, "axis", 0);
    onnx_builder_node(&b, "Unsqueeze", "unsq", (const char *[]){"n", "axes", NULL},
                      (const char *[]){"n1", NULL});
    Onnx__NodeProto *c = onnx_builder_node(
        &b, "Concat", "concat", (const char *[]){"n1", "rest", NULL},
        (const char *[]){"shape", NULL});
    onnx_builder_attr_int(c, "axis", 0);
    onnx_builder_node(&b, "Reshape", "reshape",
                      (const char *[]){"x", "shape", NULL},
                      (const char *[]){"y", NULL});
    onnx_builder_output(&b, "y");
    dfg_graph *graph;
    assert_int_equal(import_builder(&b, NULL, &graph), DFG_OK);
    onnx_builder_free(&b);
    assert_int_equal(dfg_graph_num_nodes(graph), 1);
    float x[24], y[24];
    for (int i = 0; i < 24; i++)
        x[i] = (float)next_uniform();
    run_graph(graph, x, y);
    assert_memory_equal(x, y, sizeof x);
    dfg_graph_destroy(graph);
}

/* A Concat of more inputs than one graph node takes (64): 130 copies of
 * x along axis 1, each x = relu(x') of its own node, in order. */
static void test_concat_of_many(void **state)
{
    (void)state;
    enum { COPIES = 130 };
    const int64_t x_dims[2] = {2, 3};
    onnx_builder b;
    onnx_builder_init(&b, 13);
    onnx_builder_input(&b, "x", F32, 2, x_dims, NULL);
    static char names[COPIES][16];
    const char *parts[COPIES + 1];
    for (int k = 0; k < COPIES; k++) {
        snprintf(names[k], sizeof names[k], "r%d", k);
        onnx_builder_node(&b, k % 2 ? "Relu" : "Neg", names[k],
                          (const char *[]){"x", NULL},
                          (const char *[]){names[k], NULL});
        parts[k] = names[k];
    }
    parts[COPIES] = NULL;
    Onnx__NodeProto *c = onnx_builder_node(&b, "Concat", "concat", parts,
                                           (const char *[]){"y", NULL});
    onnx_builder_attr_int(c, "axis", 1);
    onnx_builder_output(&b, "y");
    dfg_graph *graph;
    assert_int_equal(import_builder(&b, NULL, &graph), DFG_OK);
    onnx_builder_free(&b);
    float x[6], y[2 * 3 * COPIES];
    for (int i = 0; i < 6; i++)
        x[i] = (float)next_uniform() - 0.5f;
    run_graph(graph, x, y);
    for (int r = 0; r < 2; r++)
        for (int k = 0; k < COPIES; k++)
            for (int j = 0; j < 3; j++) {
                float v = x[r * 3 + j];
                float want = k % 2 ? (v > 0.0f ? v : 0.0f) : -v;
                assert_true(y[(r * COPIES + k) * 3 + j] == want);
            }
    dfg_graph_destroy(graph);
}

static void build_symbolic(onnx_builder *b)
{
    const int64_t dims[2] = {0, 4};
    const char *const params[2] = {"batch", NULL};
    onnx_builder_init(b, 13);
    onnx_builder_input(b, "x", F32, 2, dims, params);
    onnx_builder_node(b, "Relu", "relu", (const char *[]){"x", NULL},
                      (const char *[]){"y", NULL});
    onnx_builder_output(b, "y");
}

static void test_symbolic_dims(void **state)
{
    (void)state;
    onnx_builder b;
    build_symbolic(&b);
    dfg_graph *graph = NULL;
    assert_int_equal(import_builder(&b, NULL, &graph), DFG_ERR_SHAPE);
    assert_non_null(strstr(dfg_last_error(), "'batch'"));
    assert_non_null(strstr(dfg_last_error(), "input 'x'"));

    char name[64];
    dfg_onnx_binding binding;
    dfg_onnx_options options;
    dfg_onnx_options_init(&options);
    options.bindings = &binding;
    options.n_bindings = 1;
    dfg_tensor_info info;
    assert_int_equal(dfg_onnx_parse_binding("batch=8", name, sizeof name,
                                            &binding), DFG_OK);
    assert_int_equal(import_builder(&b, &options, &graph), DFG_OK);
    assert_int_equal(dfg_graph_num_values(graph), 2);
    dfg_graph_destroy(graph);

    assert_int_equal(dfg_onnx_parse_binding("x:5x4", name, sizeof name,
                                            &binding), DFG_OK);
    assert_int_equal(binding.rank, 2);
    assert_int_equal(import_builder(&b, &options, &graph), DFG_OK);
    dfg_program *program;
    assert_int_equal(dfg_compile(graph, NULL, &program), DFG_OK);
    assert_int_equal(dfg_program_input_info(program, 0, &info), DFG_OK);
    assert_int_equal(info.shape[0], 5);
    dfg_program_destroy(program);
    dfg_graph_destroy(graph);

    /* A binding that contradicts a fixed dim is an error. */
    assert_int_equal(dfg_onnx_parse_binding("x:5x3", name, sizeof name,
                                            &binding), DFG_OK);
    assert_int_equal(import_builder(&b, &options, &graph), DFG_ERR_SHAPE);
    onnx_builder_free(&b);

    assert_int_not_equal(dfg_onnx_parse_binding("x:5x-3", name, sizeof name,
                                                &binding), DFG_OK);
    assert_int_not_equal(dfg_onnx_parse_binding("novalue", name, sizeof name,
                                                &binding), DFG_OK);
    assert_int_not_equal(dfg_onnx_parse_binding("b=1x2", name, sizeof name,
                                                &binding), DFG_OK);
}

/* Reshape(x, shape) with shape a graph input: refused until the input is
 * made a constant, from raw values (the declared type) or a typed value;
 * the program then has x as its only input. */
static void test_constant_input(void **state)
{
    (void)state;
    const int64_t x_dims[2] = {2, 6}, shape_dims[1] = {3};
    const int64_t shape[3] = {3, 2, 2};
    onnx_builder b;
    onnx_builder_init(&b, 13);
    onnx_builder_input(&b, "x", F32, 2, x_dims, NULL);
    onnx_builder_input(&b, "shape", I64, 1, shape_dims, NULL);
    onnx_builder_node(&b, "Reshape", "reshape",
                      (const char *[]){"x", "shape", NULL},
                      (const char *[]){"y", NULL});
    onnx_builder_output(&b, "y");
    dfg_graph *graph = NULL;
    assert_int_equal(import_builder(&b, NULL, &graph), DFG_ERR_UNSUPPORTED);
    assert_non_null(strstr(dfg_last_error(), "--const shape=FILE"));

    char path[] = "/tmp/dfg-test-constXXXXXX", spec[64], name[32];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, shape, sizeof shape), (ssize_t)sizeof shape);
    close(fd);
    snprintf(spec, sizeof spec, "shape=%s", path);
    dfg_onnx_frozen_input constant;
    assert_int_equal(dfg_onnx_read_constant(spec, name, sizeof name,
                                            &constant), DFG_OK);
    assert_int_equal(constant.rank, -1);
    assert_int_equal(constant.bytes, sizeof shape);
    dfg_onnx_options options;
    dfg_onnx_options_init(&options);
    options.frozen_inputs = &constant;
    options.n_frozen_inputs = 1;
    assert_int_equal(import_builder(&b, &options, &graph), DFG_OK);
    dfg_program *program;
    dfg_tensor_info info;
    assert_int_equal(dfg_compile(graph, NULL, &program), DFG_OK);
    assert_int_equal(dfg_program_num_inputs(program), 1);
    assert_int_equal(dfg_program_output_info(program, 0, &info), DFG_OK);
    assert_int_equal(info.rank, 3);
    assert_int_equal(info.shape[0], 3);
    dfg_program_destroy(program);
    dfg_graph_destroy(graph);

    /* Raw values of the wrong size, and a typed value of the wrong dtype,
     * are errors naming the input. */
    constant.bytes = 16;
    assert_int_equal(import_builder(&b, &options, &graph), DFG_ERR_SHAPE);
    assert_non_null(strstr(dfg_last_error(), "'shape'"));
    const float wrong[3] = {3, 2, 2};
    dfg_onnx_frozen_input typed = {"shape", DFG_F32, 1, {3}, wrong, 0};
    options.frozen_inputs = &typed;
    assert_int_equal(import_builder(&b, &options, &graph), DFG_ERR_DTYPE);
    dfg_onnx_constant_free(&constant);
    onnx_builder_free(&b);
    unlink(path);

    assert_int_not_equal(dfg_onnx_read_constant("noequals", name, sizeof name,
                                                &constant), DFG_OK);
    assert_int_not_equal(dfg_onnx_read_constant("x=/nonexistent/file.pb", name,
                                                sizeof name, &constant),
                         DFG_OK);
    assert_null(constant.data);
}

static void test_unsupported_ops_listed_once(void **state)
{
    (void)state;
    const int64_t dims[1] = {4};
    onnx_builder b;
    onnx_builder_init(&b, 13);
    onnx_builder_input(&b, "x", F32, 1, dims, NULL);
    onnx_builder_node(&b, "FooOp", "first_foo", (const char *[]){"x", NULL},
                      (const char *[]){"a", NULL});
    onnx_builder_node(&b, "Relu", "relu", (const char *[]){"a", NULL},
                      (const char *[]){"b", NULL});
    onnx_builder_node(&b, "BarOp", "the_bar", (const char *[]){"b", NULL},
                      (const char *[]){"c", NULL});
    onnx_builder_node(&b, "FooOp", "second_foo", (const char *[]){"c", NULL},
                      (const char *[]){"y", NULL});
    onnx_builder_output(&b, "y");
    dfg_graph *graph = NULL;
    assert_int_equal(import_builder(&b, NULL, &graph), DFG_ERR_UNSUPPORTED);
    const char *msg = dfg_last_error();
    assert_non_null(strstr(msg, "2 unsupported op types"));
    assert_non_null(strstr(msg, "FooOp (node 'first_foo')"));
    assert_non_null(strstr(msg, "BarOp (node 'the_bar')"));
    assert_null(strstr(msg, "second_foo"));
    assert_null(graph);
    onnx_builder_free(&b);
}

static void test_cycle_and_missing_input(void **state)
{
    (void)state;
    const int64_t dims[1] = {4};
    onnx_builder b;
    onnx_builder_init(&b, 13);
    onnx_builder_input(&b, "x", F32, 1, dims, NULL);
    onnx_builder_node(&b, "Add", "a", (const char *[]){"x", "q", NULL},
                      (const char *[]){"p", NULL});
    onnx_builder_node(&b, "Relu", "b", (const char *[]){"p", NULL},
                      (const char *[]){"q", NULL});
    onnx_builder_output(&b, "q");
    dfg_graph *graph = NULL;
    assert_int_equal(import_builder(&b, NULL, &graph), DFG_ERR_FORMAT);
    assert_non_null(strstr(dfg_last_error(), "'q'"));
    onnx_builder_free(&b);

    onnx_builder_init(&b, 13);
    onnx_builder_input(&b, "x", F32, 1, dims, NULL);
    onnx_builder_node(&b, "Add", "a", (const char *[]){"x", "ghost", NULL},
                      (const char *[]){"y", NULL});
    onnx_builder_output(&b, "y");
    assert_int_equal(import_builder(&b, NULL, &graph), DFG_ERR_FORMAT);
    assert_non_null(strstr(dfg_last_error(), "'ghost'"));
    onnx_builder_free(&b);

    onnx_builder_init(&b, 13);
    onnx_builder_input(&b, "x", F32, 1, dims, NULL);
    onnx_builder_node(&b, "Relu", "a", (const char *[]){"x", NULL},
                      (const char *[]){"y", NULL});
    onnx_builder_output(&b, "not_computed");
    assert_int_equal(import_builder(&b, NULL, &graph), DFG_ERR_FORMAT);
    onnx_builder_free(&b);
}

static void test_huge_and_overflowing_dims(void **state)
{
    (void)state;
    const int64_t huge[2] = {(int64_t)1 << 40, (int64_t)1 << 40};
    const int64_t over[3] = {(int64_t)1 << 31, (int64_t)1 << 31,
                             (int64_t)1 << 31};
    const int64_t negative[1] = {-5};
    const int64_t small[1] = {4};
    dfg_graph *graph = NULL;
    onnx_builder b;

    onnx_builder_init(&b, 13);
    onnx_builder_input(&b, "x", F32, 2, huge, NULL);
    onnx_builder_node(&b, "Relu", "r", (const char *[]){"x", NULL},
                      (const char *[]){"y", NULL});
    onnx_builder_output(&b, "y");
    assert_int_equal(import_builder(&b, NULL, &graph), DFG_ERR_OVERFLOW);
    onnx_builder_free(&b);

    onnx_builder_init(&b, 13);
    onnx_builder_input(&b, "x", F32, 1, small, NULL);
    onnx_builder_initializer(&b, "w", F32, 3, over, NULL, 0);
    onnx_builder_node(&b, "Add", "r", (const char *[]){"x", "w", NULL},
                      (const char *[]){"y", NULL});
    onnx_builder_output(&b, "y");
    assert_int_equal(import_builder(&b, NULL, &graph), DFG_ERR_OVERFLOW);
    onnx_builder_free(&b);

    onnx_builder_init(&b, 13);
    onnx_builder_input(&b, "x", F32, 1, negative, NULL);
    onnx_builder_node(&b, "Relu", "r", (const char *[]){"x", NULL},
                      (const char *[]){"y", NULL});
    onnx_builder_output(&b, "y");
    assert_int_equal(import_builder(&b, NULL, &graph), DFG_ERR_FORMAT);
    onnx_builder_free(&b);

    /* raw_data shorter than the dims say. */
    const float four[4] = {1, 2, 3, 4};
    onnx_builder_init(&b, 13);
    onnx_builder_input(&b, "x", F32, 1, small, NULL);
    onnx_builder_initializer(&b, "w", F32, 1, small, four, 3 * sizeof(float));
    onnx_builder_node(&b, "Add", "r", (const char *[]){"x", "w", NULL},
                      (const char *[]){"y", NULL});
    onnx_builder_output(&b, "y");
    assert_int_equal(import_builder(&b, NULL, &graph), DFG_ERR_FORMAT);
    onnx_builder_free(&b);
}

/* Records the largest request it saw (an allocator for the graph). */
static void *largest_request_alloc(void *ctx, size_t size, size_t alignment)
{
    size_t *largest = ctx;
    if (size > *largest)
        *largest = size;
    void *p = NULL;
    return posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *)
                                                         : alignment,
                          size) == 0 ? p : NULL;
}

static void largest_request_free(void *ctx, void *ptr)
{
    (void)ctx;
    free(ptr);
}

/* An initializer whose dims claim gigabytes but whose file holds a few
 * bytes is refused before a buffer of the claimed size is allocated (the
 * fuzzer found a 12 GB request from a 200-byte model). */
static void test_claimed_size_needs_data(void **state)
{
    (void)state;
    const int64_t small[1] = {4};
    const int64_t claimed[2] = {(int64_t)1 << 16, (int64_t)3 << 14};
    const float three[3] = {1, 2, 3};
    size_t largest = 0;
    dfg_allocator counting = {&largest, largest_request_alloc,
                              largest_request_free};
    for (int typed = 0; typed < 2; typed++) {
        onnx_builder b;
        onnx_builder_init(&b, 13);
        onnx_builder_input(&b, "x", F32, 1, small, NULL);
        Onnx__TensorProto *w = onnx_builder_initializer(
            &b, "w", F32, 2, claimed, typed ? NULL : three, sizeof three);
        if (typed) { /* the same three floats in float_data instead */
            w->n_float_data = 3;
            w->float_data = (float *)three;
        }
        onnx_builder_node(&b, "Add", "r", (const char *[]){"x", "w", NULL},
                          (const char *[]){"y", NULL});
        onnx_builder_output(&b, "y");
        size_t size;
        uint8_t *bytes = onnx_builder_pack(&b, &size);
        dfg_graph *graph = NULL;
        assert_int_equal(dfg_onnx_import_memory(bytes, size, NULL, &counting,
                                                &graph),
                         DFG_ERR_FORMAT);
        assert_null(graph);
        free(bytes);
        onnx_builder_free(&b);
    }
    assert_true(largest < ((size_t)1 << 24));
}

static void test_wrong_attribute_type(void **state)
{
    (void)state;
    const int64_t dims[2] = {2, 3};
    onnx_builder b;
    onnx_builder_init(&b, 13);
    onnx_builder_input(&b, "x", F32, 2, dims, NULL);
    Onnx__NodeProto *t = onnx_builder_node(
        &b, "Transpose", "t", (const char *[]){"x", NULL},
        (const char *[]){"y", NULL});
    onnx_builder_attr_float(t, "perm", 1.0f);
    onnx_builder_output(&b, "y");
    dfg_graph *graph = NULL;
    assert_int_equal(import_builder(&b, NULL, &graph), DFG_ERR_FORMAT);
    assert_non_null(strstr(dfg_last_error(), "'perm'"));
    onnx_builder_free(&b);
}

/* Imports bytes; on success the graph is compiled too, so that whatever
 * the importer accepted is also safe downstream. */
static void import_any(const uint8_t *bytes, size_t size, int *errors)
{
    dfg_graph *graph = NULL;
    if (dfg_onnx_import_memory(bytes, size, NULL, NULL, &graph) != DFG_OK) {
        (*errors)++;
        return;
    }
    dfg_program *program = NULL;
    if (dfg_compile(graph, NULL, &program) == DFG_OK)
        dfg_program_destroy(program);
    dfg_graph_destroy(graph);
}

static void test_truncated_at_every_length(void **state)
{
    (void)state;
    float w[12] = {0}, bias[4] = {0};
    onnx_builder b;
    build_gemm_relu(&b, w, bias);
    size_t size;
    uint8_t *bytes = onnx_builder_pack(&b, &size);
    onnx_builder_free(&b);
    int errors = 0;
    for (size_t n = 0; n < size; n++) {
        uint8_t *copy = malloc(n ? n : 1);
        memcpy(copy, bytes, n);
        import_any(copy, n, &errors);
        free(copy);
    }
    /* Most prefixes cut a field or lose the graph; a few end on a field
     * boundary and are a smaller valid model. */
    assert_true(errors > (int)size / 2);
    free(bytes);
}

static void test_random_byte_flips(void **state)
{
    (void)state;
    float w[12], bias[4];
    for (int i = 0; i < 12; i++)
        w[i] = (float)next_uniform();
    for (int i = 0; i < 4; i++)
        bias[i] = (float)next_uniform();
    onnx_builder b;
    build_gemm_relu(&b, w, bias);
    size_t size;
    uint8_t *bytes = onnx_builder_pack(&b, &size);
    onnx_builder_free(&b);
    uint8_t *copy = malloc(size);
    int errors = 0;
    for (int trial = 0; trial < 4000; trial++) {
        memcpy(copy, bytes, size);
        int flips = 1 + (int)((next_uniform() + 1) * 2);
        for (int f = 0; f < flips; f++) {
            size_t at = (size_t)((next_uniform() + 1) / 2 * (double)size);
            copy[at % size] ^= (uint8_t)(1 + (rng_state & 0xFE));
        }
        import_any(copy, size, &errors);
    }
    assert_true(errors > 0);
    free(copy);
    free(bytes);
}

static void test_external_data(void **state)
{
    (void)state;
    char dir[] = "/tmp/dfg_onnx_external_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/weights.bin", dir);
    float w[4];
    for (int i = 0; i < 4; i++)
        w[i] = (float)next_uniform();
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite("pad!", 1, 4, f), 4);
    assert_int_equal(fwrite(w, sizeof w, 1, f), 1);
    fclose(f);

    const char *locations[3] = {"weights.bin", "../weights.bin", "/etc/passwd"};
    for (int k = 0; k < 3; k++) {
        const int64_t dims[1] = {4};
        onnx_builder b;
        onnx_builder_init(&b, 13);
        onnx_builder_input(&b, "x", F32, 1, dims, NULL);
        Onnx__TensorProto *t =
            onnx_builder_initializer(&b, "w", F32, 1, dims, NULL, 0);
        Onnx__StringStringEntryProto kv[2], *kvs[2] = {&kv[0], &kv[1]};
        onnx__string_string_entry_proto__init(&kv[0]);
        onnx__string_string_entry_proto__init(&kv[1]);
        kv[0].key = "location";
        kv[0].value = (char *)locations[k];
        kv[1].key = "offset";
        kv[1].value = "4";
        t->n_external_data = 2;
        t->external_data = kvs;
        t->has_data_location = 1;
        t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
        onnx_builder_node(&b, "Add", "add", (const char *[]){"x", "w", NULL},
                          (const char *[]){"y", NULL});
        onnx_builder_output(&b, "y");
        dfg_onnx_options options;
        dfg_onnx_options_init(&options);
        options.external_data_dir = dir;
        dfg_graph *graph = NULL;
        dfg_status st = import_builder(&b, &options, &graph);
        onnx_builder_free(&b);
        if (k > 0) {
            assert_int_not_equal(st, DFG_OK);
            continue;
        }
        assert_int_equal(st, DFG_OK);
        float x[4] = {1, 2, 3, 4}, y[4];
        run_graph(graph, x, y);
        for (int i = 0; i < 4; i++)
            assert_true(y[i] == x[i] + w[i]);
        dfg_graph_destroy(graph);
    }
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_relu_matches_reference),
        cmocka_unit_test(test_file_import_matches_memory),
        cmocka_unit_test(test_shape_subgraph_folds),
        cmocka_unit_test(test_concat_of_many),
        cmocka_unit_test(test_symbolic_dims),
        cmocka_unit_test(test_constant_input),
        cmocka_unit_test(test_unsupported_ops_listed_once),
        cmocka_unit_test(test_cycle_and_missing_input),
        cmocka_unit_test(test_huge_and_overflowing_dims),
        cmocka_unit_test(test_claimed_size_needs_data),
        cmocka_unit_test(test_wrong_attribute_type),
        cmocka_unit_test(test_truncated_at_every_length),
        cmocka_unit_test(test_random_byte_flips),
        cmocka_unit_test(test_external_data),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
