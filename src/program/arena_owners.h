/* Which tensor's value each byte of the arena holds, as the steps of a
 * program run: the plan verifier's dataflow check (program_verify_dataflow.c)
 * writes each step's outputs here and checks its inputs against it.
 *
 * Bytes are tracked in elementary ranges between the offsets given at
 * creation (every arena tensor's start and end), in a segment tree with
 * lazy assignment: writing a range and finding the first byte of a range
 * that does not hold a given value each take O(log n). Each byte holds an
 * owner (the tensor written there last) and a class (the owner, or the
 * assembled root a slot writer was written into). */
#ifndef DFG_ARENA_OWNERS_H
#define DFG_ARENA_OWNERS_H

#include <stdint.h>
#include "dfg/allocator.h"
#include "dfg/status.h"

#define DFG_OWNER_NONE (-1)  /* bytes no step has written */
#define DFG_OWNER_MATCH (-3) /* dfg_arena_owners_mismatch: all match */

typedef struct dfg_arena_owners {
    int64_t *points;  /* sorted, distinct byte offsets */
    int32_t n_segments;
    int32_t *owner, *klass; /* per tree node, or -2 where not uniform */
    uint8_t *pending;       /* node's value not yet pushed to its children */
    const dfg_allocator *allocator; /* of the arrays; NULL: libc */
} dfg_arena_owners;

/* Tracks the ranges between n offsets (in any order, repeats allowed;
 * offsets is left as it was), every byte DFG_OWNER_NONE; the arrays come
 * from allocator (NULL: the C library). */
dfg_status dfg_arena_owners_init(dfg_arena_owners *owners,
                                 const int64_t *offsets, int32_t n,
                                 const dfg_allocator *allocator);
void dfg_arena_owners_free(dfg_arena_owners *owners);

/* Bytes [begin, end), both among the offsets, now hold owner / klass. */
void dfg_arena_owners_write(dfg_arena_owners *owners, int64_t begin,
                            int64_t end, int32_t owner, int32_t klass);

/* DFG_OWNER_MATCH if every byte of [begin, end) holds want (as its class
 * if by_class, else as its owner); else the owner (or class) of the
 * first byte that does not. */
int32_t dfg_arena_owners_mismatch(const dfg_arena_owners *owners,
                                  int64_t begin, int64_t end, int32_t want,
                                  int by_class);

#endif
