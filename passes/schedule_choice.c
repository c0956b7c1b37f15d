/* Choosing the execution order and the concats without copies: the
 * recorded order and the memory-aware ones (passes/schedule_order.c), each
 * with every policy of concat views (passes/concat_views.c), are
 * scheduled, aliased and given lifetimes, and the one whose lower bound is
 * smallest is kept; the first candidate (the recorded order) wins ties, so
 * the scheduled bound is never above the recorded one. */
#include "passes/pass.h"
#include "passes/training/buckets.h"

#include <string.h>
#include "util/error.h"
#include "util/memory.h"

void dfg_planned_order_free(dfg_planned_order *p, const dfg_allocator *allocator)
{
    dfg_liveness_free(&p->liveness, allocator);
    dfg_alias_plan_free(&p->alias, allocator);
    dfg_schedule_free(&p->schedule, allocator);
    dfg_concat_views_free(&p->concat, allocator);
}

typedef struct order_search {
    const dfg_graph *graph;
    const dfg_order_inputs *in;
    const dfg_allocator *allocator;
    int32_t *order;       /* [n_nodes] scratch for a memory-aware order */
    int64_t recorded;     /* the smallest bound in the recorded order */
    dfg_planned_order *best;
} order_search;

/* Plans one candidate: concat views (policy), then order (kind 0:
 * recorded; 1, 2: memory-aware, ties by recorded index or depth first). */
static dfg_status plan_candidate(const order_search *s,
                                 dfg_concat_policy policy, int kind,
                                 dfg_planned_order *out)
{
    const dfg_graph *graph = s->graph;
    const dfg_order_inputs *in = s->in;
    const dfg_allocator *allocator = s->allocator;
    int32_t *order = kind ? s->order : NULL;
    memset(out, 0, sizeof *out);
    dfg_pass_report report;
    dfg_status st = dfg_pass_concat_views(graph, policy, allocator,
                                          &out->concat);
    if (st == DFG_OK && order)
        st = dfg_schedule_by_memory(graph, &out->concat, kind == 2,
                                    allocator, order);
    if (st == DFG_OK)
        st = dfg_pass_schedule(graph, order, &out->concat, allocator,
                               &out->schedule);
    if (st == DFG_OK)
        st = dfg_pass_alias(graph, &out->schedule, &out->concat,
                            in->reuse_in_place, in->costs, allocator,
                            &out->alias,
                            &report);
    if (st == DFG_OK)
        st = dfg_pass_bucket_alias(graph, in->alignment, allocator,
                                   &out->alias);
    if (st == DFG_OK)
        st = dfg_pass_liveness(graph, &out->schedule, &out->alias, in->costs,
                               allocator, &out->liveness);
    if (st == DFG_OK)
        st = dfg_pass_concat_cells(graph, &out->schedule, &out->alias,
                                   in->alignment, allocator, &out->liveness);
    if (st == DFG_OK) {
        out->lower_bound = dfg_plan_lower_bound(
            out->liveness.buffers, out->liveness.n_buffers, in->alignment,
            allocator);
        if (out->lower_bound < 0)
            st = dfg_error_prefix(DFG_ERR_INVALID_ARGUMENT, "schedule");
    }
    if (st != DFG_OK)
        dfg_planned_order_free(out, allocator);
    return st;
}

/* Plans a candidate and keeps it as the best when its bound is smaller. */
static dfg_status try_candidate(order_search *s, dfg_concat_policy policy,
                                int kind)
{
    dfg_planned_order candidate;
    dfg_status st = plan_candidate(s, policy, kind, &candidate);
    if (st != DFG_OK)
        return st;
    if (kind == 0 && candidate.lower_bound < s->recorded)
        s->recorded = candidate.lower_bound;
    if (candidate.lower_bound < s->best->lower_bound) {
        dfg_planned_order_free(s->best, s->allocator);
        *s->best = candidate;
    } else {
        dfg_planned_order_free(&candidate, s->allocator);
    }
    return DFG_OK;
}

dfg_status dfg_choose_order(const dfg_graph *graph, const dfg_order_inputs *in,
                            const dfg_allocator *allocator,
                            dfg_planned_order *best)
{
    memset(best, 0, sizeof *best);
    order_search s = {
        .graph = graph, .in = in, .allocator = allocator, .best = best,
        .order = dfg_calloc(allocator, (size_t)graph->n_nodes + 1,
                            sizeof *s.order),
    };
    dfg_status st = s.order
                        ? plan_candidate(&s, DFG_CONCAT_LAST_READER, 0, best)
                        : dfg_error(DFG_ERR_OUT_OF_MEMORY,
                                    "schedule: out of memory");
    if (st != DFG_OK) {
        dfg_free(allocator, s.order);
        return st;
    }
    /* The recorded order's bound, with the best concat policy. */
    s.recorded = best->lower_bound;
    int collective = 0, concats = 0;
    for (int32_t n = 0; n < graph->n_nodes; n++) {
        collective |= graph->nodes[n].op == DFG_OP_ALL_REDUCE_START;
        concats |= !graph->nodes[n].dead && graph->nodes[n].op == DFG_OP_CONCAT;
    }
    /* A data-parallel step keeps its recorded order: the bucket pass put
     * each all-reduce right after its bucket's last gradient, so that it
     * overlaps the rest of backward. */
    int kinds = collective ? 1 : 3;
    /* Without a concat every policy gives the same candidates, which
     * never beat the first. */
    int policies = concats ? DFG_CONCAT_POLICIES : 1;
    for (int policy = 0; st == DFG_OK && policy < policies; policy++)
        for (int kind = policy ? 0 : 1; st == DFG_OK && kind < kinds; kind++)
            st = try_candidate(&s, (dfg_concat_policy)policy, kind);
    best->recorded_lower_bound = s.recorded;
    dfg_free(allocator, s.order);
    if (st != DFG_OK)
        dfg_planned_order_free(best, allocator);
    return st;
}
