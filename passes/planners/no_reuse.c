/* The baseline: every buffer its own bytes, in index order. */
#include <stdlib.h>
#include "error.h"
#include "plan_input.h"

dfg_status dfg_plan_no_reuse(dfg_buffer *buffers, int32_t n, int64_t alignment,
                             int64_t *arena_bytes)
{
    if (!arena_bytes)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "no_reuse: no arena_bytes");
    int64_t *aligned, total;
    dfg_status status = dfg_plan_aligned_sizes("no_reuse", buffers, n,
                                               alignment, &aligned, &total);
    if (status != DFG_OK)
        return status;
    int64_t end = 0;
    for (int32_t i = 0; i < n; i++) {
        buffers[i].offset = aligned[i] > 0 ? end : 0;
        end += aligned[i];
    }
    free(aligned);
    *arena_bytes = end;
    return DFG_OK;
}
