/* Choosing a planner by name. */
#include "error.h"
#include "memory_plan.h"

dfg_status dfg_plan_buffers(dfg_planner planner, dfg_buffer *buffers,
                            int32_t n, int64_t alignment, int64_t *arena_bytes)
{
    if (!arena_bytes)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "plan: no arena_bytes");
    switch (planner) {
    case DFG_PLANNER_NO_REUSE:
        return dfg_plan_no_reuse(buffers, n, alignment, arena_bytes);
    case DFG_PLANNER_GREEDY_SIZE:
        return dfg_plan_greedy_size(buffers, n, alignment, arena_bytes);
    case DFG_PLANNER_GREEDY_BREADTH:
        return dfg_plan_greedy_breadth(buffers, n, alignment, arena_bytes);
    case DFG_PLANNER_COUNT:
        break;
    }
    return dfg_error(DFG_ERR_INVALID_ARGUMENT, "plan: unknown planner %d",
                     (int)planner);
}
