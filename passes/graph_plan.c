/* Planning a graph as dfg_compile does (pass.h): node costs, the order
 * with the smallest lower bound, then the planner (conv workspaces fitted
 * under the bound, passes/workspace_fit.c), keeping a depthwise conv
 * written over its input only where that holds the bound down. One
 * function for the
 * compiler's plan and rematerialization's trial plans, so that what a
 * trial measures is what the program gets. */
#include "passes/pass.h"

#include <string.h>
#include "runtime/cpu_workspace_rule.h"
#include "util/error.h"
#include "util/memory.h"

/* Steps written over their input 0 by an in-place kernel whose own
 * bytes would still fit under the order's lower bound give that up
 * (dfg_node_costs.in_place_workspace back to -1): the in-place kernel is
 * slower, and lifting it adds the output's bytes at its one step only.
 * *changed: whether any did. */
static dfg_status drop_needless_in_place(const dfg_graph *graph,
                                         int64_t alignment,
                                         const dfg_allocator *allocator,
                                         dfg_graph_plan *out, int *changed)
{
    const dfg_liveness *l = &out->order.liveness;
    const dfg_schedule *s = &out->order.schedule;
    *changed = 0;
    int any = 0;
    for (int32_t t = 0; t < s->n_steps; t++)
        any |= l->step_in_place[t];
    if (!any)
        return DFG_OK;
    int64_t bound;
    int64_t *live = dfg_live_bytes(l, s->n_steps, alignment, allocator, &bound);
    if (!live)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "plan: out of memory");
    for (int32_t t = 0; t < s->n_steps; t++) {
        if (!l->step_in_place[t])
            continue;
        int32_t n = s->step_node[t], b = l->step_workspace[t];
        int64_t apart =
            live[t] -
            (b >= 0 ? dfg_align_up(l->buffers[b].size, alignment) : 0) +
            dfg_align_up(dfg_type_bytes(
                             &graph->values[graph->nodes[n].outputs[0]].type),
                         alignment) +
            dfg_align_up(out->costs.workspace_least[n], alignment);
        if (apart <= bound) {
            out->costs.in_place_workspace[n] = -1;
            *changed = 1;
        }
    }
    dfg_free(allocator, live);
    return DFG_OK;
}

dfg_status dfg_plan_graph(const dfg_graph *graph, const dfg_compile_options *o,
                          const dfg_allocator *allocator, dfg_graph_plan *out)
{
    memset(out, 0, sizeof *out);
    out->winner = o->planner;
    dfg_status st = dfg_node_costs_build(
        graph, (int64_t)o->blas_workspace_bytes, o->backend_workspace,
        allocator, &out->costs);
    /* Inference convs plan from their least workspace and grow into the
     * room under the bound; training keeps full workspaces, so that a
     * budget or data parallelism computes the same bits. */
    if (st == DFG_OK && !o->training)
        st = dfg_node_costs_fit_convs(
            graph, o->prefer_memory,
            o->backend_workspace == dfg_cpu_step_workspace
                ? dfg_cpu_step_least_workspace
                : NULL,
            allocator, &out->costs);
    /* A compile without a target is the CPU's (dfg_compile_options_init). */
    if (st == DFG_OK)
        st = dfg_node_costs_in_place(
            graph,
            o->reuse_inputs_in_place && o->in_place_depthwise &&
                (!o->target || o->target->in_place_depthwise),
            allocator, &out->costs);
    dfg_order_inputs in = {.costs = &out->costs,
                           .reuse_in_place = o->reuse_inputs_in_place,
                           .alignment = (int64_t)o->alignment};
    if (st == DFG_OK)
        st = dfg_choose_order(graph, &in, allocator, &out->order);
    int changed = 0;
    if (st == DFG_OK)
        st = drop_needless_in_place(graph, (int64_t)o->alignment, allocator,
                                    out, &changed);
    if (st == DFG_OK && changed) {
        dfg_planned_order_free(&out->order, allocator);
        st = dfg_choose_order(graph, &in, allocator, &out->order);
    }
    if (st == DFG_OK)
        st = dfg_plan_fitting_workspaces(o->planner, &out->order.schedule,
                                         &out->costs, (int64_t)o->alignment,
                                         dfg_plan_target(o),
                                         allocator, &out->order.liveness,
                                         &out->arena_bytes, &out->winner);
    return st;
}

int64_t dfg_plan_target(const dfg_compile_options *o)
{
    return o->training ? (int64_t)o->training->memory_budget_bytes : 0;
}

const dfg_compile_options *dfg_options_with_budget(
    const dfg_compile_options *o, const dfg_training_options *t,
    int64_t budget, dfg_compile_options *with, dfg_training_options *in_bytes)
{
    *in_bytes = *t;
    in_bytes->memory_budget_bytes = (uint64_t)budget;
    in_bytes->memory_budget_percent = 0.0f;
    *with = *o;
    with->training = in_bytes;
    return with;
}

void dfg_graph_plan_free(dfg_graph_plan *plan, const dfg_allocator *allocator)
{
    dfg_planned_order_free(&plan->order, allocator);
    dfg_node_costs_free(&plan->costs, allocator);
}
