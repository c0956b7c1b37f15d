/* Liveness: the lifetime of every byte owner, and the planner's buffers.
 *
 * An owner's bytes are live from the step that writes it (graph inputs:
 * step 0) to the last step that reads it or anything sharing its bytes
 * (its views, outputs written over it in place, their views); graph
 * outputs keep their bytes to the last step. Weights and constants live in
 * their own region and are not planned. Each step's workspace is a buffer
 * of its own, live at that step only (a conv's of its least size in an
 * inference program, passes/workspace_fit.c). */
#include "passes/pass.h"

#include <string.h>
#include "util/error.h"
#include "util/memory.h"

void dfg_liveness_free(dfg_liveness *l, const dfg_allocator *allocator)
{
    dfg_free(allocator, l->root_first);
    dfg_free(allocator, l->root_last);
    dfg_free(allocator, l->buffers);
    dfg_free(allocator, l->root_buffer);
    dfg_free(allocator, l->step_workspace);
    dfg_free(allocator, l->step_in_place);
    memset(l, 0, sizeof *l);
}

static void owner_lifetimes(const dfg_graph *graph, const dfg_schedule *s,
                            const dfg_alias_plan *alias, dfg_liveness *l)
{
    for (int32_t v = 0; v < graph->n_values; v++) {
        l->root_first[v] = -1;
        l->root_last[v] = -1;
        l->root_buffer[v] = -1;
    }
    for (int32_t v = 0; v < graph->n_values; v++) {
        if (s->first[v] < 0)
            continue; /* not in the program */
        int32_t r = alias->root[v];
        if (l->root_first[r] < 0 || s->first[v] < l->root_first[r])
            l->root_first[r] = s->first[v];
        if (s->last[v] > l->root_last[r])
            l->root_last[r] = s->last[v];
    }
}

/* 1 if node's output was planned over its input 0 where that takes the
 * in-place kernel's own workspace (dfg_node_costs.in_place_workspace). */
static int writes_over_input0(const dfg_graph *graph,
                              const dfg_alias_plan *alias,
                              const dfg_node_costs *costs, int32_t node)
{
    const dfg_ir_node *n = &graph->nodes[node];
    if (!costs->in_place_workspace || costs->in_place_workspace[node] < 0 ||
        n->n_inputs < 1 || n->n_outputs < 1 || n->inputs[0] < 0)
        return 0;
    int32_t out = n->outputs[0], x = n->inputs[0];
    return alias->how[out] == DFG_ALIAS_INPLACE &&
           alias->root[out] == alias->root[x] &&
           alias->offset[out] == alias->offset[x];
}

dfg_status dfg_pass_liveness(const dfg_graph *graph, const dfg_schedule *s,
                             const dfg_alias_plan *alias,
                             const dfg_node_costs *costs,
                             const dfg_allocator *allocator, dfg_liveness *l)
{
    memset(l, 0, sizeof *l);
    size_t values = (size_t)graph->n_values + 1;
    l->root_first = dfg_calloc(allocator, values, sizeof *l->root_first);
    l->root_last = dfg_calloc(allocator, values, sizeof *l->root_last);
    l->root_buffer = dfg_calloc(allocator, values, sizeof *l->root_buffer);
    l->step_workspace = dfg_calloc(allocator, (size_t)s->n_steps + 1,
                                   sizeof *l->step_workspace);
    l->step_in_place = dfg_calloc(allocator, (size_t)s->n_steps + 1,
                                  sizeof *l->step_in_place);
    l->buffers = dfg_calloc(allocator, values + (size_t)s->n_steps,
                            sizeof *l->buffers);
    if (!l->root_first || !l->root_last || !l->root_buffer ||
        !l->step_workspace || !l->step_in_place || !l->buffers) {
        dfg_liveness_free(l, allocator);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "liveness: out of memory");
    }
    owner_lifetimes(graph, s, alias, l);
    for (int32_t v = 0; v < graph->n_values; v++) {
        if (alias->root[v] != v || l->root_first[v] < 0 ||
            dfg_value_is_stored(graph, v))
            continue;
        dfg_buffer *b = &l->buffers[l->n_buffers];
        b->size = dfg_type_bytes(&graph->values[v].type);
        b->first_step = l->root_first[v];
        b->last_step = l->root_last[v];
        l->root_buffer[v] = l->n_buffers++;
    }
    for (int32_t step = 0; step < s->n_steps; step++) {
        /* a conv's least, in inference (passes/workspace_fit.c); a step
         * whose backend scratch may be planned where it fits has a buffer
         * to grow even from 0 bytes, and a step its backend's library runs
         * in none one that marks it so (dfg_node_costs.library_workspace) */
        int32_t node = s->step_node[step];
        int64_t bytes = costs->workspace_least[node];
        l->step_in_place[step] = writes_over_input0(graph, alias, costs, node);
        if (l->step_in_place[step])
            bytes = costs->in_place_workspace[node];
        l->step_workspace[step] = -1;
        if (bytes <= 0 &&
            (l->step_in_place[step] ||
             (costs->workspace_own[node] < 0 &&
              costs->library_workspace[node] != 0)))
            continue;
        dfg_buffer *b = &l->buffers[l->n_buffers];
        b->size = bytes;
        b->first_step = step;
        b->last_step = step;
        l->step_workspace[step] = l->n_buffers++;
    }
    return DFG_OK;
}
