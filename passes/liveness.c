/* Liveness: the lifetime of every byte owner, and the planner's buffers.
 *
 * An owner's bytes are live from the step that writes it (graph inputs:
 * step 0) to the last step that reads it or anything sharing its bytes
 * (its views, outputs written over it in place, their views); graph
 * outputs keep their bytes to the last step. Weights and constants live in
 * their own region and are not planned. Each step's workspace is a buffer
 * of its own, live at that step only. */
#include "pass.h"

#include <string.h>
#include "error.h"
#include "memory.h"

void dfg_liveness_free(dfg_liveness *l, const dfg_allocator *allocator)
{
    dfg_free(allocator, l->root_first);
    dfg_free(allocator, l->root_last);
    dfg_free(allocator, l->buffers);
    dfg_free(allocator, l->root_buffer);
    dfg_free(allocator, l->step_workspace);
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

/* Scratch planned past the op's own for node n: the device BLAS's
 * (blas_workspace_bytes) or what the backend's rule asks for beyond the
 * op's bytes, whichever is larger; the backend uses the whole workspace.
 * More than DFG_MAX_BLAS_WORKSPACE is not planned (the backend then runs
 * its reference kernel). */
static int64_t backend_scratch(const dfg_graph *graph, int32_t n,
                               const dfg_type *types, int64_t op_bytes,
                               int64_t blas_workspace_bytes,
                               dfg_backend_workspace_fn backend_workspace)
{
    const dfg_ir_node *node = &graph->nodes[n];
    if (!backend_workspace || !dfg_op_uses_blas(node->op))
        return blas_workspace_bytes;
    int64_t wanted = backend_workspace((int32_t)node->op, &node->attrs, types,
                                       node->n_inputs, types + node->n_inputs,
                                       node->n_outputs) -
                     dfg_align_up(op_bytes, 256);
    if (wanted > (int64_t)DFG_MAX_BLAS_WORKSPACE)
        wanted = 0;
    return wanted > blas_workspace_bytes ? wanted : blas_workspace_bytes;
}

dfg_status dfg_pass_liveness(const dfg_graph *graph, const dfg_schedule *s,
                             const dfg_alias_plan *alias,
                             int64_t blas_workspace_bytes,
                             dfg_backend_workspace_fn backend_workspace,
                             const dfg_allocator *allocator, dfg_liveness *l)
{
    memset(l, 0, sizeof *l);
    size_t values = (size_t)graph->n_values + 1;
    l->root_first = dfg_calloc(allocator, values, sizeof *l->root_first);
    l->root_last = dfg_calloc(allocator, values, sizeof *l->root_last);
    l->root_buffer = dfg_calloc(allocator, values, sizeof *l->root_buffer);
    l->step_workspace = dfg_calloc(allocator, (size_t)s->n_steps + 1,
                                   sizeof *l->step_workspace);
    l->buffers = dfg_calloc(allocator, values + (size_t)s->n_steps,
                            sizeof *l->buffers);
    if (!l->root_first || !l->root_last || !l->root_buffer ||
        !l->step_workspace || !l->buffers) {
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
        int32_t n = s->step_node[step];
        l->step_workspace[step] = -1;
        dfg_type *types = dfg_node_types(graph, n, allocator);
        if (!types) {
            dfg_liveness_free(l, allocator);
            return dfg_error(DFG_ERR_OUT_OF_MEMORY, "liveness: out of memory");
        }
        int64_t op_bytes = dfg_node_workspace_bytes(graph, n, types);
        int64_t bytes = dfg_step_workspace_bytes(
            graph->nodes[n].op, op_bytes,
            backend_scratch(graph, n, types, op_bytes, blas_workspace_bytes,
                            backend_workspace));
        dfg_free(allocator, types);
        if (bytes <= 0)
            continue;
        dfg_buffer *b = &l->buffers[l->n_buffers];
        b->size = bytes;
        b->first_step = step;
        b->last_step = step;
        l->step_workspace[step] = l->n_buffers++;
    }
    return DFG_OK;
}
