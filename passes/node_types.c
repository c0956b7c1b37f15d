/* Operand types of a node, and the op-table rules evaluated on them. */
#include "pass.h"

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
