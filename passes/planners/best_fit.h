/* Placing one buffer at a time in the smallest gap that fits it, the step
 * both greedy planners of Pisarchyk & Lee (2020) share.
 *
 * Only the placed buffers whose lifetimes overlap the new one constrain
 * it; the lifetime index finds them, so a placement costs about
 * O(log steps + k log k) for k such buffers, not a scan of all placed. */
#ifndef DFG_BEST_FIT_H
#define DFG_BEST_FIT_H

#include "passes/planners/lifetime_index.h"
#include "passes/planners/plan_units.h"
#include "passes/planners/step_ranks.h"

/* The order in which the greedy planners consider units (plan_units.h):
 * larger aligned extent first, then longer lifetime, then lower index, so
 * that plans are deterministic. */
typedef struct dfg_placement_key {
    int64_t size;
    int32_t length;
    int32_t buffer;
} dfg_placement_key;

dfg_placement_key dfg_placement_key_of(const dfg_plan_units *units,
                                       int32_t unit_buffer);
/* Sorts keys[0..n) into placement order; scratch holds n keys. */
void dfg_placement_keys_sort(dfg_placement_key *keys,
                             dfg_placement_key *scratch, int32_t n);

typedef struct dfg_best_fit {
    dfg_buffer *buffers;         /* offsets are written here */
    const int64_t *aligned;      /* aligned sizes */
    const dfg_step_ranks *ranks;
    const dfg_plan_units *units;
    dfg_lifetime_index placed;
    dfg_entry_list overlapping;  /* scratch for one placement */
    /* scratch: span_capacity spans and as many for sorting them; a span
     * is where a unit's base may not be: (begin, end), open */
    struct dfg_byte_span { int64_t begin, end; } *spans;
    int32_t span_capacity;
    int64_t arena;               /* highest end so far */
    const dfg_allocator *allocator; /* of the index and scratch */
} dfg_best_fit;

/* Its memory comes from allocator (NULL: the C library). Free with
 * dfg_best_fit_free, also after a failure. */
dfg_status dfg_best_fit_init(dfg_best_fit *fit, dfg_buffer *buffers, int32_t n,
                             const int64_t *aligned,
                             const dfg_step_ranks *ranks,
                             const dfg_plan_units *units,
                             const dfg_allocator *allocator);
void dfg_best_fit_free(dfg_best_fit *fit);

/* Gives a unit (its buffer: plan_units.h) its base offset, and each of its
 * cells base + cell_offset: the lowest base of the tightest fit, where
 * every cell lies in a gap between the placed buffers overlapping it in
 * time (for a lone buffer: the smallest gap that fits it, the lowest on a
 * tie), else past the highest end among them. A zero-size buffer gets
 * offset 0 and occupies nothing. */
dfg_status dfg_best_fit_place(dfg_best_fit *fit, int32_t unit_buffer);

/* Gives a unit the base a placement of the same units before it, in the
 * same order, gave it (a replay: its gap is not searched again). */
dfg_status dfg_best_fit_place_at(dfg_best_fit *fit, int32_t unit_buffer,
                                 int64_t base);

/* A planner given the aligned sizes, the step ranks, the units and the
 * allocator of its scratch memory. */
typedef dfg_status (*dfg_ranked_planner)(dfg_buffer *buffers, int32_t n,
                                         const int64_t *aligned,
                                         const dfg_step_ranks *ranks,
                                         const dfg_plan_units *units,
                                         const dfg_allocator *allocator,
                                         int64_t *arena_bytes);

/* Checks the input, computes what a ranked planner needs (with allocator)
 * and runs it; who names the planner in error messages. */
dfg_status dfg_plan_with_ranks(const char *who, dfg_ranked_planner planner,
                               dfg_buffer *buffers, int32_t n,
                               int64_t alignment,
                               const dfg_allocator *allocator,
                               int64_t *arena_bytes);

#endif
