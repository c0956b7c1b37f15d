/* The baseline: every buffer its own bytes, in index order (a rigid
 * group's cells at its base's bytes, where its base comes). */
#include "passes/planners/best_fit.h"

static dfg_status place_apart(dfg_buffer *buffers, int32_t n,
                              const int64_t *aligned,
                              const dfg_step_ranks *ranks,
                              const dfg_plan_units *units,
                              const dfg_allocator *allocator,
                              int64_t *arena_bytes)
{
    (void)n, (void)aligned, (void)ranks, (void)allocator;
    int64_t end = 0;
    for (int32_t i = 0; i < units->count; i++) {
        int32_t unit = units->unit[i];
        int64_t base = units->extent[unit] > 0 ? end : 0;
        for (int32_t c = units->cells_begin[unit];
             c < units->cells_begin[unit + 1]; c++)
            buffers[units->cells[c]].offset =
                base + buffers[units->cells[c]].cell_offset;
        end += units->extent[unit];
    }
    *arena_bytes = end;
    return DFG_OK;
}

dfg_status dfg_plan_no_reuse(dfg_buffer *buffers, int32_t n, int64_t alignment,
                             const dfg_allocator *allocator,
                             int64_t *arena_bytes)
{
    return dfg_plan_with_ranks("no_reuse", place_apart, buffers, n, alignment,
                               allocator, arena_bytes);
}
