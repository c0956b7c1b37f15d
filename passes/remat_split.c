/* A recomputed copy made twice (remat.h).
 *
 * A segment's values come back in forward order when its backward
 * starts (passes/checkpoint.c): a block's first conv output is read at
 * once by the recomputed batch norm after it, and then only by that
 * batch norm's backward, at the end of the block's backward. Between the
 * two it is alive through the rest of the block's backward, where the
 * peak is (resnet18 at 32x32 and at 224x224: the block's second conv's
 * weight update). Made a second time just before its later readers,
 * from the same operands (kept there anyway: the block's input lives to
 * the first conv's weight gradient), the first copy dies at the
 * recomputation that reads it. The copies alive at the peak of the plan
 * are each tried so on a copy of the graph, kept where the trial plan's
 * arena shrinks, until the arena fits or no copy at the peak helps. */
#include "remat.h"

#include <stdio.h>
#include <string.h>
#include "error.h"
#include "memory.h"
#include "memory_plan.h"

/* Makes copy v (a recomputation's output) again just before its first
 * reader that is no recomputation, which reads the new copy, as do the
 * readers after it; *flops 0 when nothing was done (no recomputation
 * reads v before that reader, or an update writes an operand first). */
static dfg_status split(dfg_graph *g, int32_t v, int64_t *flops)
{
    *flops = 0;
    int32_t last_recompute = -1, first_other = -1;
    for (int32_t n = 0; n < g->n_nodes; n++) {
        if (g->nodes[n].dead || !dfg_remat_reads(&g->nodes[n], v))
            continue;
        if (dfg_remat_is_recomputation(&g->nodes[n]) && first_other < 0)
            last_recompute = n;
        else if (first_other < 0)
            first_other = n;
    }
    if (last_recompute < 0 || first_other <= last_recompute + 1)
        return DFG_OK;
    const dfg_ir_node p = g->nodes[g->values[v].producer];
    if (p.n_outputs != 1 || !dfg_remat_operands_unchanged_until(g, &p,
                                                                first_other))
        return DFG_OK;
    const char *cut = strstr(p.name, "/recompute_");
    char name[300];
    snprintf(name, sizeof name, "%.*s/recompute_%d",
             (int)(cut - p.name < 270 ? cut - p.name : 270), p.name,
             (int)g->n_nodes);
    int32_t again, added = g->n_nodes;
    dfg_status st = dfg_graph_add_node(g, p.op, name, p.inputs, p.n_inputs,
                                       &p.attrs, 1, &again);
    if (st != DFG_OK)
        return st;
    for (int32_t n = first_other; n < added; n++)
        for (int32_t i = 0; !g->nodes[n].dead && i < g->nodes[n].n_inputs;
             i++)
            if (g->nodes[n].inputs[i] == v)
                g->nodes[n].inputs[i] = again;
    int32_t *order = dfg_calloc(&g->allocator, (size_t)g->n_nodes + 1,
                                sizeof *order);
    if (!order)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "remat: out of memory");
    int32_t count = 0;
    for (int32_t n = 0; n < added; n++) {
        if (n == first_other)
            order[count++] = added;
        order[count++] = n;
    }
    st = dfg_training_reorder_nodes(g, order);
    dfg_free(&g->allocator, order);
    if (st == DFG_OK)
        *flops = dfg_remat_node_flops(g, g->values[again].producer,
                                      &g->allocator);
    return st;
}

/* The recomputed copies alive at the peak of g's plan, in copies[]
 * (*n of them, at most n_values). */
static dfg_status copies_at_peak(const dfg_graph *g,
                                 const dfg_compile_options *o,
                                 int32_t *copies, int32_t *n)
{
    *n = 0;
    dfg_graph_plan plan;
    dfg_status st = dfg_plan_graph(g, o, &g->allocator, &plan);
    const dfg_schedule *s = &plan.order.schedule;
    const dfg_liveness *l = &plan.order.liveness;
    int64_t most;
    int32_t peak = st == DFG_OK ? dfg_remat_peak_step(s, l, &most) : 0;
    for (int32_t v = 0; st == DFG_OK && v < g->n_values; v++) {
        int32_t b = l->root_buffer[v];
        if (b >= 0 && l->buffers[b].first_step <= peak &&
            peak <= l->buffers[b].last_step &&
            g->values[v].kind == DFG_VALUE_NODE_OUTPUT &&
            dfg_remat_is_recomputation(&g->nodes[g->values[v].producer]))
            copies[(*n)++] = v;
    }
    dfg_graph_plan_free(&plan, &g->allocator);
    return st;
}

/* One pass over the copies at the peak; *changed when one was kept. */
static dfg_status split_at_peak(dfg_graph *g, const dfg_compile_options *o,
                                int64_t budget, int32_t *copies,
                                dfg_remat_report *report, int64_t *extra,
                                int *changed)
{
    int32_t n;
    *changed = 0;
    dfg_status st = copies_at_peak(g, o, copies, &n);
    for (int32_t k = 0; st == DFG_OK && k < n && report->arena > budget;
         k++) {
        dfg_graph *t = NULL;
        int64_t flops = 0, arena = 0;
        st = dfg_graph_clone(g, &g->allocator, &t);
        if (st == DFG_OK)
            st = split(t, copies[k], &flops);
        if (st == DFG_OK && flops > 0)
            st = dfg_remat_trial_arena(t, o, &arena);
        if (st == DFG_OK && flops > 0 && arena < report->arena) {
            dfg_graph_destroy(t);
            st = split(g, copies[k], &flops);
            report->arena = arena;
            report->recomputed++;
            *extra += flops;
            *changed = 1;
            break; /* the peak moved */
        }
        dfg_graph_destroy(t);
    }
    return st;
}

dfg_status dfg_remat_split_copies(dfg_graph *g, const dfg_compile_options *o,
                                  dfg_remat_report *report, int64_t *extra)
{
    int32_t *copies = dfg_calloc(&g->allocator, (size_t)g->n_values + 1,
                                 sizeof *copies);
    if (!copies)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "remat: out of memory");
    dfg_status st = DFG_OK;
    int changed = 1;
    while (st == DFG_OK && changed && report->arena > report->budget)
        st = split_at_peak(g, o, report->budget, copies, report, extra,
                           &changed);
    dfg_free(&g->allocator, copies);
    return st;
}
