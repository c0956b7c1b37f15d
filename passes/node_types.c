/* Operand types of a node, and the op-table rules evaluated on them:
 * once per node and compilation (dfg_node_costs). */
#include "passes/pass.h"

#include "runtime/cpu_workspace_rule.h"
#include "util/error.h"
#include "util/memory.h"

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
    dfg_free(allocator, costs->workspace_least);
    dfg_free(allocator, costs->workspace_own);
    dfg_free(allocator, costs->in_place_workspace);
    dfg_free(allocator, costs->library_workspace);
    costs->in_place_workspace = NULL;
    costs->library_workspace = NULL;
    costs->workspace = NULL;
    costs->flops = NULL;
    costs->workspace_least = NULL;
    costs->workspace_own = NULL;
}

/* The workspace node n's step runs its backend's library with, by the
 * backend's rule (0: none); -1 where the library does not run it: no
 * rule, the rule's -1, or more scratch past the op's bytes than
 * DFG_MAX_BLAS_WORKSPACE (not planned: the backend then runs its
 * reference kernel). */
static int64_t rule_workspace(const dfg_graph *graph, int32_t n,
                              const dfg_type *types, int64_t op_bytes,
                              dfg_backend_workspace_fn rule)
{
    const dfg_ir_node *node = &graph->nodes[n];
    if (!rule || !dfg_op_uses_blas(node->op))
        return -1;
    int64_t bytes = rule((int32_t)node->op, &node->attrs, types,
                         node->n_inputs, types + node->n_inputs,
                         node->n_outputs);
    return bytes - dfg_align_up(op_bytes, 256) >
                   (int64_t)DFG_MAX_BLAS_WORKSPACE
               ? -1
               : bytes;
}

/* Scratch planned past the op's own: the device BLAS's
 * (blas_workspace_bytes) or what the library's workspace (library_bytes,
 * -1: none) needs beyond the op's bytes, whichever is larger; the backend
 * uses the whole workspace. */
static int64_t backend_scratch(int64_t op_bytes, int64_t blas_workspace_bytes,
                               int64_t library_bytes)
{
    int64_t wanted = library_bytes - dfg_align_up(op_bytes, 256);
    /* A library needing more than the op's bytes, but not past their
     * 256-byte boundary, gets one byte past it: the whole workspace then
     * holds what it needs. */
    if (library_bytes > op_bytes && wanted <= 0)
        wanted = 1;
    return wanted > blas_workspace_bytes ? wanted : blas_workspace_bytes;
}

dfg_status dfg_node_costs_build(const dfg_graph *graph,
                                int64_t blas_workspace_bytes,
                                dfg_backend_workspace_fn backend_workspace,
                                const dfg_allocator *allocator,
                                dfg_node_costs *out)
{
    size_t nodes = (size_t)graph->n_nodes + 1;
    out->workspace = dfg_calloc(allocator, nodes, sizeof *out->workspace);
    out->flops = dfg_calloc(allocator, nodes, sizeof *out->flops);
    out->workspace_least = dfg_calloc(allocator, nodes,
                                      sizeof *out->workspace_least);
    out->workspace_own = dfg_calloc(allocator, nodes,
                                    sizeof *out->workspace_own);
    out->in_place_workspace = dfg_calloc(allocator, nodes,
                                         sizeof *out->in_place_workspace);
    out->library_workspace = dfg_calloc(allocator, nodes,
                                        sizeof *out->library_workspace);
    int ok = out->workspace && out->flops && out->workspace_least &&
             out->workspace_own && out->in_place_workspace &&
             out->library_workspace;
    for (int32_t n = 0; ok && n < graph->n_nodes; n++) {
        if (graph->nodes[n].dead)
            continue;
        dfg_type *types = dfg_node_types(graph, n, allocator);
        ok = types != NULL;
        if (!ok)
            break;
        int64_t op_bytes = dfg_node_workspace_bytes(graph, n, types);
        int64_t library = rule_workspace(graph, n, types, op_bytes,
                                         backend_workspace);
        out->workspace[n] = dfg_step_workspace_bytes(
            graph->nodes[n].op, op_bytes,
            backend_scratch(op_bytes, blas_workspace_bytes, library));
        out->library_workspace[n] = library >= 0 ? out->workspace[n] : -1;
        out->workspace_least[n] = out->workspace[n];
        out->workspace_own[n] = -1;
        out->in_place_workspace[n] = -1;
        out->flops[n] = dfg_node_flops(graph, n, types);
        dfg_free(allocator, types);
    }
    if (ok)
        return DFG_OK;
    dfg_node_costs_free(out, allocator);
    return dfg_error(DFG_ERR_OUT_OF_MEMORY, "node costs: out of memory");
}

/* Under prefer_memory, a step its backend's library runs, or whose
 * workspace holds device BLAS scratch past the op's own bytes, plans from
 * the op's least and records the op's own full workspace. */
static void without_scratch(const dfg_ir_node *node, const dfg_type *types,
                            int64_t own, int32_t n, dfg_node_costs *costs)
{
    int64_t least = dfg_op_least_workspace(node->op, &node->attrs, types,
                                           node->n_inputs,
                                           types + node->n_inputs,
                                           node->n_outputs);
    if (least < 0 || least > own)
        least = own;
    costs->workspace_least[n] = least;
    costs->workspace_own[n] = own;
}

/* Under prefer_memory, a step with blocked operands (only the backend's
 * library runs it) plans from the least scratch its library runs it in
 * (least_rule's), where that is below its workspace: it takes the whole
 * workspace only where it fits under the bound. */
static void library_least(const dfg_graph *graph, int32_t n,
                          const dfg_type *types,
                          dfg_backend_workspace_fn least_rule,
                          dfg_node_costs *costs)
{
    int64_t op_bytes = dfg_node_workspace_bytes(graph, n, types);
    int64_t library = rule_workspace(graph, n, types, op_bytes, least_rule);
    if (library < 0)
        return;
    int64_t least = dfg_step_workspace_bytes(
        graph->nodes[n].op, op_bytes, backend_scratch(op_bytes, 0, library));
    if (least >= costs->workspace[n])
        return;
    costs->workspace_least[n] = least;
    costs->workspace_own[n] = least;
    costs->library_workspace[n] = least;
}

dfg_status dfg_node_costs_fit_convs(const dfg_graph *graph, int prefer_memory,
                                    dfg_backend_workspace_fn least_rule,
                                    const dfg_allocator *allocator,
                                    dfg_node_costs *costs)
{
    for (int32_t n = 0; n < graph->n_nodes; n++) {
        const dfg_ir_node *node = &graph->nodes[n];
        if (node->dead ||
            (costs->workspace[n] <= 0 && costs->library_workspace[n] < 0))
            continue;
        dfg_type *types = dfg_node_types(graph, n, allocator);
        if (!types)
            return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                             "node costs: out of memory");
        /* A step holding a backend's scratch past the op's own keeps it
         * all: the backend finds its scratch after the op's full bytes. So
         * does one with blocked operands, which only oneDNN runs. */
        int blocked = 0;
        for (int32_t i = 0; i < node->n_inputs + node->n_outputs; i++)
            blocked |= types[i].layout != DFG_LAYOUT_PLAIN;
        int64_t own = dfg_node_workspace_bytes(graph, n, types);
        if (!blocked && prefer_memory &&
            (own < costs->workspace[n] || costs->library_workspace[n] >= 0))
            without_scratch(node, types, own, n, costs);
        else if (blocked && prefer_memory &&
                 !(prefer_memory == DFG_PREFER_MEMORY_PRODUCTS &&
                   dfg_cpu_step_winograd_bytes(
                       node->op, &node->attrs, types, node->n_inputs,
                       types + node->n_inputs, node->n_outputs) > 0))
            library_least(graph, n, types, least_rule, costs);
        else if (!blocked && own == costs->workspace[n]) {
            int64_t least = dfg_op_least_workspace(
                node->op, &node->attrs, types, node->n_inputs,
                types + node->n_inputs, node->n_outputs);
            if (least >= 0 && least < costs->workspace[n])
                costs->workspace_least[n] = least;
        }
        dfg_free(allocator, types);
    }
    return DFG_OK;
}

dfg_status dfg_node_costs_in_place(const dfg_graph *graph, int target_has_it,
                                   const dfg_allocator *allocator,
                                   dfg_node_costs *costs)
{
    for (int32_t n = 0; target_has_it && n < graph->n_nodes; n++) {
        const dfg_ir_node *node = &graph->nodes[n];
        if (node->dead || node->op != DFG_OP_CONV2D)
            continue;
        dfg_type *types = dfg_node_types(graph, n, allocator);
        if (!types)
            return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                             "node costs: out of memory");
        /* dfg's kernel runs the step: the op's own workspace is all it
         * has and no library runs it, or it may go without the library */
        int own_kernel = (costs->library_workspace[n] < 0 &&
                          costs->workspace[n] <=
                              dfg_node_workspace_bytes(graph, n, types)) ||
                         costs->workspace_own[n] >= 0;
        if (own_kernel)
            costs->in_place_workspace[n] = dfg_op_in_place_workspace(
                node->op, &node->attrs, types, node->n_inputs,
                types + node->n_inputs, node->n_outputs, 0);
        dfg_free(allocator, types);
    }
    return DFG_OK;
}
