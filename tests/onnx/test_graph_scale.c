/* Huge graphs in linear (or n log n) time (issue 34): a 100k-node chain
 * and a 50k-wide fan are imported from ONNX, compiled and reported, and a
 * model of 100k distinct unsupported op types is refused with every type
 * counted. Nothing here is timed: each stage took minutes while it was
 * quadratic, so the test's timeout (tests/onnx/meson.build) catches a
 * regression; bench/graph_scale measures the growth. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dfg/dfg.h"
#include "program/program.h"
#include "tests/support/onnx_builder.h"

#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define NODES 100000
#define DIMS(...) ((const int64_t[]){__VA_ARGS__})

/* Writes name's value "name<i>" into buf (64 bytes). */
static const char *named(char *buf, const char *name, int i)
{
    snprintf(buf, 64, "%s%d", name, i);
    return buf;
}

/* x [1, 64] -> NODES nodes, alternately Relu(h) and Add(h, bias). */
static void build_chain(onnx_builder *b)
{
    static const float bias[64] = {0.01f};
    onnx_builder_init(b, 17);
    onnx_builder_input(b, "x", F32, 2, DIMS(1, 64), NULL);
    onnx_builder_initializer(b, "bias", F32, 2, DIMS(1, 64), bias,
                             sizeof bias);
    char in[64] = "x", out[64], name[64];
    for (int i = 0; i < NODES; i++) {
        named(out, "h", i);
        const char *outputs[] = {out, NULL};
        const char *relu_in[] = {in, NULL}, *add_in[] = {in, "bias", NULL};
        onnx_builder_node(b, i % 2 ? "Add" : "Relu", named(name, "n", i),
                          i % 2 ? add_in : relu_in, outputs);
        memcpy(in, out, sizeof in);
    }
    onnx_builder_output(b, in);
}

/* x [1, 64] feeds NODES / 2 Relu nodes; a balanced tree of Add nodes sums
 * their outputs (level by level, each sum named "s<k>"). */
static void build_fan(onnx_builder *b)
{
    int width = NODES / 2, sums = 0;
    char (*level)[16] = malloc((size_t)width * sizeof *level);
    assert_non_null(level);
    onnx_builder_init(b, 17);
    onnx_builder_input(b, "x", F32, 2, DIMS(1, 64), NULL);
    for (int i = 0; i < width; i++) {
        snprintf(level[i], sizeof level[i], "b%d", i);
        const char *inputs[] = {"x", NULL}, *outputs[] = {level[i], NULL};
        onnx_builder_node(b, "Relu", level[i], inputs, outputs);
    }
    for (int n = width; n > 1; n = (n + 1) / 2) {
        for (int i = 0; i + 1 < n; i += 2) {
            char sum[16];
            snprintf(sum, sizeof sum, "s%d", sums++);
            const char *inputs[] = {level[i], level[i + 1], NULL};
            const char *outputs[] = {sum, NULL};
            onnx_builder_node(b, "Add", sum, inputs, outputs);
            memcpy(level[i / 2], sum, sizeof sum);
        }
        if (n % 2)
            memcpy(level[n / 2], level[n - 1], sizeof level[0]);
    }
    onnx_builder_output(b, level[0]);
    free(level);
}

/* Imports, compiles (verified) and writes the reports that walk every
 * tensor per step or per tensor when written carelessly. */
static void plan_and_report(onnx_builder *b, int32_t most_live_tensors)
{
    dfg_graph *graph;
    assert_int_equal(onnx_builder_import(b, &graph), DFG_OK);
    onnx_builder_free(b);
    dfg_program *program;
    if (dfg_compile(graph, NULL, &program) != DFG_OK)
        fail_msg("compile: %s", dfg_last_error());
    dfg_graph_destroy(graph);
    assert_true(program->stats.verified);
    assert_true(program->n_steps >= NODES / 2);
    /* The chosen order keeps a few [1, 64] tensors alive at a time. */
    assert_true(program->stats.lower_bound_bytes <=
                (uint64_t)most_live_tensors * 256);
    FILE *out = fopen("/dev/null", "w");
    assert_non_null(out);
    assert_int_equal(dfg_report_summary(program, out), DFG_OK);
    assert_int_equal(dfg_report_json(program, out), DFG_OK);
    assert_int_equal(dfg_report_dot(program, out), DFG_OK);
    fclose(out);
    dfg_program_destroy(program);
}

static void test_chain_plans(void **state)
{
    (void)state;
    onnx_builder b;
    build_chain(&b);
    plan_and_report(&b, 3);
}

/* Planned in the recorded order, the fan would keep all 50k branches
 * alive: the memory-aware scheduler must run on it (it used to stop at
 * 20k nodes, which were O(nodes x ready) to order). */
static void test_fan_plans(void **state)
{
    (void)state;
    onnx_builder b;
    build_fan(&b);
    plan_and_report(&b, 64);
}

static void test_unsupported_types_listed(void **state)
{
    (void)state;
    onnx_builder b;
    onnx_builder_init(&b, 17);
    onnx_builder_input(&b, "x", F32, 2, DIMS(1, 64), NULL);
    char in[64] = "x", out[64], type[64], name[64];
    for (int i = 0; i < NODES; i++) {
        named(out, "h", i);
        const char *inputs[] = {in, NULL}, *outputs[] = {out, NULL};
        onnx_builder_node(&b, named(type, "Unknown", i), named(name, "n", i),
                          inputs, outputs);
        memcpy(in, out, sizeof in);
    }
    onnx_builder_output(&b, in);
    dfg_graph *graph = NULL;
    assert_int_equal(onnx_builder_import(&b, &graph), DFG_ERR_UNSUPPORTED);
    onnx_builder_free(&b);
    assert_null(graph);
    assert_non_null(strstr(dfg_last_error(), "100000 unsupported op types: "
                                             "Unknown0 (node 'n0'), "));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_plans),
        cmocka_unit_test(test_fan_plans),
        cmocka_unit_test(test_unsupported_types_listed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
