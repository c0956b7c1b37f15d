/* Greedy by size for offset calculation (Pisarchyk & Lee 2020):
 * the largest buffers are placed first, each in the smallest gap left
 * by the placed buffers whose lifetimes overlap it; a rigid group is
 * placed as one, by its extent. */
#include "passes/planners/best_fit.h"
#include "util/error.h"
#include "util/memory.h"

static dfg_status place_by_size(dfg_buffer *buffers, int32_t n,
                                const int64_t *aligned,
                                const dfg_step_ranks *ranks,
                                const dfg_plan_units *units,
                                const dfg_allocator *allocator,
                                int64_t *arena_bytes)
{
    int32_t m = units->count;
    dfg_placement_key *order =
        dfg_alloc(allocator, 2 * ((size_t)m + 1) * sizeof *order);
    if (!order)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "greedy_size: %d buffers", n);
    for (int32_t i = 0; i < m; i++)
        order[i] = dfg_placement_key_of(units, units->unit[i]);
    dfg_placement_keys_sort(order, order + m, m);
    dfg_best_fit fit;
    dfg_status status = dfg_best_fit_init(&fit, buffers, n, aligned, ranks,
                                          units, allocator);
    for (int32_t i = 0; status == DFG_OK && i < m; i++)
        status = dfg_best_fit_place(&fit, order[i].buffer);
    *arena_bytes = fit.arena;
    dfg_best_fit_free(&fit);
    dfg_free(allocator, order);
    return status;
}

dfg_status dfg_plan_greedy_size(dfg_buffer *buffers, int32_t n,
                                int64_t alignment,
                                const dfg_allocator *allocator,
                                int64_t *arena_bytes)
{
    return dfg_plan_with_ranks("greedy_size", place_by_size, buffers, n,
                               alignment, allocator, arena_bytes);
}
