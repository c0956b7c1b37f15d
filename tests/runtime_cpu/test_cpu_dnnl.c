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

#include <dnnl.h>

#include "dfg/dfg.h"
#include "runtime/cpu/onednn/dnnl_steps.h"
#include "tests/runtime_cpu/dnnl_check.h"
#include "tests/support/program_fixtures.h"
#include "program/program_format.h"
#include "tests/support/random_data.h"

/* Runs graph, compiled with or without the CPU rule, on inputs; returns
 * the first output (malloc'd) and its element count. */
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

static void check_conv(const conv_case *k)
{
    int32_t group = k->params.group ? k->params.group : 1;
    int64_t n_w = k->m * (k->c / group) * k->kh * k->kw;
    float *weights = random_floats(n_w, 1.0f);
    float *bias = random_floats(k->m, 1.0f);
    float *input = random_floats(k->n * k->c * k->h * k->w, 1.0f);
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
                                       types + 3, 1) >= 0);
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
     * convolution (runtime/cpu/onednn/dnnl_linear.h). */
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
    *row_data = random_floats(n, 1.0f);
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
    float *a = random_floats(count_of(k->a_rank, k->a_shape), 1.0f);
    float *b = random_floats(count_of(k->b_rank, k->b_shape), 1.0f);
    float *c = random_floats(
        k->c_rank >= 0 ? count_of(k->c_rank, k->c_shape) : 1, 1.0f);
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

/* 1 if the output of program's step `op` is planned over its input. */
static int in_place(const dfg_program *program, dfg_op op)
{
    for (int32_t i = 0; i < program->n_steps; i++) {
        const dfg_program_step *s = &program->steps[i];
        if (s->op != op)
            continue;
        const dfg_program_tensor *x = &program->tensors[s->inputs[0]],
                                 *y = &program->tensors[s->outputs[0]];
        return x->region == y->region && x->offset == y->offset;
    }
    return 0;
}

/* softmax along the last axis on oneDNN (runtime/cpu/onednn/dnnl_softmax.c),
 * against a double reference, on rows wide enough to overflow exp unless
 * the maximum is subtracted, also in place (over x's negation, which dies
 * there: softmax(-x)); along another axis, or compiled for the reference
 * kernels (rule 0: no backend workspace rule, --no-onednn), the reference
 * kernel. */
static void check_softmax_of(int32_t axis, int rule, int onednn, int negated)
{
    const int64_t shape[3] = {3, 5, 37};
    int64_t n = 3 * 5 * 37;
    float *x = random_floats(n, 1.0f), *y = malloc((size_t)n * sizeof *y);
    assert_non_null(y);
    for (int64_t i = 0; i < n; i++)
        x[i] *= 100.0f;
    dfg_graph *g = NULL;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    dfg_value in, out;
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 3, shape, &in), DFG_OK);
    if (negated)
        assert_int_equal(dfg_neg(g, in, &in), DFG_OK);
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
    assert_int_equal(in_place(program, DFG_OP_SOFTMAX), negated);
    dfg_session *session = NULL;
    assert_int_equal(dfg_session_create(program, cpu(), NULL, &session), DFG_OK);
    const void *inputs[1] = {x};
    void *outputs[1] = {y};
    assert_int_equal(dfg_session_run(session, inputs, outputs), DFG_OK);
    for (int64_t i = 0; negated && i < n; i++)
        x[i] = -x[i];
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

static void check_softmax(int32_t axis, int rule, int onednn)
{
    check_softmax_of(axis, rule, onednn, 0);
    check_softmax_of(axis, rule, onednn, 1);
}

/* A product whose declared shape has 2^32 rows compiles (oneDNN 2.6
 * divided by zero planning it: issue 34): it is left to the reference
 * kernels, and nothing is allocated for it until a session is made. */
static void test_product_too_large_for_onednn(void **state)
{
    (void)state;
    dfg_graph *g = NULL;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    int64_t x_shape[2] = {(int64_t)1 << 32, 8}, w_shape[2] = {8, 4};
    float w[32] = {0};
    dfg_value x, wt, y;
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 2, x_shape, &x), DFG_OK);
    assert_int_equal(dfg_graph_weight(g, "w", DFG_F32, 2, w_shape, w, &wt),
                     DFG_OK);
    assert_int_equal(dfg_matmul(g, x, wt, &y), DFG_OK);
    assert_int_equal(dfg_graph_output(g, y, "y"), DFG_OK);
    /* 192 GiB of arena: past the default max_arena_bytes, lifted here. */
    dfg_compile_options options;
    dfg_compile_options_init(&options);
    options.max_arena_bytes = 0;
    dfg_program *program = NULL;
    assert_int_equal(dfg_compile(g, &options, &program), DFG_OK);
    dfg_program_destroy(program);
    dfg_graph_destroy(g);
}

/* A product of 0 rows compiles and runs (oneDNN 2.6 divided by zero
 * planning it: the ONNX fuzzer's MatMul of an empty operand): it is left
 * to the reference kernels. */
static void test_empty_product(void **state)
{
    (void)state;
    dfg_graph *g = NULL;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    int64_t x_shape[2] = {0, 3}, w_shape[2] = {3, 2};
    float w[6] = {1, 2, 3, 4, 5, 6};
    dfg_value x, wt, y;
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 2, x_shape, &x), DFG_OK);
    assert_int_equal(dfg_graph_weight(g, "w", DFG_F32, 2, w_shape, w, &wt),
                     DFG_OK);
    assert_int_equal(dfg_matmul(g, x, wt, &y), DFG_OK);
    assert_int_equal(dfg_graph_output(g, y, "y"), DFG_OK);
    dfg_program *program = NULL;
    assert_int_equal(dfg_compile(g, NULL, &program), DFG_OK);
    const dfg_backend *cpu = NULL;
    dfg_session *session = NULL;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    assert_int_equal(dfg_session_create(program, cpu, NULL, &session), DFG_OK);
    float none[1] = {0}, out[1] = {0};
    assert_int_equal(dfg_session_run(session, (const void *[]){none},
                                     (void *[]){out}), DFG_OK);
    dfg_session_destroy(session);
    dfg_program_destroy(program);
    dfg_graph_destroy(g);
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
        cmocka_unit_test(test_matmul_variants),
        cmocka_unit_test(test_softmax),
        cmocka_unit_test(test_product_too_large_for_onednn),
        cmocka_unit_test(test_empty_product),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
