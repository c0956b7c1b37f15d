/* Where dfgc's MODEL argument comes from (tools/commands.h):
 *   example:NAME (or a bare NAME)  a bundled model, dfg_model_build()
 *   FILE.dfgp                      a compiled program, dfg_program_load()
 * (and FILE.onnx once the ONNX front end is wired in here). Anything else
 * is looked up as a bundled model name, whose error message lists every
 * accepted form. */
#include "commands.h"

#include <string.h>

#define EXAMPLE_PREFIX "example:"

static int has_suffix(const char *text, const char *suffix)
{
    size_t n = strlen(text), m = strlen(suffix);
    return n >= m && strcmp(text + n - m, suffix) == 0;
}

dfg_status dfgc_load_graph(const char *model, dfg_graph **out)
{
    if (strncmp(model, EXAMPLE_PREFIX, strlen(EXAMPLE_PREFIX)) == 0)
        model += strlen(EXAMPLE_PREFIX);
    return dfg_model_build(model, NULL, out);
}

dfg_status dfgc_load_program(const char *model,
                             const dfg_compile_options *options,
                             dfg_program **out)
{
    if (has_suffix(model, ".dfgp"))
        return dfg_program_load(model, options ? options->allocator : NULL,
                                out);
    dfg_graph *graph;
    dfg_status s = dfgc_load_graph(model, &graph);
    if (s != DFG_OK)
        return s;
    s = dfg_compile(graph, options, out);
    dfg_graph_destroy(graph);
    return s;
}
