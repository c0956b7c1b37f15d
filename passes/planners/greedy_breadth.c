/* Greedy by breadth (Pisarchyk & Lee 2020), placing offsets rather than
 * shared objects: the steps with the most live bytes go first; at each,
 * its still unplaced buffers, largest first, each in the smallest gap left
 * by the placed buffers whose lifetimes overlap it. A cell alive at the
 * step brings its whole rigid group. */
#include "passes/planners/best_fit.h"
#include "passes/planners/sort.h"
#include "util/error.h"
#include "util/memory.h"

typedef struct step_breadth {
    int64_t bytes;
    int32_t step;
} step_breadth;

static int wider(const step_breadth *x, const step_breadth *y)
{
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes;
    return x->step < y->step;
}

DFG_DEFINE_SORT(sort_steps, step_breadth, wider)

/* Steps (ranks) by live bytes, widest first. */
static step_breadth *steps_by_breadth(int32_t n, const int64_t *aligned,
                                      const dfg_step_ranks *ranks,
                                      const dfg_allocator *allocator)
{
    int32_t m = ranks->count;
    int64_t *live = dfg_calloc(allocator, (size_t)m + 1, sizeof *live);
    step_breadth *steps =
        dfg_alloc(allocator, 2 * ((size_t)m + 1) * sizeof *steps);
    if (live && steps) {
        dfg_step_ranks_live_bytes(ranks, n, aligned, live);
        for (int32_t s = 0; s < m; s++)
            steps[s] = (step_breadth){live[s], s};
        sort_steps(steps, steps + m, (size_t)m);
    } else {
        dfg_free(allocator, steps);
        steps = NULL;
    }
    dfg_free(allocator, live);
    return steps;
}

typedef struct breadth_plan {
    const dfg_buffer *buffers;
    const dfg_plan_units *units;
    uint8_t *placed;             /* [n] per unit buffer */
    dfg_lifetime_index unplaced;
    dfg_entry_list alive;
    dfg_placement_key *keys;     /* n keys and n more to sort them */
    dfg_best_fit fit;
} breadth_plan;

static dfg_status place_step(breadth_plan *plan, int32_t step)
{
    plan->alive.count = 0;
    dfg_status status = dfg_lifetime_index_take_alive_at(&plan->unplaced, step,
                                                         &plan->alive);
    if (status != DFG_OK)
        return status;
    int32_t k = 0;
    for (int32_t j = 0; j < plan->alive.count; j++) {
        int32_t unit = dfg_unit_of(plan->buffers, plan->alive.items[j].buffer);
        if (!plan->placed[unit]) {
            plan->placed[unit] = 1;
            plan->keys[k++] = dfg_placement_key_of(plan->units, unit);
        }
    }
    dfg_placement_keys_sort(plan->keys, plan->keys + k, k);
    for (int32_t j = 0; status == DFG_OK && j < k; j++)
        status = dfg_best_fit_place(&plan->fit, plan->keys[j].buffer);
    return status;
}

static dfg_status place_by_breadth(dfg_buffer *buffers, int32_t n,
                                   const int64_t *aligned,
                                   const dfg_step_ranks *ranks,
                                   const dfg_plan_units *units,
                                   const dfg_allocator *allocator,
                                   int64_t *arena_bytes)
{
    breadth_plan plan = {.buffers = buffers, .units = units};
    step_breadth *steps = steps_by_breadth(n, aligned, ranks, allocator);
    plan.keys = dfg_alloc(allocator, 2 * ((size_t)n + 1) * sizeof *plan.keys);
    plan.placed = dfg_calloc(allocator, (size_t)n + 1, sizeof *plan.placed);
    dfg_status status = DFG_OK;
    if (!steps || !plan.keys || !plan.placed)
        status = dfg_error(DFG_ERR_OUT_OF_MEMORY, "greedy_breadth: %d buffers", n);
    if (status == DFG_OK)
        status = dfg_best_fit_init(&plan.fit, buffers, n, aligned, ranks,
                                   units, allocator);
    if (status == DFG_OK)
        status = dfg_lifetime_index_init(&plan.unplaced, ranks->count, n,
                                         allocator);
    for (int32_t i = 0; status == DFG_OK && i < units->count; i++) {
        int32_t unit = units->unit[i];
        if (units->extent[unit] == 0) /* occupies nothing, at no step */
            status = dfg_best_fit_place(&plan.fit, unit);
    }
    for (int32_t i = 0; status == DFG_OK && i < n; i++)
        if (aligned[i] > 0)
            status = dfg_lifetime_index_insert(&plan.unplaced,
                &(dfg_lifetime_entry){.first = ranks->first[i],
                                      .last = ranks->last[i], .buffer = i});
    for (int32_t s = 0; status == DFG_OK && s < ranks->count; s++)
        status = place_step(&plan, steps[s].step);
    *arena_bytes = plan.fit.arena;
    dfg_best_fit_free(&plan.fit);
    dfg_lifetime_index_free(&plan.unplaced);
    dfg_free(allocator, plan.alive.items);
    dfg_free(allocator, plan.keys);
    dfg_free(allocator, plan.placed);
    dfg_free(allocator, steps);
    return status;
}

dfg_status dfg_plan_greedy_breadth(dfg_buffer *buffers, int32_t n,
                                   int64_t alignment,
                                   const dfg_allocator *allocator,
                                   int64_t *arena_bytes)
{
    return dfg_plan_with_ranks("greedy_breadth", place_by_breadth, buffers, n,
                               alignment, allocator, arena_bytes);
}
