/* Choosing a planner by name, and keeping the smallest of them all. */
#include <string.h>
#include "passes/memory_plan.h"
#include "util/error.h"
#include "util/memory.h"

#define DFG_SMALLEST_MAX_BUFFERS 20000

static dfg_status plan_one(dfg_planner planner, dfg_buffer *buffers,
                           int32_t n, int64_t alignment,
                           const dfg_allocator *a, int64_t *arena_bytes)
{
    switch (planner) {
    case DFG_PLANNER_NO_REUSE:
        return dfg_plan_no_reuse(buffers, n, alignment, a, arena_bytes);
    case DFG_PLANNER_GREEDY_SIZE:
        return dfg_plan_greedy_size(buffers, n, alignment, a, arena_bytes);
    case DFG_PLANNER_GREEDY_BREADTH:
        return dfg_plan_greedy_breadth(buffers, n, alignment, a, arena_bytes);
    case DFG_PLANNER_HILL_CLIMB:
        return dfg_plan_hill_climb(buffers, n, alignment, a, arena_bytes);
    case DFG_PLANNER_SMALLEST:
        return dfg_plan_smallest(buffers, n, alignment, a, arena_bytes, NULL);
    case DFG_PLANNER_COUNT:
        break;
    }
    return dfg_error(DFG_ERR_INVALID_ARGUMENT, "plan: unknown planner %d",
                     (int)planner);
}

dfg_status dfg_plan_buffers(dfg_planner planner, dfg_buffer *buffers,
                            int32_t n, int64_t alignment,
                            const dfg_allocator *allocator,
                            int64_t *arena_bytes)
{
    if (!arena_bytes)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "plan: no arena_bytes");
    return plan_one(planner, buffers, n, alignment, allocator, arena_bytes);
}

dfg_status dfg_plan_smallest(dfg_buffer *buffers, int32_t n, int64_t alignment,
                             const dfg_allocator *allocator,
                             int64_t *arena_bytes, dfg_planner *winner)
{
    if (!arena_bytes || n < 0 || (n > 0 && !buffers))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "smallest: %d buffers at %p", n, (const void *)buffers);
    dfg_buffer *trial = dfg_alloc(allocator, ((size_t)n + 1) * sizeof *trial);
    int64_t *best_offsets =
        dfg_alloc(allocator, ((size_t)n + 1) * sizeof *best_offsets);
    dfg_status status = DFG_OK;
    if (!trial || !best_offsets)
        status = dfg_error(DFG_ERR_OUT_OF_MEMORY, "smallest: %d buffers", n);
    /* Ties go to the earlier planner in the enum: the simpler one. Past
     * DFG_SMALLEST_MAX_BUFFERS only greedy by size runs, so that planning
     * 10^5 tensors stays within a fifth of a second. */
    int first = n > DFG_SMALLEST_MAX_BUFFERS ? DFG_PLANNER_GREEDY_SIZE : 0;
    int end = n > DFG_SMALLEST_MAX_BUFFERS ? first + 1 : DFG_PLANNER_SMALLEST;
    int64_t best = -1;
    dfg_planner best_planner = (dfg_planner)first;
    for (int p = first; status == DFG_OK && p < end; p++) {
        memcpy(trial, buffers, (size_t)n * sizeof *trial);
        int64_t arena = 0;
        status = plan_one((dfg_planner)p, trial, n, alignment, allocator,
                          &arena);
        /* With one planner there is nothing to choose between (and
         * dfg_compile verifies the program it lowers). */
        if (status == DFG_OK && end - first > 1)
            status = dfg_plan_verify_buffers(trial, n, alignment, arena,
                                            allocator);
        if (status != DFG_OK)
            status = dfg_error_prefix(status, "smallest, planner %d", p);
        if (status == DFG_OK && (best < 0 || arena < best)) {
            best = arena;
            best_planner = (dfg_planner)p;
            for (int32_t i = 0; i < n; i++)
                best_offsets[i] = trial[i].offset;
        }
    }
    if (status == DFG_OK) {
        for (int32_t i = 0; i < n; i++)
            buffers[i].offset = best_offsets[i];
        *arena_bytes = best;
        if (winner)
            *winner = best_planner;
    }
    dfg_free(allocator, trial);
    dfg_free(allocator, best_offsets);
    return status;
}
