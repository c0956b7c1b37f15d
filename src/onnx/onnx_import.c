/* The import driver: opset, the limits (onnx_limits.c), a check that
 * every op is supported (one error listing all that are not),
 * initializers (one that holds an earlier one's transpose is not read, but
 * made its transpose), graph inputs, then the nodes in order and the
 * graph outputs. */
#include <stdio.h>
#include <string.h>

#include "util/error.h"
#include "util/memory.h"
#include "ir/graph.h"
#include "onnx/onnx_import.h"
#include "onnx/onnx_ops.h"
#include "passes/weight_match.h"
#include "util/shared_bytes.h"

/* Opsets 7 to 17 are the target; older models are accepted where the ops
 * they use read the same (the mappings handle the attributes that moved). */
#define DFG_ONNX_MIN_OPSET 1
#define DFG_ONNX_MAX_OPSET 17

static int default_domain(const char *domain)
{
    return !domain || !domain[0] || strcmp(domain, "ai.onnx") == 0;
}

static dfg_status find_opset(const Onnx__ModelProto *model, int64_t *out)
{
    *out = -1;
    for (size_t i = 0; i < model->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = model->opset_import[i];
        if (default_domain(o->domain) && o->has_version)
            *out = o->version;
    }
    if (*out < 0)
        return dfg_error(DFG_ERR_FORMAT,
                         "the model imports no opset of the default ONNX "
                         "domain");
    if (*out < DFG_ONNX_MIN_OPSET || *out > DFG_ONNX_MAX_OPSET)
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "the model uses opset %lld; dfg supports opsets %d "
                         "to %d", (long long)*out, DFG_ONNX_MIN_OPSET,
                         DFG_ONNX_MAX_OPSET);
    return DFG_OK;
}

/* Initializers from this size up are compared with earlier ones before
 * they are read: smaller copies are left to the weight-sharing pass. */
#define TWIN_MIN_BYTES ((int64_t)512 << 10)
/* The slice of a twin compared before its file pages are dropped. */
#define TWIN_SLICE_BYTES ((int64_t)4 << 20)

/* 1 if t's raw bytes hold, bit for bit, the transpose of entry e's
 * decoded 2-D constant; the file's pages of t are dropped as they are
 * compared. */
static int holds_transpose(const dfg_onnx_importer *im,
                           const Onnx__TensorProto *t,
                           const dfg_onnx_entry *e, const dfg_type *type)
{
    if (!e->constant || !e->is_weight || e->type.rank != 2 ||
        e->type.dtype != type->dtype ||
        e->type.shape[0] != type->shape[1] ||
        e->type.shape[1] != type->shape[0])
        return 0;
    int64_t row_bytes = dfg_type_bytes(type) / type->shape[0];
    int64_t rows = TWIN_SLICE_BYTES / row_bytes;
    rows = rows > 0 ? rows : 1;
    int same = 1;
    for (int64_t r = 0; same && r < type->shape[0]; r += rows) {
        int64_t to = r + rows < type->shape[0] ? r + rows : type->shape[0];
        same = dfg_weights_transposed_rows(&e->type, e->constant, type,
                                           t->raw_data.data, r, to);
        if (im->source)
            dfg_shared_bytes_drop_pages(im->source,
                                        t->raw_data.data + r * row_bytes,
                                        (size_t)((to - r) * row_bytes));
    }
    return same;
}

/* The entry whose transpose initializer t holds (a tied projection
 * written out by an exporter), or -1: only 2-D raw tensors of
 * TWIN_MIN_BYTES and more, not bool, are looked at. */
static int32_t transposed_twin(const dfg_onnx_importer *im,
                               const Onnx__TensorProto *t)
{
    dfg_type type;
    memset(&type, 0, sizeof type);
    if (im->options && im->options->keep_transposed_copies)
        return -1;
    if (!t->has_raw_data || t->n_dims != 2 || t->dims[0] <= 0 ||
        t->dims[1] <= 0 || !t->has_data_type ||
        dfg_onnx_dtype(t->data_type, &type.dtype) != 0 ||
        type.dtype == DFG_BOOL)
        return -1;
    type.rank = 2;
    type.shape[0] = t->dims[0];
    type.shape[1] = t->dims[1];
    int64_t bytes = dfg_type_bytes(&type);
    if (bytes < TWIN_MIN_BYTES || (int64_t)t->raw_data.len != bytes)
        return -1;
    for (int32_t i = 0; i < im->n_entries; i++)
        if (dfg_type_bytes(&im->entries[i].type) == bytes &&
            holds_transpose(im, t, &im->entries[i], &type))
            return i;
    return -1;
}

static dfg_status add_initializers(dfg_onnx_importer *im,
                                   const Onnx__GraphProto *g)
{
    if (g->n_sparse_initializer)
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "sparse initializers are not supported");
    for (size_t i = 0; i < g->n_initializer; i++) {
        const Onnx__TensorProto *t = g->initializer[i];
        if (!t->name || !t->name[0])
            return dfg_error(DFG_ERR_FORMAT, "initializer %zu has no name", i);
        int32_t twin = transposed_twin(im, t), entry;
        if (twin >= 0) {
            dfg_status st = dfg_onnx_add_entry(im, t->name, &entry);
            if (st != DFG_OK)
                return st;
            im->entries[entry].type = im->entries[twin].type;
            im->entries[entry].type.shape[0] = im->entries[twin].type.shape[1];
            im->entries[entry].type.shape[1] = im->entries[twin].type.shape[0];
            im->entries[entry].transpose_of = twin + 1;
            continue;
        }
        char what[300];
        snprintf(what, sizeof what, "initializer '%.256s'", t->name);
        dfg_type type;
        void *data;
        /* The decoded copy is the one kept: the file's pages go as it is
         * made. */
        dfg_status st = dfg_onnx_tensor_decode_from(
            t, what, im->base_dir, im->source, &im->allocator, &type, &data);
        if (st == DFG_OK)
            st = dfg_onnx_add_constant(im, t->name, &type, data, &entry);
        if (st != DFG_OK)
            return st;
        im->entries[entry].is_weight = 1;
    }
    return DFG_OK;
}

static const dfg_onnx_frozen_input *find_frozen(const dfg_onnx_options *o,
                                                const char *name)
{
    for (int32_t i = 0; o->frozen_inputs && i < o->n_frozen_inputs; i++)
        if (o->frozen_inputs[i].name &&
            strcmp(o->frozen_inputs[i].name, name) == 0)
            return &o->frozen_inputs[i];
    return NULL;
}

/* A frozen input becomes a constant entry, after checking its value fits
 * the type the model declares. */
static dfg_status add_frozen(dfg_onnx_importer *im,
                             const Onnx__ValueInfoProto *info,
                             const dfg_onnx_frozen_input *f)
{
    dfg_type type = {f->dtype, f->rank, {0}, 0};
    if (f->rank < -1 || f->rank > DFG_MAX_RANK || !f->data)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "frozen input '%s': bad "
                         "rank or no data", f->name);
    if (f->rank == -1) {
        /* Raw values: the model's declared type says what they are. */
        dfg_status st = dfg_onnx_input_type(info, im->options, &type);
        if (st != DFG_OK)
            return st;
        if (dfg_type_bytes(&type) != (int64_t)f->bytes) {
            char text[128];
            return dfg_error(DFG_ERR_SHAPE, "constant input '%s': %zu bytes "
                             "given, the model declares %s (%lld bytes)",
                             f->name, f->bytes,
                             dfg_type_format(&type, text, sizeof text),
                             (long long)dfg_type_bytes(&type));
        }
    } else {
        memcpy(type.shape, f->shape, (size_t)f->rank * sizeof *f->shape);
    }
    int64_t bytes = dfg_type_bytes(&type);
    if (bytes < 0 || bytes > DFG_ONNX_MAX_CONSTANT_BYTES)
        return dfg_error(DFG_ERR_OVERFLOW, "frozen input '%s': too large",
                         f->name);
    const Onnx__TypeProto *tp = info->type;
    dfg_dtype declared;
    if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
        tp->tensor_type && tp->tensor_type->has_elem_type &&
        (dfg_onnx_dtype(tp->tensor_type->elem_type, &declared) != 0 ||
         declared != type.dtype))
        return dfg_error(DFG_ERR_DTYPE, "frozen input '%s' has dtype %s, the "
                         "model declares %s", f->name,
                         dfg_dtype_name(type.dtype),
                         dfg_onnx_dtype_name(tp->tensor_type->elem_type));
    void *copy = dfg_alloc(&im->allocator, (size_t)(bytes ? bytes : 1));
    if (!copy)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "ONNX import: out of memory");
    if (bytes && type.dtype == DFG_BOOL) /* any nonzero byte is true, as
                                            for a session's input */
        dfg_bool_normalise(copy, f->data, (size_t)bytes);
    else if (bytes) /* an empty tensor may have no data at all */
        memcpy(copy, f->data, (size_t)bytes);
    int32_t entry;
    return dfg_onnx_add_constant(im, info->name, &type, copy, &entry);
}

static dfg_status add_inputs(dfg_onnx_importer *im, const Onnx__GraphProto *g)
{
    dfg_status checked = dfg_onnx_check_bindings(g, im->options);
    if (checked != DFG_OK)
        return checked;
    for (size_t i = 0; i < g->n_input; i++) {
        const Onnx__ValueInfoProto *info = g->input[i];
        if (!info->name || !info->name[0])
            return dfg_error(DFG_ERR_FORMAT, "graph input %zu has no name", i);
        /* Before IR 4 initializers were listed as inputs too; they are
         * weights, not inputs fed at run time. */
        if (dfg_name_table_find(&im->names, info->name) >= 0)
            continue;
        const dfg_onnx_frozen_input *frozen = find_frozen(im->options,
                                                          info->name);
        if (frozen) {
            dfg_status st = add_frozen(im, info, frozen);
            if (st != DFG_OK)
                return st;
            continue;
        }
        dfg_type type;
        int32_t entry;
        dfg_status st = dfg_onnx_input_type(info, im->options, &type);
        if (st == DFG_OK)
            st = dfg_onnx_add_entry(im, info->name, &entry);
        if (st != DFG_OK)
            return st;
        dfg_onnx_entry *e = &im->entries[entry];
        e->type = type;
        st = dfg_graph_input(im->graph, info->name, type.dtype, type.rank,
                             type.shape, &e->value);
        if (st != DFG_OK)
            return st;
    }
    return DFG_OK;
}

/* 1 the first time an unsupported op type is met, 0 after, -1 when out
 * of memory. Types are told apart by name and by whether their domain is
 * the default one: seen[1] holds the default domain's, seen[0] the rest
 * (a hash table each, so that listing n types costs O(n), not O(n^2)). */
static int first_meeting(dfg_name_table seen[2], const char *type,
                         int in_default)
{
    dfg_name_table *table = &seen[in_default ? 1 : 0];
    if (dfg_name_table_find(table, type) >= 0)
        return 0;
    return dfg_name_table_insert(table, type, 0) == 0 ? 1 : -1;
}

/* Every unsupported op type once, each with the name of a node using it,
 * in one message. */
static dfg_status check_ops(const Onnx__GraphProto *g)
{
    char list[1536];
    size_t used = 0;
    int32_t n_unsupported = 0;
    list[0] = '\0';
    dfg_name_table seen[2];
    dfg_name_table_init(&seen[0], NULL);
    dfg_name_table_init(&seen[1], NULL);
    int first = 0;
    for (size_t i = 0; i < g->n_node && first >= 0; i++) {
        const Onnx__NodeProto *node = g->node[i];
        const char *type = node->op_type ? node->op_type : "";
        if (default_domain(node->domain) && dfg_onnx_find_op(type))
            continue;
        first = first_meeting(seen, type, default_domain(node->domain));
        if (first <= 0)
            continue;
        const char *name = node->name && node->name[0] ? node->name
                           : node->n_output ? node->output[0] : "?";
        if (used < sizeof list - 1)
            used += (size_t)snprintf(list + used, sizeof list - used,
                                     "%s%s%s%s (node '%s')",
                                     n_unsupported ? ", " : "",
                                     default_domain(node->domain) ? ""
                                                                  : node->domain,
                                     default_domain(node->domain) ? "" : ".",
                                     type, name);
        n_unsupported++;
    }
    dfg_name_table_free(&seen[0]);
    dfg_name_table_free(&seen[1]);
    if (first < 0)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "ONNX import: out of memory "
                         "listing unsupported op types");
    if (n_unsupported)
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "%d unsupported op type%s: %s", (int)n_unsupported,
                         n_unsupported > 1 ? "s" : "", list);
    return DFG_OK;
}

static dfg_status import_nodes(dfg_onnx_importer *im,
                               const Onnx__GraphProto *g)
{
    /* Each ONNX node records at least one node and one value: room for
     * them at once, not by doubling (a copy of every node each time). The
     * node count is held to its limit before (onnx_limits.c). */
    const dfg_graph *graph = im->graph;
    if (dfg_graph_reserve(im->graph, graph->n_nodes + (int32_t)g->n_node,
                          graph->n_values + (int32_t)g->n_node) != 0)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "ONNX import: out of memory "
                         "for %zu nodes", g->n_node);
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *node = g->node[i];
        if (node->n_input > DFG_ONNX_MAX_NODE_INPUTS)
            return dfg_error(DFG_ERR_UNSUPPORTED, "node %zu has %zu inputs", i,
                             node->n_input);
        im->node = node;
        im->node_label = node->n_output && node->output[0][0]
                             ? node->output[0]
                             : node->name && node->name[0] ? node->name : "?";
        im->n_emitted = 0;
        im->first_value = DFG_NO_VALUE;
        const dfg_onnx_op *op = dfg_onnx_find_op(node->op_type);
        dfg_status st = op->import(im, op);
        if (st != DFG_OK)
            return dfg_error_prefix(st, "ONNX node %zu '%s' (%s)", i,
                                    node->name && node->name[0] ? node->name
                                                                : im->node_label,
                                    node->op_type);
    }
    im->node = NULL;
    return DFG_OK;
}

/* A graph output must be a node's output of its own: an input, weight,
 * constant or value already returned goes through an identity node (a
 * copy, as ONNX Runtime returns them). Its value keeps the ONNX name
 * unless a graph input, a weight or an earlier output holds it: then it
 * is named after the identity node, "NAME/output". */
static dfg_status add_outputs(dfg_onnx_importer *im, const Onnx__GraphProto *g)
{
    if (g->n_output == 0)
        return dfg_error(DFG_ERR_FORMAT, "the graph has no outputs");
    dfg_value *done = dfg_calloc(&im->allocator, g->n_output, sizeof *done);
    if (!done)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "ONNX import: out of memory");
    dfg_status st = DFG_OK;
    for (size_t i = 0; st == DFG_OK && i < g->n_output; i++) {
        const char *name = g->output[i]->name;
        int32_t entry;
        dfg_value value;
        im->node_label = name;
        if (!name || !name[0]) {
            st = dfg_error(DFG_ERR_FORMAT, "graph output %zu has no name", i);
            break;
        }
        st = dfg_onnx_lookup(im, name, &entry);
        if (st == DFG_OK)
            st = dfg_onnx_materialise(im, entry, &value);
        int reused = 0;
        for (size_t j = 0; j < i; j++)
            reused |= done[j] == value;
        if (st == DFG_OK && (!im->entries[entry].produced || reused)) {
            char node_name[300];
            snprintf(node_name, sizeof node_name, "%.256s/output", name);
            dfg_value in = value;
            st = dfg_graph_node(im->graph, "identity", node_name, &in, 1, NULL,
                                &value, 1);
        }
        const dfg_onnx_entry *e = st == DFG_OK ? &im->entries[entry] : NULL;
        int taken = e && (reused || e->is_weight ||
                          (!e->produced && !e->constant));
        if (st == DFG_OK)
            st = dfg_graph_output(im->graph, value, taken ? NULL : name);
        done[i] = value;
    }
    dfg_free(&im->allocator, done);
    return st;
}

dfg_status dfg_onnx_import_model(const Onnx__ModelProto *model,
                                 const dfg_onnx_options *options,
                                 const char *base_dir,
                                 const dfg_shared_bytes *source,
                                 const dfg_allocator *allocator,
                                 dfg_graph **out)
{
    const Onnx__GraphProto *g = model->graph;
    if (!g)
        return dfg_error(DFG_ERR_FORMAT, "the model has no graph");
    dfg_onnx_importer im;
    memset(&im, 0, sizeof im);
    im.allocator = dfg_allocator_or_default(allocator);
    im.options = options;
    im.base_dir = base_dir;
    im.source = source;
    dfg_name_table_init(&im.names, &im.allocator);
    dfg_status st = find_opset(model, &im.opset);
    if (st == DFG_OK)
        st = dfg_onnx_check_limits(g, options);
    if (st == DFG_OK)
        st = check_ops(g);
    if (st == DFG_OK)
        st = dfg_graph_create(allocator, &im.graph);
    if (st == DFG_OK)
        st = add_initializers(&im, g);
    if (st == DFG_OK)
        st = add_inputs(&im, g);
    if (st == DFG_OK)
        st = import_nodes(&im, g);
    if (st == DFG_OK)
        st = add_outputs(&im, g);
    dfg_onnx_importer_free(&im);
    if (st != DFG_OK) {
        dfg_graph_destroy(im.graph);
        return st;
    }
    *out = im.graph;
    return DFG_OK;
}
