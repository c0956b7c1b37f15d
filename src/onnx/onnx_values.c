/* The importer's value table: ONNX names -> entries, constants kept on the
 * host until a graph node reads them. */
#include <stdio.h>
#include <string.h>

#include "ir/graph.h"
#include "onnx/onnx_importer.h"
#include "util/error.h"
#include "util/memory.h"

dfg_status dfg_onnx_add_entry(dfg_onnx_importer *im, const char *name,
                              int32_t *out)
{
    if (name && name[0] && dfg_name_table_find(&im->names, name) >= 0)
        return dfg_error(DFG_ERR_FORMAT, "value '%s' is defined twice", name);
    if (im->n_entries == im->capacity) {
        if (im->capacity > INT32_MAX / 4)
            return dfg_error(DFG_ERR_OUT_OF_MEMORY, "too many values");
        int32_t cap = im->capacity ? im->capacity * 2 : 64;
        dfg_onnx_entry *grown = dfg_calloc(&im->allocator, (size_t)cap,
                                           sizeof *grown);
        if (!grown)
            return dfg_error(DFG_ERR_OUT_OF_MEMORY, "ONNX import: out of memory");
        if (im->entries)
            memcpy(grown, im->entries, (size_t)im->n_entries * sizeof *grown);
        dfg_free(&im->allocator, im->entries);
        im->entries = grown;
        im->capacity = cap;
    }
    int32_t index = im->n_entries;
    dfg_onnx_entry *e = &im->entries[index];
    memset(e, 0, sizeof *e);
    e->name = name && name[0] ? name : NULL;
    if (e->name && dfg_name_table_insert(&im->names, e->name, index) != 0)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "ONNX import: out of memory");
    im->n_entries++;
    *out = index;
    return DFG_OK;
}

dfg_status dfg_onnx_add_constant(dfg_onnx_importer *im, const char *name,
                                 const dfg_type *type, void *data,
                                 int32_t *out)
{
    int64_t size = dfg_type_bytes(type);
    dfg_shared_bytes *bytes = dfg_shared_bytes_adopt(
        &im->allocator, data, (size_t)(size > 0 ? size : 0));
    if (!bytes)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "ONNX import: out of memory");
    dfg_status st = dfg_onnx_add_entry(im, name, out);
    if (st != DFG_OK) {
        dfg_shared_bytes_release(bytes);
        return st;
    }
    im->entries[*out].type = *type;
    im->entries[*out].constant = data;
    im->entries[*out].bytes = bytes;
    return DFG_OK;
}

dfg_status dfg_onnx_lookup(dfg_onnx_importer *im, const char *name,
                           int32_t *out)
{
    int32_t index = dfg_name_table_find(&im->names, name);
    if (index < 0)
        return dfg_error(DFG_ERR_FORMAT,
                         "node '%s' (%s) reads '%s', which is not defined "
                         "before it: a graph input is missing, or the graph "
                         "is cyclic or not topologically sorted",
                         im->node_label ? im->node_label : "?",
                         im->node && im->node->op_type ? im->node->op_type
                                                       : "?", name);
    *out = index;
    return DFG_OK;
}

/* An initializer found to be another's transpose: a transpose node of
 * the other, named as the initializer. */
static dfg_status materialise_transpose(dfg_onnx_importer *im,
                                        int32_t entry, dfg_value *out)
{
    dfg_value of;
    dfg_status st = dfg_onnx_materialise(
        im, im->entries[entry].transpose_of - 1, &of);
    dfg_attrs attrs;
    memset(&attrs, 0, sizeof attrs); /* no perm: the axes reversed */
    dfg_onnx_entry *e = &im->entries[entry];
    char name[300];
    snprintf(name, sizeof name, "%.256s/transposed", e->name);
    if (st == DFG_OK)
        st = dfg_graph_node(im->graph, "transpose", name, &of, 1, &attrs,
                            &e->value, 1);
    if (st == DFG_OK)
        st = dfg_graph_set_name(im->graph, e->value, e->name);
    if (st == DFG_OK) {
        e->produced = 1;
        *out = e->value;
    }
    return st;
}

dfg_status dfg_onnx_materialise(dfg_onnx_importer *im, int32_t entry,
                                dfg_value *out)
{
    dfg_onnx_entry *e = &im->entries[entry];
    if (e->value == DFG_NO_VALUE && e->transpose_of)
        return materialise_transpose(im, entry, out);
    if (e->value == DFG_NO_VALUE) {
        /* A computed constant is named apart from its ONNX name, which a
         * graph output may need for the node that returns it. */
        char name[300];
        if (e->is_weight)
            snprintf(name, sizeof name, "%s", e->name);
        else if (e->name)
            snprintf(name, sizeof name, "%.256s/constant", e->name);
        else
            snprintf(name, sizeof name, "onnx_constant_%d", (int)entry);
        /* The graph shares the entry's bytes: a model's weights are
         * held once while importing. */
        int32_t index;
        dfg_status st = dfg_graph_shared_leaf(
            im->graph, e->is_weight ? DFG_VALUE_WEIGHT : DFG_VALUE_CONSTANT,
            name, &e->type, e->bytes, e->constant, &index);
        if (st != DFG_OK)
            return st;
        e->value = dfg_graph_handle(im->graph, index);
    }
    *out = e->value;
    return DFG_OK;
}

void dfg_onnx_importer_free(dfg_onnx_importer *im)
{
    for (int32_t i = 0; i < im->n_entries; i++)
        dfg_shared_bytes_release(im->entries[i].bytes);
    dfg_free(&im->allocator, im->entries);
    dfg_name_table_free(&im->names);
    im->entries = NULL;
    im->n_entries = im->capacity = 0;
}
