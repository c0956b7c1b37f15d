/* Placed buffers indexed by lifetime, answering "which of them overlap
 * these steps" in time proportional to the answer.
 *
 * A segment tree over blocks of DFG_LIFETIME_BLOCK steps: each lifetime is
 * stored at the O(log blocks) nodes whose block ranges tile it, and every
 * node knows whether its subtree holds entries so that queries skip empty
 * ones.
 * A query for [first, last] thus costs O(log blocks + k + b) for k
 * overlapping buffers and b others met in the boundary blocks, whatever
 * the lifetimes look like: chains, where each buffer overlaps a few, and
 * graphs with a few buffers that live throughout.
 *
 * Why blocks and inline entries: planning is bound by memory latency. With
 * one leaf per step, the lower tree levels and the buffers' own records
 * are touched at random; with blocks the tree stays in cache, and each
 * entry carries what a query needs (lifetime and bytes), so a query reads
 * a few short contiguous arrays. */
#ifndef DFG_LIFETIME_INDEX_H
#define DFG_LIFETIME_INDEX_H

#include "passes/memory_plan.h"
#include "dfg/allocator.h"

#define DFG_LIFETIME_BLOCK 16

/* One buffer as the index holds it. */
typedef struct dfg_lifetime_entry {
    int64_t begin;       /* bytes [begin, end) once placed */
    int64_t end;
    int32_t first;       /* lifetime [first, last], in step ranks */
    int32_t last;
    int32_t buffer;
} dfg_lifetime_entry;

/* A growable array of entries (items from the allocator its pushes are
 * given; free them with it). */
typedef struct dfg_entry_list {
    dfg_lifetime_entry *items;
    int32_t count;
    int32_t capacity;
} dfg_entry_list;

dfg_status dfg_entry_list_push(const dfg_allocator *allocator,
                               dfg_entry_list *list,
                               const dfg_lifetime_entry *entry);

typedef struct dfg_lifetime_index {
    int32_t leaves;          /* a power of two >= the number of blocks */
    dfg_entry_list *nodes;   /* per tree node, the entries stored there */
    uint8_t *filled;         /* per tree node: its subtree has held entries */
    int32_t depth;           /* levels below the root */
    uint8_t *taken;          /* per buffer: removed by take_alive_at */
    /* The nodes' entries are carved from chunks, which are freed together
     * (an outgrown list's old items stay in its chunk): one allocation per
     * many growths, whatever the allocator costs. */
    struct dfg_lifetime_chunk *chunks;
    const dfg_allocator *allocator; /* of everything above; NULL: libc */
} dfg_lifetime_index;

/* An empty index for buffers 0..n_buffers-1 with ranks in [0, n_ranks),
 * its memory from allocator (kept until freed; NULL: the C library).
 * Free with dfg_lifetime_index_free, also after a failure. */
dfg_status dfg_lifetime_index_init(dfg_lifetime_index *index, int32_t n_ranks,
                                   int32_t n_buffers,
                                   const dfg_allocator *allocator);
void dfg_lifetime_index_free(dfg_lifetime_index *index);

dfg_status dfg_lifetime_index_insert(dfg_lifetime_index *index,
                                     const dfg_lifetime_entry *entry);

/* Appends to out (grown with the index's allocator) every entry in the
 * index whose lifetime intersects [first, last], each buffer once. */
dfg_status dfg_lifetime_index_overlapping(const dfg_lifetime_index *index,
                                          int32_t first, int32_t last,
                                          dfg_entry_list *out);

/* Appends to out (grown with the index's allocator) every entry alive at
 * step, each buffer once, and removes
 * them from the index. An entry is removed once, so taking every step
 * costs O(n log blocks + steps * (log blocks + b)) in total. (Queries on
 * an index taken from still visit the emptied nodes: the planners never
 * mix the two.) */
dfg_status dfg_lifetime_index_take_alive_at(dfg_lifetime_index *index,
                                            int32_t step, dfg_entry_list *out);

#endif
