/* Helpers of the report tests (see report_check.h). */
#include "tests/report/report_check.h"
#include "dfg/compile.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>

dfg_program *compile_model(const char *name, dfg_planner planner)
{
    dfg_graph *graph;
    dfg_program *program;
    dfg_compile_options options;
    dfg_compile_options_init(&options);
    options.planner = planner;
    assert_int_equal(dfg_model_build(name, NULL, &graph), DFG_OK);
    dfg_status s = dfg_compile(graph, &options, &program);
    if (s != DFG_OK)
        fail_msg("compiling %s: %s", name, dfg_last_error());
    dfg_graph_destroy(graph);
    assert_int_equal(dfg_program_verify(program), DFG_OK);
    return program;
}

dfg_program *compile_named_relu(const char *input, const char *output)
{
    dfg_graph *graph;
    dfg_value x, y;
    assert_int_equal(dfg_graph_create(NULL, &graph), DFG_OK);
    assert_int_equal(dfg_graph_input(graph, input, DFG_F32, 2,
                                     (int64_t[]){4, 8}, &x), DFG_OK);
    assert_int_equal(dfg_relu(graph, x, &y), DFG_OK);
    assert_int_equal(dfg_graph_output(graph, y, output), DFG_OK);
    dfg_program *program;
    assert_int_equal(dfg_compile(graph, NULL, &program), DFG_OK);
    dfg_graph_destroy(graph);
    return program;
}

char *report_text(const dfg_program *program, report_fn report)
{
    /* The stream's pointer and size live on the heap: GCC 12 at -O3 takes
     * the stream's hold on locals for a dangling pointer once inlined. */
    struct { char *text; size_t size; } *buffer = calloc(1, sizeof *buffer);
    assert_non_null(buffer);
    FILE *stream = open_memstream(&buffer->text, &buffer->size);
    assert_non_null(stream);
    if (report(program, stream) != DFG_OK)
        fail_msg("report failed: %s", dfg_last_error());
    assert_int_equal(fclose(stream), 0);
    char *text = buffer->text;
    free(buffer);
    return text;
}

const json_node *required_member(const json_node *object, const char *key,
                                 json_type type)
{
    const json_node *node = json_get(object, key);
    if (!node)
        fail_msg("JSON member '%s' is missing", key);
    if (node->type != type)
        fail_msg("JSON member '%s' has type %d, not %d", key, node->type, type);
    return node;
}

int64_t required_integer(const json_node *object, const char *key)
{
    const json_node *node = required_member(object, key, JSON_NUMBER);
    if (!json_is_integer(node))
        fail_msg("JSON member '%s' is not an integer: %s", key, node->text);
    return json_integer(node);
}

const char *required_string(const json_node *object, const char *key)
{
    return required_member(object, key, JSON_STRING)->text;
}
