/* Moving a graph's nodes (graph.h): the one place where nodes change
 * their indices. The callers (the training passes) give orders that are
 * topological; a debug build checks that every live node still comes
 * after the producers of what it reads. */
#include "ir/graph.h"

#include <assert.h>
#include "util/error.h"
#include "util/memory.h"

#ifndef NDEBUG
static int topological(const dfg_graph *g)
{
    for (int32_t n = 0; n < g->n_nodes; n++)
        for (int32_t i = 0; !g->nodes[n].dead && i < g->nodes[n].n_inputs;
             i++) {
            int32_t v = g->nodes[n].inputs[i];
            if (v >= 0 && g->values[v].producer >= n)
                return 0;
        }
    return 1;
}
#endif

dfg_status dfg_graph_renumber_nodes(dfg_graph *g, const int32_t *order,
                                    dfg_ir_node *scratch)
{
    for (int32_t i = 0; i < g->n_nodes; i++)
        scratch[i] = g->nodes[order[i]];
    /* The node names stay where they hash; only their indices move. */
    int32_t *new_index = dfg_calloc(&g->allocator, (size_t)g->n_nodes + 1,
                                    sizeof *new_index);
    if (!new_index)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "out of memory reordering %d nodes", (int)g->n_nodes);
    for (int32_t i = 0; i < g->n_nodes; i++) {
        new_index[order[i]] = i;
        if (order[i] == i)
            continue;
        g->nodes[i] = scratch[i];
        for (int32_t k = 0; k < g->nodes[i].n_outputs; k++)
            g->values[g->nodes[i].outputs[k]].producer = i;
    }
    dfg_name_table_renumber(&g->node_names, new_index);
    dfg_free(&g->allocator, new_index);
    assert(topological(g));
    return DFG_OK;
}

dfg_status dfg_graph_reorder_nodes(dfg_graph *g, const int32_t *order)
{
    dfg_ir_node *scratch = dfg_calloc(&g->allocator, (size_t)g->n_nodes + 1,
                                      sizeof *scratch);
    dfg_status st = scratch ? dfg_graph_renumber_nodes(g, order, scratch)
                            : dfg_error(DFG_ERR_OUT_OF_MEMORY,
                                        "out of memory reordering %d "
                                        "nodes", (int)g->n_nodes);
    dfg_free(&g->allocator, scratch);
    return st;
}

dfg_status dfg_graph_place_appended(dfg_graph *g, int32_t n_original,
                                    const int32_t *before)
{
    int32_t n_added = g->n_nodes - n_original, k = 0, at = 0;
    int32_t *order = dfg_calloc(&g->allocator, (size_t)g->n_nodes + 1,
                                sizeof *order);
    if (!order)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "out of memory placing %d nodes", (int)n_added);
    for (int32_t n = 0; n < n_original; n++) {
        while (k < n_added && before[k] == n)
            order[at++] = n_original + k++;
        order[at++] = n;
    }
    while (k < n_added)
        order[at++] = n_original + k++;
    dfg_status st = dfg_graph_reorder_nodes(g, order);
    dfg_free(&g->allocator, order);
    return st;
}
