/* Where dfgc's MODEL argument comes from (tools/model_source.h):
 *   example:NAME (or a bare NAME)  a bundled model, dfg_model_build()
 *   FILE.dfgp                      a compiled program, dfg_program_load()
 *   FILE.onnx                      an ONNX model, dfg_onnx_import_file(),
 *                                  symbolic dims from --shapes, inputs
 *                                  made constants by --const
 * Anything else
 * is looked up as a bundled model name, whose error message lists every
 * accepted form. */
#include "tools/model_source.h"

#include <stdio.h>
#include <string.h>

#include "tools/cli.h"
#include "tools/memory_limit_cli.h"

#define EXAMPLE_PREFIX "example:"

static int has_suffix(const char *text, const char *suffix)
{
    size_t n = strlen(text), m = strlen(suffix);
    return n >= m && strcmp(text + n - m, suffix) == 0;
}

#define MAX_SHAPES 32

/* The --shapes bindings, for the one model a dfgc process loads. */
static char shape_names[MAX_SHAPES][256];
static dfg_onnx_binding shape_bindings[MAX_SHAPES];
static int32_t n_shape_bindings;

int dfgc_shapes_option(const char *command, int argc, char **argv, int *i)
{
    const char *value;
    int found = dfgc_option_value(command, argc, argv, i, "--shapes", &value);
    if (found <= 0)
        return found;
    char spec[1024];
    for (const char *p = value; *p;) {
        size_t n = strcspn(p, ",");
        if (n >= sizeof spec || n_shape_bindings == MAX_SHAPES) {
            dfgc_usage_error(command, "--shapes: too many or too long specs");
            return -1;
        }
        memcpy(spec, p, n);
        spec[n] = '\0';
        int32_t k = n_shape_bindings;
        if (dfg_onnx_parse_binding(spec, shape_names[k], sizeof shape_names[k],
                                   &shape_bindings[k]) != DFG_OK) {
            dfgc_usage_error(command, "--shapes: %s", dfg_last_error());
            return -1;
        }
        n_shape_bindings++;
        p += n + (p[n] == ',');
    }
    return 1;
}

#define MAX_CONSTS 32

/* The --const inputs, read when the option is parsed and kept for the
 * process' one model (freed at exit by the operating system). */
static char const_names[MAX_CONSTS][256];
static dfg_onnx_frozen_input consts[MAX_CONSTS];
static int32_t n_consts;

int dfgc_const_option(const char *command, int argc, char **argv, int *i)
{
    const char *value;
    int found = dfgc_option_value(command, argc, argv, i, "--const", &value);
    if (found <= 0)
        return found;
    if (n_consts == MAX_CONSTS) {
        dfgc_usage_error(command, "--const: at most %d constants", MAX_CONSTS);
        return -1;
    }
    if (dfg_onnx_read_constant(value, const_names[n_consts],
                               sizeof const_names[n_consts],
                               &consts[n_consts]) != DFG_OK) {
        dfgc_usage_error(command, "--const: %s", dfg_last_error());
        return -1;
    }
    n_consts++;
    return 1;
}

/* The --max-weight-bytes limit, for the process' one model. */
static uint64_t max_weight_bytes = DFG_ONNX_DEFAULT_MAX_WEIGHT_BYTES;

int dfgc_max_weight_option(const char *command, int argc, char **argv,
                           int *i)
{
    const char *value;
    int found = dfgc_option_value(command, argc, argv, i,
                                  "--max-weight-bytes", &value);
    if (found <= 0)
        return found;
    return dfgc_parse_u64(command, "--max-weight-bytes", value, 0,
                          UINT64_MAX, &max_weight_bytes) == 0 ? 1 : -1;
}

int dfgc_model_is_program(const char *model)
{
    return has_suffix(model, ".dfgp");
}

dfg_status dfgc_load_graph(const char *model, int keep_transposed_copies,
                           dfg_graph **out)
{
    if (has_suffix(model, ".onnx")) {
        dfg_onnx_options options;
        dfg_onnx_options_init(&options);
        options.bindings = shape_bindings;
        options.n_bindings = n_shape_bindings;
        options.frozen_inputs = consts;
        options.n_frozen_inputs = n_consts;
        options.max_weight_bytes = max_weight_bytes;
        options.keep_transposed_copies = keep_transposed_copies;
        return dfg_onnx_import_file(model, &options, NULL, out);
    }
    if (strncmp(model, EXAMPLE_PREFIX, strlen(EXAMPLE_PREFIX)) == 0)
        model += strlen(EXAMPLE_PREFIX);
    return dfg_model_build(model, NULL, out);
}

dfg_status dfgc_load_program(const char *model,
                             const dfg_compile_options *options,
                             dfg_program **out)
{
    if (dfgc_model_is_program(model))
        return dfg_program_load(model, options ? options->allocator : NULL,
                                out);
    dfg_graph *graph;
    dfg_status s = dfgc_load_graph(
        model, options && (!options->share_weights || options->training),
        &graph);
    if (s != DFG_OK)
        return s;
    s = dfgc_compile_limited(graph, options, out);
    dfg_graph_destroy(graph);
    return s;
}
