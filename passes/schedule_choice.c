/* Choosing the execution order and the concats without copies: the
 * recorded order and the memory-aware ones (passes/schedule_order.c), each
 * with every policy of concat views (passes/concat_views.c), are
 * scheduled, aliased and given lifetimes, and the one whose lower bound is
 * smallest is kept; the first candidate (the recorded order) wins ties, so
 * the scheduled bound is never above the recorded one. */
#include "pass.h"
#include "buckets.h"

#include <string.h>
#include "error.h"
#include "memory.h"

void dfg_planned_order_free(dfg_planned_order *p, const dfg_allocator *allocator)
{
    dfg_liveness_free(&p->liveness, allocator);
    dfg_alias_plan_free(&p->alias, allocator);
    dfg_schedule_free(&p->schedule, allocator);
    dfg_concat_views_free(&p->concat, allocator);
}

/* Plans one candidate: concat views (policy), then order (NULL:
 * recorded, else the memory-aware one of that kind). */
static dfg_status plan_candidate(const dfg_graph *graph,
                                 dfg_concat_policy policy,
                                 int32_t *order, int depth_first,
                                 const dfg_order_inputs *in,
                                 const dfg_allocator *allocator,
                                 dfg_planned_order *out)
{
    memset(out, 0, sizeof *out);
    dfg_pass_report report;
    dfg_status st = dfg_pass_concat_views(graph, policy, allocator,
                                          &out->concat);
    if (st == DFG_OK && order)
        st = dfg_schedule_by_memory(graph, &out->concat, depth_first,
                                    allocator, order);
    if (st == DFG_OK)
        st = dfg_pass_schedule(graph, order, &out->concat, allocator,
                               &out->schedule);
    if (st == DFG_OK)
        st = dfg_pass_alias(graph, &out->schedule, &out->concat,
                            in->reuse_in_place, allocator, &out->alias,
                            &report);
    if (st == DFG_OK)
        st = dfg_pass_bucket_alias(graph, in->alignment, allocator,
                                   &out->alias);
    if (st == DFG_OK)
        st = dfg_pass_liveness(graph, &out->schedule, &out->alias, in->costs,
                               allocator, &out->liveness);
    if (st == DFG_OK) {
        out->lower_bound = dfg_plan_lower_bound(
            out->liveness.buffers, out->liveness.n_buffers, in->alignment);
        if (out->lower_bound < 0)
            st = dfg_error_prefix(DFG_ERR_INVALID_ARGUMENT, "schedule");
    }
    if (st != DFG_OK)
        dfg_planned_order_free(out, allocator);
    return st;
}

/* SHORT_FAMILY is the same as ONE_FAMILY where no family is shortened:
 * *policies drops it then. */
static dfg_status count_shortened(const dfg_graph *graph,
                                  const dfg_allocator *allocator,
                                  int *policies)
{
    dfg_concat_views probe;
    dfg_status st = dfg_pass_concat_views(graph, DFG_CONCAT_SHORT_FAMILY,
                                          allocator, &probe);
    if (st == DFG_OK && probe.n_shortened == 0)
        *policies = DFG_CONCAT_SHORT_FAMILY;
    if (st == DFG_OK)
        dfg_concat_views_free(&probe, allocator);
    return st;
}

dfg_status dfg_choose_order(const dfg_graph *graph, const dfg_order_inputs *in,
                            const dfg_allocator *allocator,
                            dfg_planned_order *best)
{
    dfg_status st = plan_candidate(graph, DFG_CONCAT_LAST_READER, NULL, 0, in,
                                   allocator, best);
    if (st != DFG_OK)
        return st;
    /* The recorded order's bound, with the better concat choice. */
    int64_t recorded = best->lower_bound;
    int32_t live = 0, collective = 0;
    for (int32_t n = 0; n < graph->n_nodes; n++) {
        live += !graph->nodes[n].dead;
        collective |= graph->nodes[n].op == DFG_OP_ALL_REDUCE_START;
    }
    int32_t *order = dfg_calloc(allocator, (size_t)graph->n_nodes + 1,
                                sizeof *order);
    if (!order)
        st = dfg_error(DFG_ERR_OUT_OF_MEMORY, "schedule: out of memory");
    /* kind 0: recorded order; 1, 2: memory-aware, ties by recorded index
     * or depth first. A data-parallel step keeps its recorded order: the
     * bucket pass put each all-reduce right after its bucket's last
     * gradient, so that it overlaps the rest of backward. */
    int kinds = live > DFG_SCHEDULE_MAX_NODES || collective ? 1 : 3;
    int policies = DFG_CONCAT_POLICIES;
    if (st == DFG_OK)
        st = count_shortened(graph, allocator, &policies);
    for (int policy = 0; st == DFG_OK && policy < policies; policy++)
        for (int kind = policy ? 0 : 1; st == DFG_OK && kind < kinds; kind++) {
            dfg_planned_order candidate;
            st = plan_candidate(graph, (dfg_concat_policy)policy,
                                kind ? order : NULL,
                                kind == 2, in, allocator, &candidate);
            if (st != DFG_OK)
                break;
            if (kind == 0 && candidate.lower_bound < recorded)
                recorded = candidate.lower_bound;
            if (candidate.lower_bound < best->lower_bound) {
                dfg_planned_order_free(best, allocator);
                *best = candidate;
            } else {
                dfg_planned_order_free(&candidate, allocator);
            }
        }
    best->recorded_lower_bound = recorded;
    dfg_free(allocator, order);
    if (st != DFG_OK)
        dfg_planned_order_free(best, allocator);
    return st;
}
