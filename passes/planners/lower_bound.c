/* What any placement of the lifetimes needs, and what none saves. */
#include <stdlib.h>
#include "error.h"
#include "plan_input.h"
#include "step_ranks.h"

int64_t dfg_plan_lower_bound(const dfg_buffer *buffers, int32_t n,
                             int64_t alignment)
{
    int64_t *aligned, total;
    if (dfg_plan_aligned_sizes("lower bound", buffers, n, alignment, &aligned,
                               &total) != DFG_OK)
        return -1;
    int64_t bound = -1;
    dfg_step_ranks ranks;
    int64_t *live = NULL;
    if (dfg_step_ranks_build(buffers, n, &ranks) == DFG_OK) {
        live = calloc((size_t)ranks.count + 1, sizeof *live);
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
    free(live);
    dfg_step_ranks_free(&ranks);
    free(aligned);
    return bound;
}

int64_t dfg_plan_no_reuse_bytes(const dfg_buffer *buffers, int32_t n,
                                int64_t alignment)
{
    int64_t *aligned, total;
    if (dfg_plan_aligned_sizes("no-reuse bytes", buffers, n, alignment,
                               &aligned, &total) != DFG_OK)
        return -1;
    free(aligned);
    return total;
}
