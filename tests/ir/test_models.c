/* The bundled example models: they build, compile to verified plans with
 * the documented inputs and outputs, have the same weights on every build,
 * and run on the CPU backend: the mlp against a double-precision
 * reference, the cnn's softmax rows sum to one, the transformer's output
 * is finite and depends on its input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "dfg/dfg.h"
#include "program/program.h"

static dfg_program *compile_model(const char *name)
{
    dfg_graph *graph;
    dfg_program *program;
    dfg_status s = dfg_model_build(name, NULL, &graph);
    if (s != DFG_OK)
        fail_msg("building %s: %s", name, dfg_last_error());
    s = dfg_compile(graph, NULL, &program);
    if (s != DFG_OK)
        fail_msg("compiling %s: %s", name, dfg_last_error());
    dfg_graph_destroy(graph);
    assert_int_equal(dfg_program_verify(program), DFG_OK);
    return program;
}

static uint64_t rng_state = 0x243F6A8885A308D3ULL;

static float random_uniform(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (float)(rng_state >> 40) / (float)(1u << 24) * 2.0f - 1.0f;
}

static int64_t numel(const dfg_tensor_info *info)
{
    int64_t n = 1;
    for (int32_t d = 0; d < info->rank; d++)
        n *= info->shape[d];
    return n;
}

/* Runs the program's one input through the CPU backend; the output
 * buffer is the caller's (free). */
static float *run_cpu(const dfg_program *program, const float *input)
{
    const dfg_backend *cpu;
    dfg_session *session;
    dfg_tensor_info info;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    dfg_status s = dfg_session_create(program, cpu, NULL, &session);
    if (s != DFG_OK)
        fail_msg("session: %s", dfg_last_error());
    assert_int_equal(dfg_program_output_info(program, 0, &info), DFG_OK);
    float *output = calloc((size_t)numel(&info), sizeof *output);
    assert_non_null(output);
    const void *inputs[1] = {input};
    void *outputs[1] = {output};
    s = dfg_session_run(session, inputs, outputs);
    if (s != DFG_OK)
        fail_msg("run: %s", dfg_last_error());
    dfg_session_destroy(session);
    return output;
}

static float *random_input(const dfg_program *program, int64_t *count)
{
    dfg_tensor_info info;
    assert_int_equal(dfg_program_num_inputs(program), 1);
    assert_int_equal(dfg_program_input_info(program, 0, &info), DFG_OK);
    *count = numel(&info);
    float *input = malloc((size_t)*count * sizeof *input);
    assert_non_null(input);
    for (int64_t i = 0; i < *count; i++)
        input[i] = random_uniform();
    return input;
}

static void check_io(const dfg_program *program, const char *output_name,
                     int32_t rank, const int64_t *shape)
{
    dfg_tensor_info info;
    assert_int_equal(dfg_program_input_info(program, 0, &info), DFG_OK);
    assert_string_equal(info.name, "x");
    assert_int_equal(dfg_program_num_outputs(program), 1);
    assert_int_equal(dfg_program_output_info(program, 0, &info), DFG_OK);
    assert_string_equal(info.name, output_name);
    assert_int_equal(info.rank, rank);
    for (int32_t d = 0; d < rank; d++)
        assert_int_equal(info.shape[d], shape[d]);
}

static void test_names_and_errors(void **state)
{
    (void)state;
    const char *const *names = dfg_model_names();
    int n = 0;
    for (; names[n]; n++)
        assert_non_null(dfg_model_description(names[n]));
    assert_int_equal(n, 3);
    assert_null(dfg_model_description("resnet"));
    dfg_graph *graph = (dfg_graph *)&n;
    assert_int_equal(dfg_model_build("resnet", NULL, &graph),
                     DFG_ERR_NOT_FOUND);
    assert_null(graph);
    assert_non_null(strstr(dfg_last_error(), "resnet"));
    assert_int_equal(dfg_model_build(NULL, NULL, &graph), DFG_ERR_NOT_FOUND);
    assert_int_equal(dfg_model_build("mlp", NULL, NULL),
                     DFG_ERR_INVALID_ARGUMENT);
}

static void test_shapes_and_determinism(void **state)
{
    (void)state;
    static const struct {
        const char *name, *output;
        int32_t rank;
        int64_t shape[3];
    } expected[] = {
        {"mlp", "probs", 2, {32, 10}},
        {"cnn", "probs", 2, {32, 10}},
        {"transformer", "y", 3, {1, 64, 128}},
    };
    for (size_t m = 0; m < sizeof expected / sizeof expected[0]; m++) {
        dfg_program *a = compile_model(expected[m].name);
        dfg_program *b = compile_model(expected[m].name);
        check_io(a, expected[m].output, expected[m].rank, expected[m].shape);
        /* Same seed, same weights; and not all zeros. */
        int64_t bytes = a->region_bytes[DFG_REGION_WEIGHTS];
        assert_true(bytes > 0);
        assert_int_equal(bytes, b->region_bytes[DFG_REGION_WEIGHTS]);
        uint8_t *wa = malloc((size_t)bytes), *wb = malloc((size_t)bytes);
        assert_non_null(wa);
        assert_non_null(wb);
        dfg_program_gather_weights(a, wa);
        dfg_program_gather_weights(b, wb);
        assert_memory_equal(wa, wb, (size_t)bytes);
        int nonzero = 0;
        for (int64_t i = 0; i < bytes; i++)
            nonzero += wa[i] != 0;
        assert_true(nonzero > bytes / 2);
        free(wa);
        free(wb);
        dfg_program_destroy(a);
        dfg_program_destroy(b);
    }
}

static const float *weight_data(const dfg_program *p, const char *name)
{
    for (int32_t i = 0; i < p->n_tensors; i++)
        if (p->tensors[i].region == DFG_REGION_WEIGHTS &&
            strcmp(p->tensors[i].name, name) == 0)
            return (const float *)p->tensors[i].data;
    fail_msg("weight %s not in the program", name);
    return NULL;
}

/* y = x W^T + b, in double. */
static void linear_reference(const double *x, int64_t rows, int64_t in,
                             const float *w, const float *b, int64_t out,
                             double *y)
{
    for (int64_t r = 0; r < rows; r++)
        for (int64_t o = 0; o < out; o++) {
            double sum = b[o];
            for (int64_t i = 0; i < in; i++)
                sum += x[r * in + i] * (double)w[o * in + i];
            y[r * out + o] = sum;
        }
}

static void test_mlp_matches_reference(void **state)
{
    (void)state;
    dfg_program *p = compile_model("mlp");
    int64_t count;
    float *input = random_input(p, &count);
    float *output = run_cpu(p, input);
    enum { B = 32, F = 64, H1 = 128, H2 = 64, C = 10 };
    static double x[B * F], h1[B * H1], h2[B * H2], logits[B * C];
    for (int64_t i = 0; i < B * F; i++)
        x[i] = input[i];
    linear_reference(x, B, F, weight_data(p, "fc1.weight"),
                     weight_data(p, "fc1.bias"), H1, h1);
    for (int64_t i = 0; i < B * H1; i++)
        h1[i] = h1[i] > 0 ? h1[i] : 0;
    linear_reference(h1, B, H1, weight_data(p, "fc2.weight"),
                     weight_data(p, "fc2.bias"), H2, h2);
    for (int64_t i = 0; i < B * H2; i++)
        h2[i] = h2[i] > 0 ? h2[i] : 0;
    linear_reference(h2, B, H2, weight_data(p, "fc3.weight"),
                     weight_data(p, "fc3.bias"), C, logits);
    double error = 0, norm = 0;
    for (int r = 0; r < B; r++) {
        double max = logits[r * C], sum = 0;
        for (int c = 1; c < C; c++)
            max = fmax(max, logits[r * C + c]);
        for (int c = 0; c < C; c++)
            sum += exp(logits[r * C + c] - max);
        for (int c = 0; c < C; c++) {
            double ref = exp(logits[r * C + c] - max) / sum;
            error += (output[r * C + c] - ref) * (output[r * C + c] - ref);
            norm += ref * ref;
        }
    }
    assert_true(sqrt(error / norm) < 1e-5);
    free(input);
    free(output);
    dfg_program_destroy(p);
}

static void test_cnn_runs(void **state)
{
    (void)state;
    dfg_program *p = compile_model("cnn");
    int64_t count;
    float *input = random_input(p, &count);
    float *output = run_cpu(p, input);
    float first = output[0];
    int varies = 0;
    for (int r = 0; r < 32; r++) {
        double sum = 0;
        for (int c = 0; c < 10; c++) {
            float v = output[r * 10 + c];
            assert_true(v >= 0.0f && v <= 1.0f);
            sum += v;
            varies |= v != first;
        }
        assert_float_equal(sum, 1.0, 1e-5);
    }
    assert_true(varies);
    free(input);
    free(output);
    dfg_program_destroy(p);
}

static void test_transformer_runs(void **state)
{
    (void)state;
    dfg_program *p = compile_model("transformer");
    int64_t count;
    float *input = random_input(p, &count);
    float *output = run_cpu(p, input);
    /* The residual path keeps the input in the output; the block adds
     * something finite and non-zero on top of it. */
    double change = 0;
    for (int64_t i = 0; i < count; i++) {
        assert_true(isfinite(output[i]));
        change += fabs((double)output[i] - input[i]);
    }
    assert_true(change / (double)count > 1e-3);
    free(input);
    free(output);
    dfg_program_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_and_errors),
        cmocka_unit_test(test_shapes_and_determinism),
        cmocka_unit_test(test_mlp_matches_reference),
        cmocka_unit_test(test_cnn_runs),
        cmocka_unit_test(test_transformer_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
