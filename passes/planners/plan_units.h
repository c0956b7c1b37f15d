/* What the planners order and place: units. A unit is a buffer on its own
 * or a whole rigid group (memory_plan.h), named by its base buffer; a
 * group's cells keep their own lifetimes but move only together. */
#ifndef DFG_PLAN_UNITS_H
#define DFG_PLAN_UNITS_H

#include "passes/planners/step_ranks.h"

typedef struct dfg_plan_units {
    int32_t count;
    int32_t *unit;        /* [count] each unit's buffer, in buffer order */
    /* [n + 1] the cells of the unit whose buffer is b are
     * cells[cells_begin[b] .. cells_begin[b + 1]) (a lone buffer: itself);
     * empty for a cell that is not its group's base */
    int32_t *cells_begin;
    int32_t *cells;       /* [n] */
    int64_t *extent;      /* [n] for a unit's buffer: the aligned bytes from
                             its offset to the end of its last cell */
    int32_t *first;       /* [n] for a unit's buffer: the earliest first rank */
    int32_t *last;        /* ... and the latest last rank of its cells */
    const dfg_allocator *allocator; /* of the arrays; NULL: libc */
} dfg_plan_units;

/* Buffers must have passed dfg_plan_aligned_sizes (aligned: their aligned
 * sizes). The arrays come from allocator (NULL: the C library). Free with
 * dfg_plan_units_free, also after a failure. */
dfg_status dfg_plan_units_build(const dfg_buffer *buffers, int32_t n,
                                const int64_t *aligned,
                                const dfg_step_ranks *ranks,
                                const dfg_allocator *allocator,
                                dfg_plan_units *units);
void dfg_plan_units_free(dfg_plan_units *units);

/* The buffer of the unit buffer i belongs to. */
static inline int32_t dfg_unit_of(const dfg_buffer *buffers, int32_t i)
{
    return buffers[i].group > 0 ? buffers[i].group - 1 : i;
}

#endif
