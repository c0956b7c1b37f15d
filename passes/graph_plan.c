/* Planning a graph as dfg_compile does (pass.h): node costs, the order
 * with the smallest lower bound, then the planner. One function for the
 * compiler's plan and rematerialization's trial plans, so that what a
 * trial measures is what the program gets. */
#include "pass.h"

#include <string.h>
#include "memory_plan.h"

dfg_status dfg_plan_graph(const dfg_graph *graph, const dfg_compile_options *o,
                          const dfg_allocator *allocator, dfg_graph_plan *out)
{
    memset(out, 0, sizeof *out);
    out->winner = o->planner;
    dfg_status st = dfg_node_costs_build(
        graph, (int64_t)o->blas_workspace_bytes, o->backend_workspace,
        allocator, &out->costs);
    dfg_order_inputs in = {.costs = &out->costs,
                           .reuse_in_place = o->reuse_inputs_in_place,
                           .alignment = (int64_t)o->alignment};
    if (st == DFG_OK)
        st = dfg_choose_order(graph, &in, allocator, &out->order);
    dfg_liveness *l = &out->order.liveness;
    if (st == DFG_OK && o->planner == DFG_PLANNER_SMALLEST)
        st = dfg_plan_smallest(l->buffers, l->n_buffers, (int64_t)o->alignment,
                               &out->arena_bytes, &out->winner);
    else if (st == DFG_OK)
        st = dfg_plan_buffers(o->planner, l->buffers, l->n_buffers,
                              (int64_t)o->alignment, &out->arena_bytes);
    return st;
}

void dfg_graph_plan_free(dfg_graph_plan *plan, const dfg_allocator *allocator)
{
    dfg_planned_order_free(&plan->order, allocator);
    dfg_node_costs_free(&plan->costs, allocator);
}
