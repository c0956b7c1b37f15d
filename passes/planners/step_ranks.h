/* Dense step numbers for structures indexed by step.
 *
 * Lifetimes may use any step values; the planners' step-indexed arrays and
 * trees must be sized by the number of buffers, not by the largest step.
 * Each first and last step is replaced by its rank among the distinct step
 * values that occur. The mapping keeps the order of steps, so two
 * lifetimes overlap after it exactly when they overlapped before. */
#ifndef DFG_STEP_RANKS_H
#define DFG_STEP_RANKS_H

#include "passes/memory_plan.h"
#include "dfg/allocator.h"

typedef struct dfg_step_ranks {
    int32_t *first;  /* per buffer, in [0, count) */
    int32_t *last;
    int32_t count;   /* number of ranks */
    const dfg_allocator *allocator; /* of first and last; NULL: libc */
} dfg_step_ranks;

/* Buffers must have valid lifetimes (dfg_plan_aligned_sizes checked them).
 * The arrays come from allocator (NULL: the C library). Free with
 * dfg_step_ranks_free, also after a failure. */
dfg_status dfg_step_ranks_build(const dfg_buffer *buffers, int32_t n,
                                const dfg_allocator *allocator,
                                dfg_step_ranks *ranks);
void dfg_step_ranks_free(dfg_step_ranks *ranks);

/* Fills live[0..count) with the bytes alive at each rank, given each
 * buffer's size; live has count + 1 zeroed entries. */
void dfg_step_ranks_live_bytes(const dfg_step_ranks *ranks, int32_t n,
                               const int64_t *sizes, int64_t *live);

#endif
