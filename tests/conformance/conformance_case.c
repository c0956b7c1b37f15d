/* One conformance test: classify its ops, import, compile, and run every
 * test_data_set_N against its expected outputs. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dfg/dfg.h"
#include "onnx.pb-c.h"
#include "onnx/onnx_ops.h"
#include "onnx/onnx_tensor_file.h"
#include "tests/conformance/conformance.h"
#include "tests/support/file_bytes.h"

#define MAX_TENSORS 64

/* The names of the model's graph inputs that are not initializers, in
 * order: the inputs the test data feeds. */
typedef struct input_names {
    int n;
    char names[MAX_TENSORS][256];
} input_names;

static void collect_inputs(const Onnx__GraphProto *g, input_names *out)
{
    out->n = 0;
    for (size_t i = 0; i < g->n_input && out->n < MAX_TENSORS; i++) {
        const char *name = g->input[i]->name ? g->input[i]->name : "";
        int initializer = 0;
        for (size_t j = 0; j < g->n_initializer && !initializer; j++)
            initializer = g->initializer[j]->name &&
                          strcmp(g->initializer[j]->name, name) == 0;
        if (!initializer)
            snprintf(out->names[out->n++], sizeof out->names[0], "%s", name);
    }
}

/* Lists the op types of the model dfg has no mapping for. Returns 1 if
 * there is any (written into detail), 0 if none, -1 if unreadable. */
static int unsupported_ops(const char *model_path, input_names *inputs,
                           char *detail, size_t size)
{
    size_t n;
    void *bytes = file_bytes(model_path, &n);
    if (!bytes)
        return -1;
    Onnx__ModelProto *model = onnx__model_proto__unpack(NULL, n, bytes);
    free(bytes);
    if (!model || !model->graph) {
        if (model)
            onnx__model_proto__free_unpacked(model, NULL);
        return -1;
    }
    size_t used = 0;
    detail[0] = '\0';
    collect_inputs(model->graph, inputs);
    for (size_t i = 0; i < model->graph->n_node; i++) {
        const Onnx__NodeProto *node = model->graph->node[i];
        const char *type = node->op_type ? node->op_type : "?";
        int other_domain = node->domain && node->domain[0] &&
                           strcmp(node->domain, "ai.onnx") != 0;
        if (!other_domain && dfg_onnx_find_op(type))
            continue;
        char entry[160];
        snprintf(entry, sizeof entry, "%s%s%s", other_domain ? node->domain : "",
                 other_domain ? "." : "", type);
        if (strstr(detail, entry) == NULL && used + strlen(entry) + 2 < size)
            used += (size_t)snprintf(detail + used, size - used, "%s%s",
                                     used ? " " : "", entry);
    }
    onnx__model_proto__free_unpacked(model, NULL);
    return used > 0;
}

typedef struct case_tensors {
    int n;
    dfg_onnx_tensor t[MAX_TENSORS];
} case_tensors;

static void tensors_free(case_tensors *c)
{
    for (int i = 0; i < c->n; i++)
        free(c->t[i].data);
    c->n = 0;
}

/* Reads prefix_0.pb, prefix_1.pb, ... from set until one is missing. */
static int read_tensors(const char *set, const char *prefix, case_tensors *c,
                        char *detail, size_t size)
{
    c->n = 0;
    for (int i = 0; i < MAX_TENSORS; i++) {
        char path[4096];
        struct stat info;
        int n = snprintf(path, sizeof path, "%s/%s_%d.pb", set, prefix, i);
        if (n < 0 || (size_t)n >= sizeof path || stat(path, &info) != 0)
            return 0;
        if (dfg_onnx_read_tensor_file(path, NULL, &c->t[i]) != DFG_OK) {
            snprintf(detail, size, "reading %s: %s", path, dfg_last_error());
            return -1;
        }
        c->n = i + 1;
    }
    return 0;
}

/* Runs one data set whose inputs are read; frozen[i] marks the inputs
 * that were made constants (not fed). 0 on success, -1 with detail. */
static int run_set(const dfg_program *program, dfg_session *session,
                   const char *set, const case_tensors *in, const int *frozen,
                   char *detail, size_t size)
{
    case_tensors want = {0};
    int rc = read_tensors(set, "output", &want, detail, size);
    int32_t n_in = dfg_program_num_inputs(program);
    int32_t n_out = dfg_program_num_outputs(program);
    const void *inputs[MAX_TENSORS];
    void *outputs[MAX_TENSORS] = {0};
    int32_t fed = 0;
    for (int i = 0; rc == 0 && i < in->n; i++) {
        if (frozen[i])
            continue;
        dfg_tensor_info info;
        const dfg_onnx_tensor *t = &in->t[i];
        if (fed >= n_in ||
            dfg_program_input_info(program, fed, &info) != DFG_OK ||
            t->type.dtype != info.dtype || t->type.rank != info.rank ||
            memcmp(t->type.shape, info.shape,
                   (size_t)info.rank * sizeof *info.shape) != 0) {
            snprintf(detail, size, "input %d ('%s') does not match the "
                     "program's inputs", i, t->name);
            rc = -1;
        }
        inputs[fed++] = t->data;
    }
    if (rc == 0 && (fed != n_in || want.n != n_out)) {
        snprintf(detail, size, "%s: %d inputs and %d outputs, the program "
                 "has %d and %d", set, (int)fed, want.n, (int)n_in, (int)n_out);
        rc = -1;
    }
    for (int32_t i = 0; rc == 0 && i < n_out; i++) {
        dfg_tensor_info info;
        dfg_program_output_info(program, i, &info);
        const dfg_onnx_tensor *t = &want.t[i];
        if (t->type.dtype != info.dtype || t->type.rank != info.rank ||
            memcmp(t->type.shape, info.shape,
                   (size_t)info.rank * sizeof *info.shape) != 0) {
            char a[128], b[128];
            dfg_type got = {info.dtype, info.rank, {0}, 0};
            memcpy(got.shape, info.shape, sizeof got.shape);
            snprintf(detail, size, "output %d ('%s') is %s, expected %s",
                     (int)i, info.name, dfg_type_format(&got, a, sizeof a),
                     dfg_type_format(&t->type, b, sizeof b));
            rc = -1;
            break;
        }
        outputs[i] = malloc((size_t)dfg_type_bytes(&t->type) + 1);
    }
    if (rc == 0 && dfg_session_run(session, inputs, outputs) != DFG_OK) {
        snprintf(detail, size, "run: %s", dfg_last_error());
        rc = -1;
    }
    for (int32_t i = 0; rc == 0 && i < n_out; i++) {
        char what[300];
        snprintf(what, sizeof what, "output %d '%s'", (int)i, want.t[i].name);
        rc = conformance_compare(what, outputs[i], want.t[i].data,
                                 want.t[i].type.dtype,
                                 dfg_type_numel(&want.t[i].type), detail,
                                 size);
    }
    for (int32_t i = 0; i < n_out && i < MAX_TENSORS; i++)
        free(outputs[i]);
    tensors_free(&want);
    return rc;
}

/* How much of the inputs a model that needs operands at import time gets
 * frozen: first the attribute-like ones, then, if that is not enough,
 * short float vectors too (a Resize's scales). */
enum { FREEZE_NONE, FREEZE_ATTRIBUTES, FREEZE_SHORT_FLOATS };

/* Inputs that look like operands dfg takes as attributes (shapes, axes,
 * pads, bounds): integer or bool tensors of rank <= 1, and scalars; at
 * FREEZE_SHORT_FLOATS also float vectors of at most 2 * DFG_MAX_RANK
 * entries. */
static int freezable(const dfg_onnx_tensor *t, int level)
{
    if (t->type.rank == 0 ||
        (t->type.rank == 1 && !dfg_dtype_is_float(t->type.dtype)))
        return 1;
    return level >= FREEZE_SHORT_FLOATS && t->type.rank == 1 &&
           t->type.shape[0] <= 2 * DFG_MAX_RANK;
}

/* Imports the model (freezing inputs from level `freeze` on, one level
 * more if that is not enough), compiles it and runs data set `set`. */
static conformance_outcome run_model_on_set(const char *model_path, const input_names *names,
                            const char *set, int freeze, char *detail,
                            size_t size)
{
    case_tensors in = {0};
    int frozen[MAX_TENSORS] = {0};
    dfg_onnx_frozen_input values[MAX_TENSORS] = {0};
    dfg_onnx_options options;
    dfg_onnx_options_init(&options);
    options.frozen_inputs = values;
    if (read_tensors(set, "input", &in, detail, size) != 0)
        return CONFORMANCE_FAIL;
    dfg_graph *graph = NULL;
    dfg_program *program = NULL;
    dfg_session *session = NULL;
    const dfg_backend *cpu = NULL;
    dfg_status st;
    for (int level = freeze;; level++) {
        options.n_frozen_inputs = 0;
        for (int i = 0; i < in.n && i < names->n; i++) {
            frozen[i] = level != FREEZE_NONE && freezable(&in.t[i], level);
            if (!frozen[i])
                continue;
            dfg_onnx_frozen_input *f = &values[options.n_frozen_inputs++];
            f->name = names->names[i];
            f->dtype = in.t[i].type.dtype;
            f->rank = in.t[i].type.rank;
            memcpy(f->shape, in.t[i].type.shape, sizeof f->shape);
            f->data = in.t[i].data;
        }
        st = dfg_onnx_import_file(model_path, &options, NULL, &graph);
        if (level != FREEZE_ATTRIBUTES || st != DFG_ERR_UNSUPPORTED ||
            !strstr(dfg_last_error(), "at import time"))
            break;
    }
    conformance_outcome rc = CONFORMANCE_FAIL;
    if (st == DFG_ERR_UNSUPPORTED || st == DFG_ERR_DTYPE)
        rc = CONFORMANCE_SKIP_FEATURE;
    if (st != DFG_OK)
        snprintf(detail, size, "%s%s", rc == CONFORMANCE_FAIL ? "import: " : "",
                 dfg_last_error());
    if (st == DFG_OK && (st = dfg_compile(graph, NULL, &program)) == DFG_OK &&
        (st = dfg_program_verify(program)) == DFG_OK &&
        (st = dfg_backend_find("cpu", &cpu)) == DFG_OK &&
        (st = dfg_session_create(program, cpu, NULL, &session)) == DFG_OK)
        rc = run_set(program, session, set, &in, frozen, detail, size) == 0
                 ? CONFORMANCE_PASS : CONFORMANCE_FAIL;
    else if (graph)
        snprintf(detail, size, "compile: %s", dfg_last_error());
    dfg_session_destroy(session);
    dfg_program_destroy(program);
    dfg_graph_destroy(graph);
    tensors_free(&in);
    return rc;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every test_data_set_* of dir, importing the model for each (the
 * frozen inputs may differ between sets). */
static conformance_outcome run_sets(const char *dir, const char *model_path,
                                    const input_names *names, int freeze,
                                    char *detail, size_t size)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(detail, size, "cannot list %s", dir);
        return CONFORMANCE_FAIL;
    }
    char *sets[256];
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < 256;)
        if (strncmp(e->d_name, "test_data_set_", 14) == 0)
            sets[n++] = strdup(e->d_name);
    closedir(d);
    qsort(sets, (size_t)n, sizeof *sets, by_name);
    conformance_outcome outcome = n ? CONFORMANCE_PASS : CONFORMANCE_FAIL;
    if (!n)
        snprintf(detail, size, "no test_data_set_* in %s", dir);
    for (int i = 0; i < n; i++) {
        char set[4096];
        snprintf(set, sizeof set, "%s/%s", dir, sets[i]);
        if (outcome == CONFORMANCE_PASS)
            outcome = run_model_on_set(model_path, names, set, freeze, detail,
                                       size);
        free(sets[i]);
    }
    if (outcome == CONFORMANCE_PASS)
        snprintf(detail, size, "%s", freeze ? "frozen inputs" : "");
    return outcome;
}

conformance_outcome conformance_run_case(const char *dir, char *detail,
                                         size_t size)
{
    char model_path[4096];
    input_names names;
    snprintf(model_path, sizeof model_path, "%s/model.onnx", dir);
    if (unsupported_ops(model_path, &names, detail, size) > 0)
        return CONFORMANCE_SKIP_OP;

    /* A model importable as it is runs as it is. One that needs an input
     * at import time (a shape fed as an input) runs with its attribute-like
     * inputs frozen to each data set's values. */
    dfg_graph *graph = NULL;
    dfg_status st = dfg_onnx_import_file(model_path, NULL, NULL, &graph);
    dfg_graph_destroy(graph);
    int freeze = st == DFG_ERR_UNSUPPORTED &&
                 strstr(dfg_last_error(), "at import time") != NULL
                     ? FREEZE_ATTRIBUTES : FREEZE_NONE;
    if (!freeze && (st == DFG_ERR_UNSUPPORTED || st == DFG_ERR_DTYPE)) {
        snprintf(detail, size, "%s", dfg_last_error());
        return CONFORMANCE_SKIP_FEATURE;
    }
    if (!freeze && st != DFG_OK) {
        snprintf(detail, size, "import: %s", dfg_last_error());
        return CONFORMANCE_FAIL;
    }
    return run_sets(dir, model_path, &names, freeze, detail, size);
}
