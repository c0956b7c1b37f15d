/* Buffers indexed by lifetime, answering "which buffers overlap these
 * steps" in time proportional to the answer.
 *
 * A segment tree over step ranks: each inserted lifetime is stored at the
 * O(log steps) nodes whose ranges tile it, and every node counts the
 * entries in its subtree so that queries skip empty subtrees. A query for
 * [first, last] thus costs O((k + 1) log steps) for k overlapping buffers,
 * whatever the lifetimes look like: chains, where each buffer overlaps a
 * few, and graphs with a few buffers that live throughout. */
#ifndef DFG_LIFETIME_INDEX_H
#define DFG_LIFETIME_INDEX_H

#include "memory_plan.h"

/* A growable list of buffer indices (malloc'ed; free ids). */
typedef struct dfg_id_list {
    int32_t *ids;
    int32_t count;
    int32_t capacity;
} dfg_id_list;

dfg_status dfg_id_list_push(dfg_id_list *list, int32_t id);

typedef struct dfg_lifetime_index {
    int32_t leaves;       /* a power of two >= the number of step ranks */
    int32_t *head;        /* per tree node: first entry of its list, or -1 */
    int32_t *count;       /* per tree node: entries in its subtree */
    struct dfg_lifetime_entry {
        int32_t buffer;
        int32_t next;     /* next entry of the same node, or -1 */
    } *entries;
    int32_t n_entries;
    int32_t entry_capacity;
    int32_t *mark;        /* per buffer: last query that reported it */
    int32_t query;
} dfg_lifetime_index;

/* An empty index for buffers 0..n_buffers-1 with ranks in [0, n_ranks).
 * Free with dfg_lifetime_index_free, also after a failure. */
dfg_status dfg_lifetime_index_init(dfg_lifetime_index *index, int32_t n_ranks,
                                   int32_t n_buffers);
void dfg_lifetime_index_free(dfg_lifetime_index *index);

/* Adds buffer with lifetime [first, last] (ranks). */
dfg_status dfg_lifetime_index_insert(dfg_lifetime_index *index, int32_t buffer,
                                     int32_t first, int32_t last);

/* Appends to out every buffer in the index whose lifetime intersects
 * [first, last], each once. */
dfg_status dfg_lifetime_index_overlapping(dfg_lifetime_index *index,
                                          int32_t first, int32_t last,
                                          dfg_id_list *out);

/* Appends to out every buffer in the index alive at step, each once, and
 * removes them from the index. Every entry is visited once over all calls,
 * so taking all steps costs O(n log steps) in total. */
dfg_status dfg_lifetime_index_take_alive_at(dfg_lifetime_index *index,
                                            int32_t step, dfg_id_list *out);

#endif
