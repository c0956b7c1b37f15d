/* The importer's value table: ONNX names -> entries, constants kept on the
 * host until a graph node reads them. */
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "graph.h"
#include "memory.h"
#include "onnx_import.h"

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
    dfg_status st = dfg_onnx_add_entry(im, name, out);
    if (st != DFG_OK) {
        dfg_free(&im->allocator, data);
        return st;
    }
    im->entries[*out].type = *type;
    im->entries[*out].constant = data;
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

dfg_status dfg_onnx_materialise(dfg_onnx_importer *im, int32_t entry,
                                dfg_value *out)
{
    dfg_onnx_entry *e = &im->entries[entry];
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
        dfg_status st =
            e->is_weight
                ? dfg_graph_weight(im->graph, name, e->type.dtype, e->type.rank,
                                   e->type.shape, e->constant, &e->value)
                : dfg_graph_constant(im->graph, name, e->type.dtype,
                                     e->type.rank, e->type.shape, e->constant,
                                     &e->value);
        if (st != DFG_OK)
            return st;
        /* The graph holds a copy now: read that one from here on, so that
         * a model's weights are not held twice while importing. */
        const dfg_ir_value *v =
            &im->graph->values[dfg_graph_index(im->graph, e->value)];
        dfg_free(&im->allocator, e->constant);
        e->constant = (void *)v->data; /* read only from here on */
        e->borrowed = 1;
    }
    *out = e->value;
    return DFG_OK;
}

void dfg_onnx_importer_free(dfg_onnx_importer *im)
{
    for (int32_t i = 0; i < im->n_entries; i++)
        if (!im->entries[i].borrowed)
            dfg_free(&im->allocator, im->entries[i].constant);
    dfg_free(&im->allocator, im->entries);
    dfg_name_table_free(&im->names);
    im->entries = NULL;
    im->n_entries = im->capacity = 0;
}
