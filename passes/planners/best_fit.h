/* Placing one buffer at a time in the smallest gap that fits it, the step
 * both greedy planners of Pisarchyk & Lee (2020) share.
 *
 * Only the placed buffers whose lifetimes overlap the new one constrain
 * it; the lifetime index finds them, so a placement costs about
 * O(log steps + k log k) for k such buffers, not a scan of all placed. */
#ifndef DFG_BEST_FIT_H
#define DFG_BEST_FIT_H

#include "lifetime_index.h"
#include "step_ranks.h"

/* The order in which the greedy planners consider buffers: larger aligned
 * size first, then longer lifetime, then lower index, so that plans are
 * deterministic. */
typedef struct dfg_placement_key {
    int64_t size;
    int32_t length;
    int32_t buffer;
} dfg_placement_key;

dfg_placement_key dfg_placement_key_of(const int64_t *aligned,
                                       const dfg_step_ranks *ranks,
                                       int32_t buffer);
/* Sorts keys[0..n) into placement order; scratch holds n keys. */
void dfg_placement_keys_sort(dfg_placement_key *keys,
                             dfg_placement_key *scratch, int32_t n);

typedef struct dfg_best_fit {
    dfg_buffer *buffers;         /* offsets are written here */
    const int64_t *aligned;      /* aligned sizes */
    const dfg_step_ranks *ranks;
    dfg_lifetime_index placed;
    dfg_entry_list overlapping;  /* scratch for one placement */
    /* scratch: span_capacity spans and as many for sorting them */
    struct dfg_byte_span { int64_t begin, end; } *spans;
    int32_t span_capacity;
    int64_t arena;               /* highest end so far */
} dfg_best_fit;

/* Free with dfg_best_fit_free, also after a failure. */
dfg_status dfg_best_fit_init(dfg_best_fit *fit, dfg_buffer *buffers, int32_t n,
                             const int64_t *aligned,
                             const dfg_step_ranks *ranks);
void dfg_best_fit_free(dfg_best_fit *fit);

/* Gives buffer its offset: the start of the smallest gap between placed
 * buffers overlapping it in time that fits it (the lowest such gap on a
 * tie), else the highest end among them. A zero-size buffer gets offset 0
 * and occupies nothing. */
dfg_status dfg_best_fit_place(dfg_best_fit *fit, int32_t buffer);

/* A planner given the aligned sizes and the step ranks. */
typedef dfg_status (*dfg_ranked_planner)(dfg_buffer *buffers, int32_t n,
                                         const int64_t *aligned,
                                         const dfg_step_ranks *ranks,
                                         int64_t *arena_bytes);

/* Checks the input, computes what a ranked planner needs and runs it;
 * who names the planner in error messages. */
dfg_status dfg_plan_with_ranks(const char *who, dfg_ranked_planner planner,
                               dfg_buffer *buffers, int32_t n,
                               int64_t alignment, int64_t *arena_bytes);

#endif
