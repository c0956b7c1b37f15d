#include "ir/graph.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include "util/error.h"
#include "util/memory.h"

static atomic_uint graph_serial_counter = 1;

/* Grows *array (of elem bytes) so it can hold `need` elements. */
static int reserve(dfg_graph *graph, void **array, int32_t *capacity,
                   int32_t need, size_t elem)
{
    if (need <= *capacity)
        return 0;
    if (need > INT32_MAX / 2)
        return -1;
    int32_t cap = *capacity ? *capacity : 16;
    while (cap < need)
        cap *= 2;
    /* Not zeroed: an entry is written whole before it is counted. */
    void *grown = dfg_realloc(&graph->allocator, *array,
                              (size_t)*capacity * elem, (size_t)cap * elem);
    if (!grown)
        return -1;
    *array = grown;
    *capacity = cap;
    return 0;
}

dfg_status dfg_graph_create(const dfg_allocator *allocator, dfg_graph **out)
{
    if (!out)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "dfg_graph_create: out is NULL");
    *out = NULL;
    if (allocator && (!allocator->alloc || !allocator->free))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_graph_create: allocator without alloc or free");
    dfg_allocator a = dfg_allocator_or_default(allocator);
    dfg_graph *graph = dfg_calloc(&a, 1, sizeof *graph);
    if (!graph)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "dfg_graph_create: out of memory");
    graph->allocator = a;
    graph->serial = atomic_fetch_add(&graph_serial_counter, 1);
    dfg_name_table_init(&graph->value_names, &graph->allocator);
    dfg_name_table_init(&graph->node_names, &graph->allocator);
    *out = graph;
    return DFG_OK;
}

void dfg_graph_destroy(dfg_graph *graph)
{
    if (!graph)
        return;
    const dfg_allocator *a = &graph->allocator;
    for (int32_t i = 0; i < graph->n_values; i++) {
        dfg_free(a, graph->values[i].name);
        dfg_shared_bytes_release(graph->values[i].data_owner);
    }
    for (int32_t i = 0; i < graph->n_nodes; i++) {
        dfg_free(a, graph->nodes[i].name);
        dfg_free(a, graph->nodes[i].inputs);
        dfg_free(a, graph->nodes[i].outputs);
    }
    dfg_free(a, graph->values);
    dfg_free(a, graph->nodes);
    dfg_free(a, graph->outputs);
    dfg_name_table_free(&graph->value_names);
    dfg_name_table_free(&graph->node_names);
    dfg_allocator copy = graph->allocator;
    dfg_free(&copy, graph);
}

dfg_value dfg_graph_handle(const dfg_graph *graph, int32_t index)
{
    return ((dfg_value)graph->serial << 32) | (dfg_value)(uint32_t)(index + 1);
}

int32_t dfg_graph_index(const dfg_graph *graph, dfg_value value)
{
    if ((uint32_t)(value >> 32) != graph->serial)
        return -1;
    int64_t index = (int64_t)(uint32_t)value - 1;
    if (index < 0 || index >= graph->n_values)
        return -1;
    return (int32_t)index;
}

/* Makes name unique among values by appending _1, _2, ... if taken. */
static char *unique_name(dfg_graph *graph, const dfg_name_table *table,
                         const char *base)
{
    if (dfg_name_table_find(table, base) < 0)
        return dfg_strdup(&graph->allocator, base);
    size_t n = strlen(base) + 16;
    char *name = dfg_alloc(&graph->allocator, n);
    if (!name)
        return NULL;
    for (int64_t i = 1;; i++) {
        snprintf(name, n, "%s_%lld", base, (long long)i);
        if (dfg_name_table_find(table, name) < 0)
            return name;
    }
}

/* Points v at data inside owner (retained), or, without an owner, at a
 * new block holding a copy of data. -1 when out of memory. */
static int set_value_data(dfg_graph *graph, dfg_ir_value *v, const void *data,
                          dfg_shared_bytes *owner)
{
    if (owner) {
        dfg_shared_bytes_retain(owner);
    } else {
        size_t bytes = (size_t)dfg_type_bytes(&v->type);
        owner = dfg_shared_bytes_alloc(&graph->allocator, bytes);
        if (!owner)
            return -1;
        memcpy(dfg_shared_bytes_fill(owner), data, bytes);
        data = dfg_shared_bytes_data(owner);
    }
    dfg_shared_bytes_release(v->data_owner);
    v->data_owner = owner;
    v->data = data;
    return 0;
}

/* Appends a value; returns its index or -1 (out of memory). name is
 * made unique; data (may be NULL) is shared when owner holds it, else
 * copied. */
static int32_t append_value(dfg_graph *graph, const char *name,
                            const dfg_type *type, dfg_value_kind kind,
                            const void *data, dfg_shared_bytes *owner)
{
    if (reserve(graph, (void **)&graph->values, &graph->values_capacity,
                graph->n_values + 1, sizeof *graph->values) != 0)
        return -1;
    dfg_ir_value v = {0};
    v.type = *type;
    v.kind = kind;
    v.producer = -1;
    v.name = graph->scratch ? dfg_strdup(&graph->allocator, name)
                            : unique_name(graph, &graph->value_names, name);
    if (!v.name)
        return -1;
    if (data && set_value_data(graph, &v, data, owner) != 0) {
        dfg_free(&graph->allocator, v.name);
        return -1;
    }
    int32_t index = graph->n_values;
    if (!graph->scratch &&
        dfg_name_table_insert(&graph->value_names, v.name, index) != 0) {
        dfg_free(&graph->allocator, v.name);
        dfg_shared_bytes_release(v.data_owner);
        return -1;
    }
    graph->values[graph->n_values++] = v;
    return index;
}

static dfg_status check_type(const char *what, const char *name,
                             dfg_dtype dtype, int32_t rank,
                             const int64_t *shape, dfg_type *type)
{
    if ((unsigned)dtype >= DFG_DTYPE_COUNT)
        return dfg_error(DFG_ERR_DTYPE, "%s '%s': invalid dtype %d", what,
                         name, (int)dtype);
    if (rank < 0 || rank > DFG_MAX_RANK)
        return dfg_error(DFG_ERR_SHAPE, "%s '%s': rank %d outside 0..%d",
                         what, name, (int)rank, DFG_MAX_RANK);
    if (rank > 0 && !shape)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "%s '%s': shape is NULL",
                         what, name);
    type->dtype = dtype;
    type->rank = rank;
    type->layout = DFG_LAYOUT_PLAIN;
    memset(type->shape, 0, sizeof type->shape);
    for (int32_t i = 0; i < rank; i++) {
        if (shape[i] < 0)
            return dfg_error(DFG_ERR_SHAPE, "%s '%s': dim %d is negative (%lld)",
                             what, name, (int)i, (long long)shape[i]);
        type->shape[i] = shape[i];
    }
    if (dfg_type_bytes(type) < 0)
        return dfg_error(DFG_ERR_OVERFLOW,
                         "%s '%s': element count overflows (limit 2^48)", what,
                         name);
    return DFG_OK;
}

static dfg_status add_leaf(dfg_graph *graph, const char *what,
                           dfg_value_kind kind, const char *name,
                           dfg_dtype dtype, int32_t rank, const int64_t *shape,
                           const void *data, dfg_value *out)
{
    if (!graph || !out || !name)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "%s: graph, name and out must not be NULL", what);
    if (kind != DFG_VALUE_INPUT && !data)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "%s '%s': data is NULL",
                         what, name);
    if (dfg_name_table_find(&graph->value_names, name) >= 0)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "%s '%s': a value of that name exists", what, name);
    dfg_type type;
    dfg_status st = check_type(what, name, dtype, rank, shape, &type);
    if (st != DFG_OK)
        return st;
    int32_t index = append_value(graph, name, &type, kind, data, NULL);
    if (index < 0)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "%s '%s': out of memory",
                         what, name);
    *out = dfg_graph_handle(graph, index);
    return DFG_OK;
}

dfg_status dfg_graph_input(dfg_graph *graph, const char *name, dfg_dtype dtype,
                           int32_t rank, const int64_t *shape, dfg_value *out)
{
    return add_leaf(graph, "input", DFG_VALUE_INPUT, name, dtype, rank, shape,
                    NULL, out);
}

dfg_status dfg_graph_weight(dfg_graph *graph, const char *name, dfg_dtype dtype,
                            int32_t rank, const int64_t *shape,
                            const void *data, dfg_value *out)
{
    return add_leaf(graph, "weight", DFG_VALUE_WEIGHT, name, dtype, rank,
                    shape, data, out);
}

dfg_status dfg_graph_constant(dfg_graph *graph, const char *name,
                              dfg_dtype dtype, int32_t rank,
                              const int64_t *shape, const void *data,
                              dfg_value *out)
{
    return add_leaf(graph, "constant", DFG_VALUE_CONSTANT, name, dtype, rank,
                    shape, data, out);
}

static dfg_status rename_value(dfg_graph *graph, int32_t index,
                               const char *name)
{
    dfg_ir_value *v = &graph->values[index];
    if (strcmp(v->name, name) == 0)
        return DFG_OK;
    if (dfg_name_table_find(&graph->value_names, name) >= 0)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "cannot name value '%s' '%s': the name is taken",
                         v->name, name);
    char *copy = dfg_strdup(&graph->allocator, name);
    if (!copy)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "rename: out of memory");
    dfg_name_table_remove(&graph->value_names, v->name);
    if (dfg_name_table_insert(&graph->value_names, copy, index) != 0) {
        dfg_name_table_insert(&graph->value_names, v->name, index);
        dfg_free(&graph->allocator, copy);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "rename: out of memory");
    }
    dfg_free(&graph->allocator, v->name);
    v->name = copy;
    return DFG_OK;
}

/* The index of value in graph, else an error naming the caller fn. */
static dfg_status value_index(const dfg_graph *graph, dfg_value value,
                              const char *fn, int32_t *index)
{
    *index = dfg_graph_index(graph, value);
    if (*index < 0)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "%s: value does not belong to this graph", fn);
    return DFG_OK;
}

dfg_status dfg_graph_set_name(dfg_graph *graph, dfg_value value,
                              const char *name)
{
    if (!graph || !name)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_graph_set_name: graph or name is NULL");
    int32_t index;
    dfg_status found = value_index(graph, value, "dfg_graph_set_name", &index);
    if (found != DFG_OK)
        return found;
    return rename_value(graph, index, name);
}

dfg_status dfg_graph_output(dfg_graph *graph, dfg_value value, const char *name)
{
    if (!graph)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "dfg_graph_output: graph is NULL");
    int32_t index;
    dfg_status found = value_index(graph, value, "dfg_graph_output", &index);
    if (found != DFG_OK)
        return found;
    if (graph->values[index].is_output)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_graph_output: '%s' is already an output",
                         graph->values[index].name);
    if (name) {
        dfg_status st = rename_value(graph, index, name);
        if (st != DFG_OK)
            return st;
    }
    if (reserve(graph, (void **)&graph->outputs, &graph->outputs_capacity,
                graph->n_outputs + 1, sizeof *graph->outputs) != 0)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "dfg_graph_output: out of memory");
    graph->outputs[graph->n_outputs++] = index;
    graph->values[index].is_output = 1;
    return DFG_OK;
}

dfg_status dfg_graph_value_info(const dfg_graph *graph, dfg_value value,
                                dfg_tensor_info *out)
{
    if (!graph || !out)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_graph_value_info: graph or out is NULL");
    int32_t index;
    dfg_status found = value_index(graph, value, "dfg_graph_value_info", &index);
    if (found != DFG_OK)
        return found;
    const dfg_ir_value *v = &graph->values[index];
    out->name = v->name;
    out->dtype = v->type.dtype;
    out->rank = v->type.rank;
    memcpy(out->shape, v->type.shape, sizeof out->shape);
    return DFG_OK;
}

int32_t dfg_graph_num_nodes(const dfg_graph *graph) { return graph ? graph->n_nodes : 0; }
int32_t dfg_graph_num_values(const dfg_graph *graph) { return graph ? graph->n_values : 0; }

/* "[1,3,8,8] f32, [4,3,3,3] f32" for the message of a failed op, in buf
 * (returned): made only when a message needs it, as every node added
 * would otherwise format its operands. */
static const char *format_operands(const dfg_graph *graph,
                                   const int32_t *inputs, int32_t n_inputs,
                                   char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int32_t i = 0; i < n_inputs && used + 1 < size; i++) {
        char one[160];
        if (inputs[i] < 0)
            snprintf(one, sizeof one, "(absent)");
        else
            dfg_type_format(&graph->values[inputs[i]].type, one, sizeof one);
        used += (size_t)snprintf(buf + used, size - used, "%s%s",
                                 i ? ", " : "", one);
    }
    return buf;
}

dfg_status dfg_graph_add_node(dfg_graph *graph, dfg_op op,
                              const char *node_name, const int32_t *inputs,
                              int32_t n_inputs, const dfg_attrs *attrs,
                              int32_t n_outputs, int32_t *out_indices)
{
    const dfg_op_info *info = dfg_op_get(op);
    char generated[64];
    if (!node_name) {
        snprintf(generated, sizeof generated, "%s_%d", info->name,
                 (int)graph->n_nodes);
        node_name = generated;
    }
    if (!graph->scratch &&
        dfg_name_table_find(&graph->node_names, node_name) >= 0)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "node '%s' (%s): a node of that name exists",
                         node_name, info->name);
    if (n_inputs < info->min_inputs ||
        (info->max_inputs >= 0 && n_inputs > info->max_inputs))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "node '%s' (%s): %d inputs given, expects %d to %d",
                         node_name, info->name, (int)n_inputs,
                         (int)info->min_inputs, (int)info->max_inputs);
    int32_t want_outputs = info->outputs;
    if (want_outputs == 0 ? (n_outputs < 1 || n_outputs > DFG_MAX_SPLIT)
                          : n_outputs != want_outputs)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "node '%s' (%s): %d outputs requested, expects %d",
                         node_name, info->name, (int)n_outputs,
                         want_outputs ? (int)want_outputs : DFG_MAX_SPLIT);
    for (int32_t i = 0; i < info->min_inputs; i++)
        if (inputs[i] < 0)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "node '%s' (%s): required input %d is absent",
                             node_name, info->name, (int)i);

    char operands[1024]; /* formatted for a failure's message only */
    if (!(info->input0_types & (1u << graph->values[inputs[0]].type.dtype)))
        return dfg_error(DFG_ERR_DTYPE,
                         "node '%s' (%s): input 0 has dtype %s, which the op "
                         "does not accept (inputs: %s)",
                         node_name, info->name,
                         dfg_dtype_name(graph->values[inputs[0]].type.dtype),
                         format_operands(graph, inputs, n_inputs, operands,
                                         sizeof operands));

    dfg_attrs defaults;
    if (!attrs) {
        dfg_attrs_init(&defaults);
        attrs = &defaults;
    }
    dfg_type in_types[64], *in = in_types;
    dfg_type out_types[DFG_MAX_SPLIT];
    if (n_inputs > 64) {
        in = dfg_calloc(&graph->allocator, (size_t)n_inputs, sizeof *in);
        if (!in)
            return dfg_error(DFG_ERR_OUT_OF_MEMORY, "node '%s': out of memory",
                             node_name);
    }
    for (int32_t i = 0; i < n_inputs; i++) {
        if (inputs[i] < 0) {
            memset(&in[i], 0, sizeof in[i]);
            in[i].rank = -1;
        } else {
            in[i] = graph->values[inputs[i]].type;
        }
    }
    memset(out_types, 0, sizeof out_types);
    dfg_status st = info->shape(attrs, in, n_inputs, out_types, n_outputs);
    if (in != in_types)
        dfg_free(&graph->allocator, in);
    if (st != DFG_OK)
        return dfg_error_prefix(st, "node '%s' (%s) with inputs %s",
                                node_name, info->name,
                                format_operands(graph, inputs, n_inputs,
                                                operands, sizeof operands));
    for (int32_t i = 0; i < n_outputs; i++) {
        if (out_types[i].rank < 0 || out_types[i].rank > DFG_MAX_RANK ||
            dfg_type_bytes(&out_types[i]) < 0)
            return dfg_error(DFG_ERR_OVERFLOW,
                             "node '%s' (%s) with inputs %s: output %d has an "
                             "invalid rank or more than 2^48 elements",
                             node_name, info->name,
                             format_operands(graph, inputs, n_inputs,
                                             operands, sizeof operands),
                             (int)i);
    }

    /* Everything is checked; from here on only allocation can fail. */
    if (reserve(graph, (void **)&graph->nodes, &graph->nodes_capacity,
                graph->n_nodes + 1, sizeof *graph->nodes) != 0)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "node '%s': out of memory", node_name);
    dfg_ir_node node = {0};
    node.op = op;
    node.attrs = *attrs;
    node.n_inputs = n_inputs;
    node.n_outputs = n_outputs;
    node.name = dfg_strdup(&graph->allocator, node_name);
    node.inputs = dfg_calloc(&graph->allocator, (size_t)(n_inputs ? n_inputs : 1),
                             sizeof *node.inputs);
    node.outputs = dfg_calloc(&graph->allocator, (size_t)n_outputs,
                              sizeof *node.outputs);
    int32_t first_value = graph->n_values;
    int ok = node.name && node.inputs && node.outputs &&
             (graph->scratch ||
              dfg_name_table_insert(&graph->node_names, node.name,
                                    graph->n_nodes) == 0);
    for (int32_t i = 0; ok && i < n_outputs; i++) {
        char value_name[300];
        if (n_outputs > 1)
            snprintf(value_name, sizeof value_name, "%s:%d", node_name, (int)i);
        int32_t index = append_value(graph,
                                     n_outputs == 1 ? node_name : value_name,
                                     &out_types[i],
                                     DFG_VALUE_NODE_OUTPUT, NULL, NULL);
        if (index < 0) {
            ok = 0;
            break;
        }
        graph->values[index].producer = graph->n_nodes;
        graph->values[index].producer_output = i;
        node.outputs[i] = index;
    }
    if (!ok) {
        while (graph->n_values > first_value) {
            dfg_ir_value *v = &graph->values[--graph->n_values];
            dfg_name_table_remove(&graph->value_names, v->name);
            dfg_free(&graph->allocator, v->name);
        }
        if (node.name)
            dfg_name_table_remove(&graph->node_names, node.name);
        dfg_free(&graph->allocator, node.name);
        dfg_free(&graph->allocator, node.inputs);
        dfg_free(&graph->allocator, node.outputs);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "node '%s': out of memory", node_name);
    }
    memcpy(node.inputs, inputs, (size_t)n_inputs * sizeof *inputs);
    graph->nodes[graph->n_nodes++] = node;
    memcpy(out_indices, node.outputs, (size_t)n_outputs * sizeof *out_indices);
    return DFG_OK;
}

dfg_status dfg_graph_node(dfg_graph *graph, const char *op,
                          const char *node_name, const dfg_value *inputs,
                          int32_t n_inputs, const dfg_attrs *attrs,
                          dfg_value *outputs, int32_t n_outputs)
{
    if (!graph || !op || !outputs || (n_inputs > 0 && !inputs))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_graph_node(%s): graph, op, inputs and outputs "
                         "must not be NULL", op ? op : "NULL");
    dfg_op kind;
    if (dfg_op_from_name(op, &kind) != 0)
        return dfg_error(DFG_ERR_UNSUPPORTED, "node '%s': unknown op '%s'",
                         node_name ? node_name : "?", op);
    if (n_inputs < 0 || n_inputs > 100000 || n_outputs < 0 ||
        n_outputs > DFG_MAX_SPLIT)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "node '%s' (%s): %d inputs, %d outputs out of range",
                         node_name ? node_name : "?", op, (int)n_inputs,
                         (int)n_outputs);
    int32_t small[64], *indices = small;
    if (n_inputs > 64) {
        indices = dfg_calloc(&graph->allocator, (size_t)n_inputs, sizeof *indices);
        if (!indices)
            return dfg_error(DFG_ERR_OUT_OF_MEMORY, "node: out of memory");
    }
    dfg_status st = DFG_OK;
    for (int32_t i = 0; i < n_inputs; i++) {
        if (inputs[i] == DFG_NO_VALUE) {
            indices[i] = -1;
            continue;
        }
        indices[i] = dfg_graph_index(graph, inputs[i]);
        if (indices[i] < 0) {
            st = dfg_error(DFG_ERR_INVALID_ARGUMENT,
                           "node '%s' (%s): input %d is not a value of this "
                           "graph (from another graph, or invalid)",
                           node_name ? node_name : "?", op, (int)i);
            break;
        }
    }
    int32_t out_indices[DFG_MAX_SPLIT];
    if (st == DFG_OK)
        st = dfg_graph_add_node(graph, kind, node_name, indices, n_inputs,
                                attrs, n_outputs, out_indices);
    if (indices != small)
        dfg_free(&graph->allocator, indices);
    if (st == DFG_OK)
        for (int32_t i = 0; i < n_outputs; i++)
            outputs[i] = dfg_graph_handle(graph, out_indices[i]);
    return st;
}

dfg_status dfg_graph_set_constant(dfg_graph *graph, int32_t value,
                                  const void *data)
{
    dfg_ir_value *v = &graph->values[value];
    if (set_value_data(graph, v, data, NULL) != 0)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "constant '%s': out of memory",
                         v->name);
    v->kind = DFG_VALUE_CONSTANT;
    v->producer = -1;
    return DFG_OK;
}

dfg_status dfg_graph_shared_leaf(dfg_graph *graph, dfg_value_kind kind,
                                 const char *name, const dfg_type *type,
                                 dfg_shared_bytes *owner, const void *data,
                                 int32_t *out_index)
{
    if (dfg_name_table_find(&graph->value_names, name) >= 0)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "'%s': a value of that name exists", name);
    dfg_type plain = *type; /* a leaf is plain, whatever the caller left */
    plain.layout = DFG_LAYOUT_PLAIN;
    *out_index = append_value(graph, name, &plain, kind, data, owner);
    if (*out_index < 0)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "'%s': out of memory", name);
    return DFG_OK;
}

int dfg_graph_reserve(dfg_graph *graph, int32_t n_nodes, int32_t n_values)
{
    if (reserve(graph, (void **)&graph->nodes, &graph->nodes_capacity,
                n_nodes, sizeof *graph->nodes) != 0)
        return -1;
    return reserve(graph, (void **)&graph->values, &graph->values_capacity,
                   n_values, sizeof *graph->values);
}

static const char *value_name_of(const void *graph, int32_t v)
{
    return ((const dfg_graph *)graph)->values[v].name;
}

static const char *node_name_of(const void *graph, int32_t n)
{
    return ((const dfg_graph *)graph)->nodes[n].name;
}

static dfg_status clone(const dfg_graph *graph,
                        const dfg_allocator *allocator, int scratch,
                        dfg_graph **out)
{
    dfg_graph *copy;
    dfg_status st = dfg_graph_create(allocator, &copy);
    if (st != DFG_OK)
        return st;
    copy->scratch = scratch || graph->scratch;
    if (dfg_graph_reserve(copy, graph->n_nodes, graph->n_values) != 0)
        goto oom;
    copy->serial = graph->serial; /* handles of the original stay valid */
    /* Values and nodes keep their names and indices: the name tables are
     * copied slot for slot (a clone hashes no name). */
    for (int32_t i = 0; i < graph->n_values; i++) {
        const dfg_ir_value *v = &graph->values[i];
        dfg_ir_value *dst = &copy->values[copy->n_values];
        *dst = *v;
        dst->data = NULL;
        dst->data_owner = NULL;
        dst->name = dfg_strdup(&copy->allocator, v->name);
        if (!dst->name)
            goto oom;
        if (v->data &&
            set_value_data(copy, dst, v->data, v->data_owner) != 0) {
            dfg_free(&copy->allocator, dst->name);
            goto oom;
        }
        copy->n_values++;
    }
    for (int32_t n = 0; n < graph->n_nodes; n++) {
        const dfg_ir_node *src = &graph->nodes[n];
        dfg_ir_node *dst = &copy->nodes[copy->n_nodes];
        *dst = *src;
        dst->name = dfg_strdup(&copy->allocator, src->name);
        dst->inputs = dfg_calloc(&copy->allocator,
                                 (size_t)(src->n_inputs ? src->n_inputs : 1),
                                 sizeof *dst->inputs);
        dst->outputs = dfg_calloc(&copy->allocator, (size_t)src->n_outputs,
                                  sizeof *dst->outputs);
        copy->n_nodes++;
        if (!dst->name || !dst->inputs || !dst->outputs)
            goto oom;
        memcpy(dst->inputs, src->inputs, (size_t)src->n_inputs * sizeof *src->inputs);
        memcpy(dst->outputs, src->outputs, (size_t)src->n_outputs * sizeof *src->outputs);
    }
    if (!copy->scratch &&
        (dfg_name_table_copy(&copy->value_names, &graph->value_names,
                             value_name_of, copy) != 0 ||
         dfg_name_table_copy(&copy->node_names, &graph->node_names,
                             node_name_of, copy) != 0))
        goto oom;
    if (graph->n_outputs &&
        reserve(copy, (void **)&copy->outputs, &copy->outputs_capacity,
                graph->n_outputs, sizeof *copy->outputs) != 0)
        goto oom;
    if (graph->n_outputs)
        memcpy(copy->outputs, graph->outputs,
               (size_t)graph->n_outputs * sizeof *graph->outputs);
    copy->n_outputs = graph->n_outputs;
    *out = copy;
    return DFG_OK;
oom:
    dfg_graph_destroy(copy);
    return dfg_error(DFG_ERR_OUT_OF_MEMORY, "clone: out of memory");
}

dfg_status dfg_graph_clone(const dfg_graph *graph,
                           const dfg_allocator *allocator, dfg_graph **out)
{
    return clone(graph, allocator, 0, out);
}

dfg_status dfg_graph_clone_scratch(const dfg_graph *graph,
                                   const dfg_allocator *allocator,
                                   dfg_graph **out)
{
    return clone(graph, allocator, 1, out);
}
