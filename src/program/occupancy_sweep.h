/* Finding two tensors that hold the same byte at the same step: the core
 * of both verifiers (dfg_plan_verify_buffers, dfg_program_verify).
 *
 * It shares no code with the planners on purpose: a bug in one is not
 * repeated in the check of the other. A sweep over steps keeps the live
 * occupancies in a treap ordered by start byte and augmented with the
 * highest end in each subtree (an interval tree), so each new occupancy
 * meets only the live ones that intersect its bytes. */
#ifndef DFG_OCCUPANCY_SWEEP_H
#define DFG_OCCUPANCY_SWEEP_H

#include "dfg/allocator.h"
#include "dfg/status.h"
#include <stdint.h>

/* Bytes [begin, end) held over steps [first_step, last_step]. Occupancies
 * of the same group may share bytes (a view and its source); empty ones
 * (begin == end) hold nothing. */
typedef struct dfg_occupancy {
    int64_t begin;
    int64_t end;
    int32_t first_step;
    int32_t last_step;
    int32_t group;
} dfg_occupancy;

/* Sets *a and *b to two occupancies of different groups that share a byte
 * at a common step, or both to -1 if there are none. The occupancies must
 * have begin <= end and first_step <= last_step. Costs
 * O((n + s) log n), s the number of intersecting same-group pairs met.
 * Its scratch comes from allocator (NULL: the C library). */
dfg_status dfg_find_shared_bytes(const dfg_occupancy *occupancies, int32_t n,
                                 const dfg_allocator *allocator, int32_t *a,
                                 int32_t *b);

#endif
