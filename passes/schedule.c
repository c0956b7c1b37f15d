/* The execution order and every value's own lifetime.
 *
 * The order is given (passes/schedule_order.c proposes memory-aware ones;
 * NULL keeps the live nodes in recorded order, which is topological: an op
 * can only take values that exist). A concat whose inputs are written
 * straight into its output (passes/concat_views.c) runs no step: its
 * output's own lifetime starts at the step before where it stood, the
 * bytes' lifetime at its first part (passes/liveness.c). Lifetimes here
 * are per value; aliasing then merges them per byte owner. */
#include "passes/pass.h"

#include <string.h>
#include "util/error.h"
#include "util/memory.h"

int dfg_value_is_stored(const dfg_graph *graph, int32_t value)
{
    dfg_value_kind kind = graph->values[value].kind;
    return kind == DFG_VALUE_WEIGHT || kind == DFG_VALUE_CONSTANT;
}

void dfg_schedule_free(dfg_schedule *s, const dfg_allocator *allocator)
{
    dfg_free(allocator, s->step_node);
    dfg_free(allocator, s->node_step);
    dfg_free(allocator, s->first);
    dfg_free(allocator, s->last);
    memset(s, 0, sizeof *s);
}

static void note_read(dfg_schedule *s, int32_t value, int32_t step)
{
    if (s->first[value] < 0)
        s->first[value] = 0; /* a leaf: there from the start */
    if (step > s->last[value])
        s->last[value] = step;
}

static void schedule_node(const dfg_graph *graph, const dfg_concat_views *c,
                          int32_t n, dfg_schedule *s)
{
    const dfg_ir_node *node = &graph->nodes[n];
    int elided = c && c->elided[n];
    /* An elided concat stands after its parts' producers: at least one
     * step ran before it. */
    int32_t step = elided ? s->n_steps - 1 : s->n_steps++;
    if (!elided)
        s->step_node[step] = n;
    s->node_step[n] = elided ? -1 : step;
    for (int32_t i = 0; i < node->n_inputs; i++)
        if (node->inputs[i] >= 0)
            note_read(s, node->inputs[i], step);
    for (int32_t i = 0; i < node->n_outputs; i++) {
        s->first[node->outputs[i]] = step;
        s->last[node->outputs[i]] = step;
    }
}

dfg_status dfg_pass_schedule(const dfg_graph *graph, const int32_t *order,
                             const dfg_concat_views *concat,
                             const dfg_allocator *allocator, dfg_schedule *s)
{
    memset(s, 0, sizeof *s);
    size_t nodes = (size_t)graph->n_nodes + 1, values = (size_t)graph->n_values + 1;
    s->step_node = dfg_calloc(allocator, nodes, sizeof *s->step_node);
    s->node_step = dfg_calloc(allocator, nodes, sizeof *s->node_step);
    s->first = dfg_calloc(allocator, values, sizeof *s->first);
    s->last = dfg_calloc(allocator, values, sizeof *s->last);
    if (!s->step_node || !s->node_step || !s->first || !s->last) {
        dfg_schedule_free(s, allocator);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "schedule: out of memory");
    }
    for (int32_t v = 0; v < graph->n_values; v++) {
        int is_input = graph->values[v].kind == DFG_VALUE_INPUT;
        s->first[v] = is_input ? 0 : -1;
        s->last[v] = is_input ? 0 : -1;
    }
    for (int32_t n = 0; n < graph->n_nodes; n++)
        s->node_step[n] = -1;
    int32_t live = 0;
    for (int32_t n = 0; n < graph->n_nodes; n++) {
        if (graph->nodes[n].dead)
            continue;
        schedule_node(graph, concat, order ? order[live] : n, s);
        live++;
    }
    int32_t end = s->n_steps > 0 ? s->n_steps - 1 : 0;
    for (int32_t i = 0; i < graph->n_outputs; i++)
        note_read(s, graph->outputs[i], end);
    return DFG_OK;
}
