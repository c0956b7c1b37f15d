/* Trial plans of a graph being rematerialized (remat.h): the arena
 * dfg_compile would plan for it now, the step where the most bytes are
 * live, what lives there. Every strategy decides by them. */
#include "passes/remat/remat_core.h"

#include <stdio.h>

int32_t dfg_remat_peak_step(const dfg_schedule *s, const dfg_liveness *l,
                            int64_t *live)
{
    int32_t peak = 0;
    *live = -1;
    for (int32_t step = 0; step < s->n_steps; step++) {
        int64_t now = 0;
        for (int32_t b = 0; b < l->n_buffers; b++)
            if (l->buffers[b].first_step <= step &&
                step <= l->buffers[b].last_step)
                now += l->buffers[b].size;
        if (now > *live) {
            *live = now;
            peak = step;
        }
    }
    return peak;
}

dfg_status dfg_remat_plan_peak(const dfg_graph *g,
                               const dfg_compile_options *o,
                               dfg_graph_plan *plan, int32_t *peak)
{
    int64_t most;
    dfg_status st = dfg_plan_graph(g, o, &g->allocator, plan);
    *peak = st == DFG_OK ? dfg_remat_peak_step(&plan->order.schedule,
                                               &plan->order.liveness, &most)
                         : 0;
    return st;
}

int dfg_remat_live_at(const dfg_graph_plan *plan, int32_t v, int32_t step)
{
    const dfg_liveness *l = &plan->order.liveness;
    int32_t root = plan->order.alias.root[v];
    int32_t b = root >= 0 ? l->root_buffer[root] : -1;
    return b >= 0 && l->buffers[b].first_step <= step &&
           step <= l->buffers[b].last_step;
}

/* The peak's step and its three largest live values in alive (size
 * bytes). */
static void describe(const dfg_graph *g, const dfg_schedule *s,
                     const dfg_liveness *l, char *alive, size_t size)
{
    int64_t best;
    int32_t peak = dfg_remat_peak_step(s, l, &best);
    int n = snprintf(alive, size, "at step %d ('%s'), %lld "
                     "bytes live, the largest:", (int)peak,
                     g->nodes[s->step_node[peak]].name, (long long)best);
    for (int k = 0; k < 3 && n > 0 && (size_t)n < size; k++) {
        int32_t pick = -1;
        for (int32_t v = 0; v < g->n_values; v++) {
            int32_t b = l->root_buffer[v];
            if (b < 0 || l->buffers[b].first_step > peak ||
                l->buffers[b].last_step < peak)
                continue;
            if (pick < 0 || l->buffers[b].size >
                                l->buffers[l->root_buffer[pick]].size)
                pick = v;
        }
        if (pick < 0)
            break;
        n += snprintf(alive + n, size - (size_t)n,
                      " '%s' %lld B", g->values[pick].name,
                      (long long)l->buffers[l->root_buffer[pick]].size);
        l->root_buffer[pick] = -1; /* the liveness is freed right after */
    }
}

dfg_status dfg_remat_trial_arena(const dfg_graph *g,
                                 const dfg_compile_options *o,
                                 int64_t *arena)
{
    dfg_graph_plan plan;
    dfg_status st = dfg_plan_graph(g, o, &g->allocator, &plan);
    *arena = plan.arena_bytes;
    dfg_graph_plan_free(&plan, &g->allocator);
    return st;
}

dfg_status dfg_remat_describe_peak(const dfg_graph *g,
                                   const dfg_compile_options *o,
                                   int64_t *arena, char *alive, size_t size)
{
    dfg_graph_plan plan;
    dfg_status st = dfg_plan_graph(g, o, &g->allocator, &plan);
    if (st == DFG_OK) {
        *arena = plan.arena_bytes;
        describe(g, &plan.order.schedule, &plan.order.liveness, alive, size);
    }
    dfg_graph_plan_free(&plan, &g->allocator);
    return st;
}
