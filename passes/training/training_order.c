/* Where the optimizer updates of a training step run (training.h).
 *
 * The training pass records optimizer_tick and the updates after the whole
 * backward pass, which would keep every weight gradient alive to the end
 * of the step. An update may run as soon as
 *   - its gradient is final (its producer ran: autodiff adds the
 *     contributions of several readers as they arrive, so the value it
 *     hands out is the complete sum), and
 *   - nothing else reads its weight any more (the update writes the weight
 *     in place; the backward ops read weights too, e.g. conv2d_grad_input),
 * so each moves to just after the later of the two, and the tick (which
 * reads persistent state only) just before the first of them. A gradient
 * then dies at its update, and the planner reuses its bytes for the rest
 * of the backward pass. With accumulation the update op is also where the
 * gradient is added into its accumulator, so nothing else changes.
 *
 * Moving nodes changes node indices: each value's producer and the node
 * name table are renumbered. */
#include "passes/training/training.h"

#include "util/error.h"
#include "util/memory.h"

static int is_update(dfg_op op)
{
    return op == DFG_OP_SGD_UPDATE || op == DFG_OP_ADAM_UPDATE ||
           op == DFG_OP_ADAMW_UPDATE;
}

/* The last node before `end` after which update u may run: its
 * gradient's producer and the last other live reader of its weight. */
static int32_t ready_after(const dfg_graph *g, const int32_t *last_reader,
                           const dfg_ir_node *u)
{
    int32_t weight = u->inputs[0], gradient = u->inputs[1];
    int32_t ready = g->values[gradient].producer;
    return last_reader[weight] > ready ? last_reader[weight] : ready;
}

dfg_status dfg_training_order_updates(dfg_graph *g, int32_t backward_end)
{
    size_t nodes = (size_t)g->n_nodes + 1;
    int32_t *last_reader = dfg_calloc(&g->allocator, (size_t)g->n_values + 1,
                                      sizeof *last_reader);
    int32_t *ready = dfg_calloc(&g->allocator, nodes, sizeof *ready);
    int32_t *order = dfg_calloc(&g->allocator, nodes, sizeof *order);
    dfg_ir_node *scratch = dfg_calloc(&g->allocator, nodes, sizeof *scratch);
    dfg_status st = DFG_OK;
    if (!last_reader || !ready || !order || !scratch)
        st = dfg_error(DFG_ERR_OUT_OF_MEMORY,
                       "training: out of memory ordering the updates");
    for (int32_t v = 0; st == DFG_OK && v < g->n_values; v++)
        last_reader[v] = -1;
    for (int32_t n = 0; st == DFG_OK && n < backward_end; n++)
        for (int32_t i = 0; !g->nodes[n].dead && i < g->nodes[n].n_inputs; i++)
            if (g->nodes[n].inputs[i] >= 0)
                last_reader[g->nodes[n].inputs[i]] = n;
    int32_t tick = -1, first_ready = backward_end;
    for (int32_t n = backward_end; st == DFG_OK && n < g->n_nodes; n++) {
        ready[n] = -1;
        if (g->nodes[n].op == DFG_OP_OPTIMIZER_TICK)
            tick = n;
        else if (is_update(g->nodes[n].op) && !g->nodes[n].dead) {
            ready[n] = ready_after(g, last_reader, &g->nodes[n]);
            if (ready[n] < first_ready)
                first_ready = ready[n];
        }
    }
    /* The backward nodes in their order, each followed by the updates
     * ready after it (in their recorded order), the tick before the first
     * update, then the rest (the concat of the update norms). */
    int32_t at = 0, tick_placed = tick < 0;
    for (int32_t n = 0; st == DFG_OK && n < backward_end; n++) {
        order[at++] = n;
        if (n == first_ready && !tick_placed) {
            order[at++] = tick;
            tick_placed = 1;
        }
        for (int32_t u = backward_end; u < g->n_nodes; u++)
            if (is_update(g->nodes[u].op) && ready[u] == n)
                order[at++] = u;
    }
    for (int32_t n = backward_end; st == DFG_OK && n < g->n_nodes; n++)
        if ((n != tick || !tick_placed) &&
            !(is_update(g->nodes[n].op) && ready[n] >= 0))
            order[at++] = n;
    if (st == DFG_OK)
        st = dfg_graph_renumber_nodes(g, order, scratch);
    dfg_free(&g->allocator, last_reader);
    dfg_free(&g->allocator, ready);
    dfg_free(&g->allocator, order);
    dfg_free(&g->allocator, scratch);
    return st;
}
