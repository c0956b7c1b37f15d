/* The argument checks every planner and bound shares, and the aligned
 * sizes they all work with. */
#ifndef DFG_PLAN_INPUT_H
#define DFG_PLAN_INPUT_H

#include "passes/memory_plan.h"
#include "dfg/allocator.h"

/* Checks buffers (size >= 0, 0 <= first_step <= last_step, groups well
 * formed: memory_plan.h) and alignment (a power of two), then rounds
 * every size up to the alignment. On success *aligned is an array of n
 * sizes from allocator (NULL: the C library; the caller frees it) and *total their sum, which is
 * checked to fit in int64_t together with every cell's offset: every
 * arena a planner builds is at most that, so no later offset can
 * overflow.
 * who names the caller in error messages. */
dfg_status dfg_plan_aligned_sizes(const char *who, const dfg_buffer *buffers,
                                  int32_t n, int64_t alignment,
                                  const dfg_allocator *allocator,
                                  int64_t **aligned, int64_t *total);

#endif
