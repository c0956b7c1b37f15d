/* Placing buffers with known sizes and lifetimes in one arena.
 *
 * This is the graph-free core of memory planning (in the spirit of TFLite
 * Micro's planner: add_buffer(size, first_use, last_use), get_offset,
 * get_maximum_memory_size): the planners, the lower bound and the verifier
 * all work on an array of dfg_buffer. Lifetimes are closed intervals of
 * step indices. Sizes are in bytes; planners round them up to the
 * alignment and place every offset on a multiple of it. */
#ifndef DFG_MEMORY_PLAN_H
#define DFG_MEMORY_PLAN_H

#include <stdint.h>
#include "dfg/program.h"

typedef struct dfg_buffer {
    int64_t size;        /* bytes, >= 0 */
    int32_t first_step;  /* first step the bytes must hold the buffer */
    int32_t last_step;   /* last step, >= first_step */
    int64_t offset;      /* written by the planner */
    /* A rigid group (a concat's buffer planned slot by slot): each cell
     * is a buffer with its own lifetime, and the planner places the group
     * as one, cell k at the group's base offset + its cell_offset. group
     * is 0 for a buffer on its own; for a cell, 1 + the index of the
     * group's base cell, whose cell_offset is 0. cell_offset is a
     * multiple of the alignment. */
    int32_t group;
    int64_t cell_offset;
} dfg_buffer;

/* Every function here takes the allocator its working memory comes from
 * (NULL: the C library) and calls no other: the compiler plans through
 * the allocator of dfg_compile_options. */

/* Places every buffer with the chosen planner; *arena_bytes receives the
 * arena size (a multiple of alignment). alignment is a power of two. */
dfg_status dfg_plan_buffers(dfg_planner planner, dfg_buffer *buffers,
                            int32_t n, int64_t alignment,
                            const dfg_allocator *allocator,
                            int64_t *arena_bytes);

dfg_status dfg_plan_no_reuse(dfg_buffer *buffers, int32_t n,
                             int64_t alignment, const dfg_allocator *allocator,
                             int64_t *arena_bytes);
dfg_status dfg_plan_greedy_size(dfg_buffer *buffers, int32_t n,
                                int64_t alignment,
                                const dfg_allocator *allocator,
                                int64_t *arena_bytes);
dfg_status dfg_plan_greedy_breadth(dfg_buffer *buffers, int32_t n,
                                   int64_t alignment,
                                   const dfg_allocator *allocator,
                                   int64_t *arena_bytes);
dfg_status dfg_plan_hill_climb(dfg_buffer *buffers, int32_t n,
                               int64_t alignment,
                               const dfg_allocator *allocator,
                               int64_t *arena_bytes);
/* The hill climb with four times the tries: for a plan that must fit a
 * target (a training step's memory budget) that the planners missed with
 * the lower bound under it (dfg_plan_fitting_workspaces). */
dfg_status dfg_plan_hill_climb_long(dfg_buffer *buffers, int32_t n,
                                    int64_t alignment,
                                    const dfg_allocator *allocator,
                                    int64_t *arena_bytes);
/* Runs every other planner on a copy, verifies each plan and keeps the
 * smallest arena; *winner (if not NULL) names the planner that made it.
 * Past 20000 buffers only greedy_size runs (unverified here), so that 10^5
 * tensors plan in a fifth of a second. */
dfg_status dfg_plan_smallest(dfg_buffer *buffers, int32_t n, int64_t alignment,
                             const dfg_allocator *allocator,
                             int64_t *arena_bytes, dfg_planner *winner);

/* Max over steps of the sum of live (aligned) sizes, each cell of a group
 * counted over its own lifetime: no placement of these lifetimes can use
 * less. */
int64_t dfg_plan_lower_bound(const dfg_buffer *buffers, int32_t n,
                             int64_t alignment, const dfg_allocator *allocator);
/* Sum of all aligned sizes: the arena without reuse. */
int64_t dfg_plan_no_reuse_bytes(const dfg_buffer *buffers, int32_t n,
                                int64_t alignment,
                                const dfg_allocator *allocator);

/* The independent check: every offset aligned, every buffer inside
 * [0, arena_bytes), every cell of a group at its base's offset + its
 * cell_offset, and no two buffers (cells included) whose lifetimes
 * overlap share a byte. Returns DFG_ERR_PLAN with a message naming the
 * first conflict. */
dfg_status dfg_plan_verify_buffers(const dfg_buffer *buffers, int32_t n,
                                   int64_t alignment, int64_t arena_bytes,
                                   const dfg_allocator *allocator);

#endif
