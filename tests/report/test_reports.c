/* The plan reports: JSON (parsed back and checked against the program and
 * the schema in docs/plan-json.md), DOT (well formed) and the summary (the
 * numbers are there), on every bundled model and on hostile names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "dfg/dfg.h"
#include "program/program.h"
#include "tests/report/report_check.h"
#include "util/number_format.h"

/* A string or null naming a tensor of the program (NULL for null). */
static const char *tensor_ref(const json_node *node, const dfg_program *p)
{
    if (node->type == JSON_NULL)
        return NULL;
    assert_int_equal(node->type, JSON_STRING);
    for (int32_t i = 0; i < p->n_tensors; i++)
        if (strcmp(p->tensors[i].name, node->text) == 0)
            return node->text;
    fail_msg("JSON names an unknown tensor '%s'", node->text);
    return NULL;
}

static void check_ratio(const json_node *ratios, const char *key,
                        uint64_t numerator, uint64_t denominator)
{
    const json_node *node = json_get(ratios, key);
    assert_non_null(node);
    if (denominator == 0) {
        assert_int_equal(node->type, JSON_NULL);
        return;
    }
    assert_int_equal(node->type, JSON_NUMBER);
    assert_float_equal(node->number, (double)numerator / (double)denominator,
                       1e-4);
}

static void check_stats(const json_node *root, const dfg_program *p)
{
    const dfg_plan_stats *s = &p->stats;
    assert_int_equal(required_integer(root, "arena_bytes"), s->arena_bytes);
    assert_int_equal(required_integer(root, "lower_bound_bytes"),
                     s->lower_bound_bytes);
    assert_true(required_integer(root, "scratch_free_lower_bound_bytes") <=
                (int64_t)s->lower_bound_bytes);
    assert_int_equal(required_integer(root, "no_reuse_bytes"),
                     s->no_reuse_bytes);
    assert_int_equal(required_integer(root, "weights_bytes"), s->weights_bytes);
    assert_int_equal(required_integer(root, "alignment"), s->alignment);
    assert_string_equal(required_string(root, "planner"),
                        dfg_planner_name(s->planner));
    assert_int_equal(required_member(root, "verified", JSON_BOOL)->boolean,
                     s->verified);
    const json_node *ratios = required_member(root, "ratios", JSON_OBJECT);
    check_ratio(ratios, "arena_over_lower_bound", s->arena_bytes,
                s->lower_bound_bytes);
    check_ratio(ratios, "arena_over_no_reuse", s->arena_bytes,
                s->no_reuse_bytes);
    const json_node *regions = required_member(root, "regions", JSON_OBJECT);
    assert_int_equal(required_integer(regions, "arena"),
                     p->region_bytes[DFG_REGION_ARENA]);
    assert_int_equal(required_integer(regions, "weights"),
                     p->region_bytes[DFG_REGION_WEIGHTS]);
}

static void check_names(const json_node *array, const dfg_program *p,
                        const int32_t *indices, int32_t count)
{
    assert_int_equal(array->type, JSON_ARRAY);
    assert_int_equal(array->n_children, count);
    for (int32_t i = 0; i < count; i++) {
        const char *name = tensor_ref(&array->children[i], p);
        if (indices[i] < 0)
            assert_null(name);
        else
            assert_string_equal(name, p->tensors[indices[i]].name);
    }
}

static void check_steps(const json_node *root, const dfg_program *p)
{
    const json_node *steps = required_member(root, "steps", JSON_ARRAY);
    assert_int_equal(steps->n_children, p->n_steps);
    for (int32_t i = 0; i < p->n_steps; i++) {
        const json_node *step = &steps->children[i];
        const dfg_program_step *expected = &p->steps[i];
        assert_int_equal(required_integer(step, "index"), i);
        char label[DFG_OP_LABEL_BYTES];
        assert_string_equal(required_string(step, "op"),
                            dfg_op_label(expected->op, &expected->attrs, label,
                                         sizeof label));
        assert_string_equal(required_string(step, "name"), expected->name);
        check_names(json_get(step, "inputs"), p, expected->inputs,
                    expected->n_inputs);
        check_names(json_get(step, "outputs"), p, expected->outputs,
                    expected->n_outputs);
        const json_node *workspace = json_get(step, "workspace");
        assert_non_null(workspace);
        assert_int_equal(tensor_ref(workspace, p) != NULL,
                         expected->workspace >= 0);
        assert_int_equal(required_integer(step, "flops"), expected->flops);
    }
}

static void check_tensors(const json_node *root, const dfg_program *p)
{
    static const char *const kinds[] = {"input", "output", "activation",
                                        "workspace", "weight", "constant",
                                        "view"};
    const json_node *tensors = required_member(root, "tensors", JSON_ARRAY);
    assert_int_equal(tensors->n_children, p->n_tensors);
    for (int32_t i = 0; i < p->n_tensors; i++) {
        const json_node *t = &tensors->children[i];
        const dfg_program_tensor *expected = &p->tensors[i];
        assert_int_equal(required_integer(t, "index"), i);
        assert_string_equal(required_string(t, "name"), expected->name);
        assert_string_equal(required_string(t, "dtype"),
                            dfg_dtype_name(expected->type.dtype));
        const json_node *shape = required_member(t, "shape", JSON_ARRAY);
        assert_int_equal(shape->n_children, expected->type.rank);
        for (size_t d = 0; d < shape->n_children; d++) {
            assert_true(json_is_integer(&shape->children[d]));
            assert_int_equal(json_integer(&shape->children[d]),
                             expected->type.shape[d]);
        }
        assert_int_equal(required_integer(t, "bytes"), expected->bytes);
        const char *kind = required_string(t, "kind");
        assert_string_equal(kind, kinds[expected->kind]);
        const char *region = required_string(t, "region");
        assert_string_equal(region, expected->region == DFG_REGION_ARENA
                                        ? "arena" : "weights");
        assert_int_equal(required_integer(t, "offset"), expected->offset);
        assert_int_equal(required_integer(t, "first_step"),
                         expected->first_step);
        assert_int_equal(required_integer(t, "last_step"), expected->last_step);
        const json_node *alias = json_get(t, "alias_of");
        assert_non_null(alias);
        const char *alias_name = tensor_ref(alias, p);
        if (expected->alias_of < 0)
            assert_null(alias_name);
        else
            assert_string_equal(alias_name,
                                p->tensors[expected->alias_of].name);
    }
}

static void check_json(const dfg_program *program)
{
    char *text = report_text(program, dfg_report_json);
    json_node *root = json_parse(text);
    if (!root)
        fail_msg("the JSON report does not parse:\n%.2000s", text);
    assert_int_equal(root->type, JSON_OBJECT);
    assert_string_equal(required_string(root, "format"), "dfg-plan");
    assert_int_equal(required_integer(root, "version"), 1);
    check_stats(root, program);
    check_names(required_member(root, "inputs", JSON_ARRAY), program,
                program->inputs, program->n_inputs);
    check_names(required_member(root, "outputs", JSON_ARRAY), program,
                program->outputs, program->n_outputs);
    check_steps(root, program);
    check_tensors(root, program);
    json_free(root);
    free(text);
}

/* Braces balance outside strings, every string is closed, and every step
 * and arena tensor has its node. */
static void check_dot(const dfg_program *program)
{
    char *text = report_text(program, dfg_report_dot);
    assert_true(strncmp(text, "digraph plan {", 14) == 0);
    int depth = 0, in_string = 0;
    for (const char *c = text; *c; c++) {
        if (in_string) {
            if (*c == '\\' && c[1])
                c++;
            else if (*c == '"')
                in_string = 0;
            else
                assert_int_not_equal(*c, '\n');
        } else if (*c == '"') {
            in_string = 1;
        } else if (*c == '{') {
            depth++;
        } else if (*c == '}') {
            depth--;
            assert_true(depth >= 0);
        }
    }
    assert_false(in_string);
    assert_int_equal(depth, 0);
    char node[32];
    for (int32_t i = 0; i < program->n_steps; i++) {
        snprintf(node, sizeof node, "\n  s%d [", (int)i);
        assert_non_null(strstr(text, node));
    }
    for (int32_t i = 0; i < program->n_tensors; i++) {
        snprintf(node, sizeof node, "\n  t%d [", (int)i);
        assert_int_equal(strstr(text, node) != NULL,
                         program->tensors[i].region == DFG_REGION_ARENA);
    }
    free(text);
}

static void check_summary(const dfg_program *program)
{
    char *text = report_text(program, dfg_report_summary);
    const dfg_plan_stats *s = &program->stats;
    const uint64_t numbers[] = {s->arena_bytes, s->lower_bound_bytes,
                                s->no_reuse_bytes, s->weights_bytes};
    char expected[64], count[32];
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
        snprintf(expected, sizeof expected, "(%s B)",
                 dfg_format_count(numbers[i], count, sizeof count));
        if (!strstr(text, expected))
            fail_msg("summary lacks '%s':\n%s", expected, text);
    }
    assert_non_null(strstr(text, dfg_planner_name(s->planner)));
    assert_non_null(strstr(text, s->verified ? "verified: yes"
                                             : "verified: no"));
    assert_non_null(strstr(text, "arena / lower bound"));
    assert_non_null(strstr(text, "peak      step"));
    assert_non_null(strstr(text, "largest tensors:"));
    free(text);
}

static void check_model(const char *name, dfg_planner planner)
{
    dfg_program *program = compile_model(name, planner);
    check_json(program);
    check_dot(program);
    check_summary(program);
    dfg_program_destroy(program);
}

static void test_every_model_and_planner(void **state)
{
    (void)state;
    for (const char *const *name = dfg_model_names(); *name; name++)
        for (int planner = 0; planner < DFG_PLANNER_COUNT; planner++)
            check_model(*name, (dfg_planner)planner);
}

/* Quotes, backslashes, control characters, a lone continuation byte and
 * a multi-byte character in names must keep every format well formed. */
static void test_hostile_names(void **state)
{
    (void)state;
    static const char hostile[] = "in\"put\\ \n\t\x01 \x80 caf\xc3\xa9 }\"; x";
    dfg_program *program = compile_named_relu(hostile, "out\"\\");

    char *text = report_text(program, dfg_report_json);
    json_node *root = json_parse(text);
    if (!root)
        fail_msg("JSON with hostile names does not parse:\n%s", text);
    const json_node *inputs = json_get(root, "inputs");
    assert_non_null(inputs);
    assert_int_equal(inputs->n_children, 1);
    /* Every valid byte survives; the stray 0x80 becomes U+FFFD. */
    assert_string_equal(inputs->children[0].text,
                        "in\"put\\ \n\t\x01 \xef\xbf\xbd caf\xc3\xa9 }\"; x");
    json_free(root);
    free(text);
    check_dot(program);
    char *summary = report_text(program, dfg_report_summary);
    assert_null(strchr(summary, '\x01'));
    free(summary);
    dfg_program_destroy(program);
}

/* A program saved and loaded back reports exactly what the compiled one
 * did, so `dfgc plan FILE.dfgp` shows the plan that was compiled. */
static void test_loaded_program_reports_the_same(void **state)
{
    (void)state;
    char path[] = "/tmp/dfg-test-reports-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    dfg_program *compiled = compile_model("cnn", DFG_PLANNER_GREEDY_BREADTH);
    assert_int_equal(dfg_program_save(compiled, path), DFG_OK);
    dfg_program *loaded;
    assert_int_equal(dfg_program_load(path, NULL, &loaded), DFG_OK);
    unlink(path);
    report_fn reports[] = {dfg_report_json, dfg_report_dot,
                           dfg_report_summary};
    for (size_t i = 0; i < sizeof reports / sizeof reports[0]; i++) {
        char *expected = report_text(compiled, reports[i]);
        char *actual = report_text(loaded, reports[i]);
        assert_string_equal(actual, expected);
        free(expected);
        free(actual);
    }
    dfg_program_destroy(compiled);
    dfg_program_destroy(loaded);
}

static void test_format_numbers(void **state)
{
    (void)state;
    char buf[64];
    assert_string_equal(dfg_format_ratio(1, 3, 4, buf, sizeof buf), "0.3333");
    assert_string_equal(dfg_format_ratio(2, 3, 4, buf, sizeof buf), "0.6667");
    assert_string_equal(dfg_format_ratio(999995, 1000000, 4, buf, sizeof buf),
                        "1.0000");
    assert_string_equal(dfg_format_ratio(7, 2, 0, buf, sizeof buf), "4");
    assert_string_equal(dfg_format_ratio(5, 0, 2, buf, sizeof buf), "n/a");
    assert_string_equal(dfg_format_ratio(123456789012ull, 1000, 3, buf,
                                         sizeof buf), "123456789.012");
    assert_string_equal(dfg_format_bytes(1023, buf, sizeof buf), "1023 B");
    assert_string_equal(dfg_format_bytes(1536, buf, sizeof buf), "1.50 KiB");
    assert_string_equal(dfg_format_bytes(3u << 20, buf, sizeof buf),
                        "3.00 MiB");
    assert_string_equal(dfg_format_bytes(5ull << 30, buf, sizeof buf),
                        "5.00 GiB");
    assert_string_equal(dfg_format_count(0, buf, sizeof buf), "0");
    assert_string_equal(dfg_format_count(999, buf, sizeof buf), "999");
    assert_string_equal(dfg_format_count(1234567, buf, sizeof buf),
                        "1,234,567");
}

static void test_json_parser_rejects_invalid(void **state)
{
    (void)state;
    /* The checker must be able to fail, or the tests above prove nothing. */
    static const char *const invalid[] = {
        "", "{", "{\"a\": 1,}", "[1 2]", "{\"a\" 1}", "\"\x01\"", "01",
        "1.", "\"\\x\"", "\"\x80\"", "{} {}", "[\"\\ud800\"]", "nul",
    };
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
        json_node *node = json_parse(invalid[i]);
        if (node)
            fail_msg("accepted invalid JSON '%s'", invalid[i]);
    }
    json_node *node = json_parse(" {\"a\": [1, -2.5e3, true, null, "
                                 "\"\\u00e9\\ud83d\\ude00\"]} ");
    assert_non_null(node);
    const json_node *a = json_get(node, "a");
    assert_int_equal(a->n_children, 5);
    assert_float_equal(a->children[1].number, -2500.0, 0.0);
    assert_string_equal(a->children[4].text, "\xc3\xa9\xf0\x9f\x98\x80");
    json_free(node);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    assert_int_equal(dfg_report_json(NULL, stdout), DFG_ERR_INVALID_ARGUMENT);
    assert_int_equal(dfg_report_dot(NULL, stdout), DFG_ERR_INVALID_ARGUMENT);
    assert_int_equal(dfg_report_summary(NULL, stdout),
                     DFG_ERR_INVALID_ARGUMENT);
    dfg_program *program = compile_model("mlp", DFG_PLANNER_GREEDY_SIZE);
    assert_int_equal(dfg_report_json(program, NULL), DFG_ERR_INVALID_ARGUMENT);
    /* A stream that cannot be written reports an I/O error. */
    FILE *read_only = fopen("/dev/null", "r");
    assert_non_null(read_only);
    assert_int_equal(dfg_report_json(program, read_only), DFG_ERR_IO);
    assert_int_equal(dfg_report_dot(program, read_only), DFG_ERR_IO);
    assert_int_equal(dfg_report_summary(program, read_only), DFG_ERR_IO);
    fclose(read_only);
    dfg_program_destroy(program);
}

/* A test backend's rule: 1 MiB of library scratch for every conv. */
static int64_t megabyte_conv_scratch(int32_t op, const dfg_attrs *attrs,
                                     const struct dfg_type *in, int32_t n_in,
                                     const struct dfg_type *out, int32_t n_out)
{
    (void)attrs, (void)in, (void)n_in, (void)out, (void)n_out;
    return op == DFG_OP_CONV2D ? (int64_t)1 << 20 : -1;
}

/* y = conv3x3(x), x [1, 8, 16, 16]: the one step is the peak, and its
 * workspace (the conv's own im2col: 8 * 9 * 16 * 16 floats, 72 KiB) is
 * part of it. */
static dfg_program *compile_conv_preferring(const char *rule,
                                           int prefer_memory)
{
    dfg_graph *g;
    dfg_value x, w, y;
    static float weights[8 * 8 * 3 * 3];
    for (int i = 0; i < 8 * 8 * 3 * 3; i++)
        weights[i] = (float)((i * 11) % 7) / 7.0f - 0.4f;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 4,
                                     (int64_t[]){1, 8, 16, 16}, &x), DFG_OK);
    assert_int_equal(dfg_graph_weight(g, "w", DFG_F32, 4,
                                      (int64_t[]){8, 8, 3, 3}, weights, &w),
                     DFG_OK);
    dfg_conv2d_params params = {.strides = {1, 1}, .dilations = {1, 1},
                                .pads = {1, 1, 1, 1}, .group = 1};
    assert_int_equal(dfg_conv2d(g, x, w, DFG_NO_VALUE, &params, &y), DFG_OK);
    assert_int_equal(dfg_graph_output(g, y, "y"), DFG_OK);
    dfg_compile_options options;
    dfg_compile_options_init(&options);
    options.backend_workspace = rule ? megabyte_conv_scratch : NULL;
    options.backend_workspace_for = rule;
    options.prefer_memory = prefer_memory;
    dfg_program *program;
    assert_int_equal(dfg_compile(g, &options, &program), DFG_OK);
    dfg_graph_destroy(g);
    return program;
}

static dfg_program *compile_conv(const char *rule)
{
    return compile_conv_preferring(rule, 0);
}

static int64_t report_integer(const dfg_program *program, const char *key)
{
    char *text = report_text(program, dfg_report_json);
    json_node *root = json_parse(text);
    assert_non_null(root);
    int64_t value = required_integer(root, key);
    json_free(root);
    free(text);
    return value;
}

/* y for a fixed x through the CPU backend. */
static void run_conv(const dfg_program *program, float *y)
{
    static float x[8 * 16 * 16];
    for (int i = 0; i < 8 * 16 * 16; i++)
        x[i] = (float)((i * 37) % 19) / 19.0f - 0.5f;
    const dfg_backend *cpu;
    dfg_session *session;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    assert_int_equal(dfg_session_create(program, cpu, NULL, &session), DFG_OK);
    const void *in[1] = {x};
    void *out[1] = {y};
    assert_int_equal(dfg_session_run(session, in, out), DFG_OK);
    dfg_session_destroy(session);
}

/* The bound without library scratch is reported beside the arena; with
 * prefer_memory the program is planned at it, its conv without the
 * scratch that does not fit there, and computes the same. */
static void test_prefer_memory_plans_without_scratch(void **state)
{
    (void)state;
    dfg_program *fast = compile_conv("cpu");
    dfg_program *small = compile_conv_preferring("cpu", 1);
    int64_t fast_free = report_integer(fast, "scratch_free_lower_bound_bytes");
    dfg_plan_stats f, s;
    dfg_program_stats(fast, &f);
    dfg_program_stats(small, &s);
    /* x, y and the conv's least workspace, under x, y and 1 MiB */
    assert_true(fast_free < (int64_t)f.lower_bound_bytes - (1 << 19));
    assert_int_equal(report_integer(small, "scratch_free_lower_bound_bytes"),
                     fast_free);
    assert_int_equal(s.lower_bound_bytes, fast_free);
    assert_int_equal(s.arena_bytes, s.lower_bound_bytes);
    char *text = report_text(small, dfg_report_summary);
    if (strstr(text, "kept: faster"))
        fail_msg("prefer_memory kept scratch above the bound:\n%s", text);
    free(text);
    static float y_fast[8 * 16 * 16], y_small[8 * 16 * 16];
    run_conv(fast, y_fast);
    run_conv(small, y_small);
    for (int i = 0; i < 8 * 16 * 16; i++)
        if (fabsf(y_fast[i] - y_small[i]) > 1e-4f)
            fail_msg("y[%d]: %g with scratch, %g without", i, y_fast[i],
                     y_small[i]);
    dfg_program_destroy(small);
    dfg_program_destroy(fast);
}

/* The peak's workspace, in the summary and the JSON: library scratch
 * beyond the op's own is said to be kept for speed, with its bytes, op
 * and step; a conv's own workspace is fitted under the bound. */
static void test_peak_workspace_is_explained(void **state)
{
    (void)state;
    const char *rules[] = {"cpu", "gpu", NULL};
    const char *said[] = {
        "peak includes 1.00 MiB of oneDNN scratch for conv2d step 0 (its own "
        "kernel needs 72.00 KiB; kept: faster)",
        "peak includes 1.00 MiB of gpu backend scratch for conv2d step 0",
        "of workspace for conv2d step 0 (fitted under the lower bound: its "
        "kernel could use 72.00 KiB)",
    };
    for (int r = 0; r < 3; r++) {
        dfg_program *program = compile_conv(rules[r]);
        char *text = report_text(program, dfg_report_summary);
        if (!strstr(text, said[r]))
            fail_msg("summary lacks '%s':\n%s", said[r], text);
        free(text);
        text = report_text(program, dfg_report_json);
        json_node *root = json_parse(text);
        assert_non_null(root);
        const json_node *peak = required_member(root, "peak", JSON_OBJECT);
        assert_int_equal(required_integer(peak, "step"), 0);
        assert_string_equal(required_string(peak, "op"), "conv2d");
        assert_int_equal(required_integer(peak, "own_workspace_bytes"),
                         8 * 9 * 16 * 16 * 4);
        int64_t workspace = required_integer(peak, "workspace_bytes");
        if (rules[r]) {
            assert_int_equal(workspace, 1 << 20);
            assert_string_equal(required_string(peak, "kept_for"), "speed");
        } else {
            assert_true(workspace > 0 && workspace < 8 * 9 * 16 * 16 * 4);
            required_member(peak, "kept_for", JSON_NULL);
            required_member(peak, "library_scratch", JSON_NULL);
        }
        json_free(root);
        free(text);
        dfg_program_destroy(program);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_model_and_planner),
        cmocka_unit_test(test_hostile_names),
        cmocka_unit_test(test_loaded_program_reports_the_same),
        cmocka_unit_test(test_format_numbers),
        cmocka_unit_test(test_json_parser_rejects_invalid),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_peak_workspace_is_explained),
        cmocka_unit_test(test_prefer_memory_plans_without_scratch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
