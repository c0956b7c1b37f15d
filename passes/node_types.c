/* Operand types of a node, and the op-table rules evaluated on them:
 * once per node and compilation (dfg_node_costs). */
#include "pass.h"

#include "error.h"
#include "memory.h"

dfg_type *dfg_node_types(const dfg_graph *graph, int32_t node,
                         const dfg_allocator *allocator)
{
    const dfg_ir_node *n = &graph->nodes[node];
    dfg_type *types = dfg_calloc(allocator, (size_t)n->n_inputs + (size_t)n->n_outputs,
                                 sizeof *types);
    if (!types)
        return NULL;
    for (int32_t i = 0; i < n->n_inputs; i++) {
        if (n->inputs[i] < 0)
            types[i].rank = -1;
        else
            types[i] = graph->values[n->inputs[i]].type;
    }
    for (int32_t i = 0; i < n->n_outputs; i++)
        types[n->n_inputs + i] = graph->values[n->outputs[i]].type;
    return types;
}

int64_t dfg_node_workspace_bytes(const dfg_graph *graph, int32_t node,
                                 const dfg_type *types)
{
    const dfg_ir_node *n = &graph->nodes[node];
    const dfg_op_info *info = dfg_op_get(n->op);
    if (!info->workspace)
        return 0;
    int64_t bytes = info->workspace(&n->attrs, types, n->n_inputs,
                                    types + n->n_inputs, n->n_outputs);
    return bytes > 0 ? bytes : 0;
}

int64_t dfg_node_flops(const dfg_graph *graph, int32_t node,
                       const dfg_type *types)
{
    const dfg_ir_node *n = &graph->nodes[node];
    const dfg_op_info *info = dfg_op_get(n->op);
    return info->flops(&n->attrs, types, n->n_inputs, types + n->n_inputs,
                       n->n_outputs);
}

void dfg_node_costs_free(dfg_node_costs *costs, const dfg_allocator *allocator)
{
    dfg_free(allocator, costs->workspace);
    dfg_free(allocator, costs->flops);
    costs->workspace = NULL;
    costs->flops = NULL;
}

dfg_status dfg_node_costs_build(const dfg_graph *graph,
                                int64_t blas_workspace_bytes,
                                const dfg_allocator *allocator,
                                dfg_node_costs *out)
{
    size_t nodes = (size_t)graph->n_nodes + 1;
    out->workspace = dfg_calloc(allocator, nodes, sizeof *out->workspace);
    out->flops = dfg_calloc(allocator, nodes, sizeof *out->flops);
    int ok = out->workspace && out->flops;
    for (int32_t n = 0; ok && n < graph->n_nodes; n++) {
        if (graph->nodes[n].dead)
            continue;
        dfg_type *types = dfg_node_types(graph, n, allocator);
        ok = types != NULL;
        if (!ok)
            break;
        out->workspace[n] = dfg_step_workspace_bytes(
            graph->nodes[n].op, dfg_node_workspace_bytes(graph, n, types),
            blas_workspace_bytes);
        out->flops[n] = dfg_node_flops(graph, n, types);
        dfg_free(allocator, types);
    }
    if (ok)
        return DFG_OK;
    dfg_node_costs_free(out, allocator);
    return dfg_error(DFG_ERR_OUT_OF_MEMORY, "node costs: out of memory");
}
