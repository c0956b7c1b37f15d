/* What any placement of the lifetimes needs, and what none saves. */
#include "passes/planners/plan_input.h"
#include "passes/planners/step_ranks.h"
#include "util/error.h"
#include "util/memory.h"

int64_t dfg_plan_lower_bound(const dfg_buffer *buffers, int32_t n,
                             int64_t alignment, const dfg_allocator *allocator)
{
    int64_t *aligned, total;
    if (dfg_plan_aligned_sizes("lower bound", buffers, n, alignment,
                               allocator, &aligned, &total) != DFG_OK)
        return -1;
    int64_t bound = -1;
    dfg_step_ranks ranks;
    int64_t *live = NULL;
    if (dfg_step_ranks_build(buffers, n, allocator, &ranks) == DFG_OK) {
        live = dfg_calloc(allocator, (size_t)ranks.count + 1, sizeof *live);
        if (!live)
            dfg_error(DFG_ERR_OUT_OF_MEMORY, "lower bound of %d buffers", n);
    }
    if (live) {
        dfg_step_ranks_live_bytes(&ranks, n, aligned, live);
        bound = 0;
        for (int32_t s = 0; s < ranks.count; s++)
            if (live[s] > bound)
                bound = live[s];
    }
    dfg_free(allocator, live);
    dfg_step_ranks_free(&ranks);
    dfg_free(allocator, aligned);
    return bound;
}

int64_t dfg_plan_no_reuse_bytes(const dfg_buffer *buffers, int32_t n,
                                int64_t alignment,
                                const dfg_allocator *allocator)
{
    int64_t *aligned, total;
    if (dfg_plan_aligned_sizes("no-reuse bytes", buffers, n, alignment,
                               allocator, &aligned, &total) != DFG_OK)
        return -1;
    dfg_free(allocator, aligned);
    return total;
}
