/* The graph verifier: the passes after it assume a well-formed graph, so
 * every structural fact they rely on is checked here once, with a message
 * naming the node and op. The builder already enforces most of this; the
 * verifier guards against graphs changed by passes or front ends. */
#include "passes/pass.h"

#include <string.h>
#include "util/error.h"
#include "util/memory.h"

/* 1 if value v may be read by node n: a leaf, or an output of an earlier
 * live node. */
static int readable_by(const dfg_graph *graph, int32_t v, int32_t n)
{
    const dfg_ir_value *value = &graph->values[v];
    if (value->producer < 0)
        return value->kind != DFG_VALUE_NODE_OUTPUT;
    if (value->producer >= n)
        return 0;
    const dfg_ir_node *producer = &graph->nodes[value->producer];
    return !producer->dead && value->producer_output >= 0 &&
           value->producer_output < producer->n_outputs &&
           producer->outputs[value->producer_output] == v;
}

static dfg_status check_leaf(const dfg_graph *graph, int32_t v)
{
    const dfg_ir_value *value = &graph->values[v];
    if (dfg_type_bytes(&value->type) < 0)
        return dfg_error(DFG_ERR_SHAPE, "value '%s': invalid type", value->name);
    if ((value->kind == DFG_VALUE_WEIGHT || value->kind == DFG_VALUE_CONSTANT) &&
        !value->data)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "value '%s': a weight or constant without data",
                         value->name);
    return DFG_OK;
}

static dfg_status check_inputs(const dfg_graph *graph, int32_t n)
{
    const dfg_ir_node *node = &graph->nodes[n];
    const dfg_op_info *info = dfg_op_get(node->op);
    if (node->n_inputs < info->min_inputs ||
        (info->max_inputs >= 0 && node->n_inputs > info->max_inputs))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "node '%s' (%s): %d inputs, expects %d to %d",
                         node->name, info->name, (int)node->n_inputs,
                         (int)info->min_inputs, (int)info->max_inputs);
    for (int32_t i = 0; i < node->n_inputs; i++) {
        int32_t v = node->inputs[i];
        if (v < 0) {
            if (i < info->min_inputs)
                return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                                 "node '%s' (%s): required input %d is absent",
                                 node->name, info->name, (int)i);
            continue;
        }
        if (v >= graph->n_values)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "node '%s' (%s): input %d refers to value %d, "
                             "which does not exist", node->name, info->name,
                             (int)i, (int)v);
        if (!readable_by(graph, v, n))
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "node '%s' (%s): input %d ('%s') is not produced "
                             "by an earlier live node", node->name, info->name,
                             (int)i, graph->values[v].name);
        dfg_status st = check_leaf(graph, v);
        if (st != DFG_OK)
            return dfg_error_prefix(st, "node '%s' (%s) input %d", node->name,
                                    info->name, (int)i);
    }
    return DFG_OK;
}

static dfg_status check_outputs(const dfg_graph *graph, int32_t n)
{
    const dfg_ir_node *node = &graph->nodes[n];
    const dfg_op_info *info = dfg_op_get(node->op);
    if (node->n_outputs < 1 || node->n_outputs > DFG_MAX_SPLIT ||
        (info->outputs != 0 && node->n_outputs != info->outputs))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "node '%s' (%s): %d outputs", node->name, info->name,
                         (int)node->n_outputs);
    for (int32_t i = 0; i < node->n_outputs; i++) {
        int32_t v = node->outputs[i];
        /* A folded output is a constant now; its node is dead, not here. */
        if (v < 0 || v >= graph->n_values || graph->values[v].producer != n ||
            graph->values[v].producer_output != i)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "node '%s' (%s): output %d is not a value it "
                             "produces", node->name, info->name, (int)i);
    }
    return DFG_OK;
}

/* Re-runs the shape rule: the recorded output types must come back. */
static dfg_status check_shapes(const dfg_graph *graph, int32_t n)
{
    const dfg_ir_node *node = &graph->nodes[n];
    const dfg_op_info *info = dfg_op_get(node->op);
    dfg_type *types = dfg_node_types(graph, n, &graph->allocator);
    if (!types)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "verify: out of memory");
    dfg_type inferred[DFG_MAX_SPLIT];
    memset(inferred, 0, sizeof inferred);
    dfg_status st = info->shape(&node->attrs, types, node->n_inputs, inferred,
                                node->n_outputs);
    if (st != DFG_OK) {
        dfg_free(&graph->allocator, types);
        return dfg_error_prefix(st, "node '%s' (%s)", node->name, info->name);
    }
    for (int32_t i = 0; i < node->n_outputs && st == DFG_OK; i++) {
        const dfg_type *recorded = &types[node->n_inputs + i];
        if (!dfg_type_equal(&inferred[i], recorded)) {
            char want[160], have[160];
            st = dfg_error(DFG_ERR_SHAPE,
                           "node '%s' (%s): output %d is recorded as %s but "
                           "its shape rule gives %s", node->name, info->name,
                           (int)i, dfg_type_format(recorded, have, sizeof have),
                           dfg_type_format(&inferred[i], want, sizeof want));
        }
    }
    dfg_free(&graph->allocator, types);
    return st;
}

static dfg_status check_graph_outputs(const dfg_graph *graph)
{
    if (graph->n_outputs < 1)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "the graph has no outputs: mark at least one value "
                         "with dfg_graph_output");
    for (int32_t i = 0; i < graph->n_outputs; i++) {
        int32_t v = graph->outputs[i];
        if (v < 0 || v >= graph->n_values)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "graph output %d refers to value %d, which does "
                             "not exist", (int)i, (int)v);
        if (!readable_by(graph, v, graph->n_nodes))
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "graph output %d ('%s') is not produced by a live "
                             "node", (int)i, graph->values[v].name);
        dfg_status st = check_leaf(graph, v);
        if (st != DFG_OK)
            return dfg_error_prefix(st, "graph output %d", (int)i);
    }
    return DFG_OK;
}

dfg_status dfg_pass_verify(const dfg_graph *graph, dfg_pass_report *report)
{
    memset(report, 0, sizeof *report);
    report->pass = "verify";
    for (int32_t n = 0; n < graph->n_nodes; n++) {
        const dfg_ir_node *node = &graph->nodes[n];
        if (node->dead)
            continue;
        if (!dfg_op_get(node->op))
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "node '%s': invalid op %d", node->name,
                             (int)node->op);
        dfg_status st = check_inputs(graph, n);
        if (st == DFG_OK)
            st = check_outputs(graph, n);
        if (st == DFG_OK)
            st = check_shapes(graph, n);
        if (st != DFG_OK)
            return st;
    }
    return check_graph_outputs(graph);
}
