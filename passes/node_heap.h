/* An indexed binary min-heap of node indices, ordered by a caller's
 * comparison that may read state the caller changes: after changing what
 * a held node compares by, the caller calls dfg_node_heap_update for it.
 * The memory-aware scheduler (passes/schedule_order.c) keeps its ready
 * nodes here, so that choosing the next one costs O(log ready), not a
 * scan of every ready node.
 *
 * The heap owns its two arrays (from the allocator given to init, which
 * must outlive it); ctx is the caller's and must outlive the heap. */
#ifndef DFG_NODE_HEAP_H
#define DFG_NODE_HEAP_H

#include <stdint.h>
#include "dfg/allocator.h"
#include "dfg/status.h"

/* 1 if node a comes strictly before node b; a total order on held nodes. */
typedef int (*dfg_node_before)(const void *ctx, int32_t a, int32_t b);

typedef struct dfg_node_heap {
    int32_t *items;       /* [capacity] the heap */
    int32_t *slot;        /* [capacity] a node's index in items, or -1 */
    int32_t count;
    dfg_node_before before;
    const void *ctx;
} dfg_node_heap;

/* An empty heap for nodes 0..n_nodes-1. Free with dfg_node_heap_free,
 * also after a failure. */
dfg_status dfg_node_heap_init(dfg_node_heap *heap, int32_t n_nodes,
                              dfg_node_before before, const void *ctx,
                              const dfg_allocator *allocator);
void dfg_node_heap_free(dfg_node_heap *heap, const dfg_allocator *allocator);

/* node must not be held. O(log count). */
void dfg_node_heap_push(dfg_node_heap *heap, int32_t node);
/* Removes and returns the first node; the heap must not be empty. */
int32_t dfg_node_heap_pop(dfg_node_heap *heap);
/* Restores the order after node's key changed either way; does nothing
 * for a node not held. */
void dfg_node_heap_update(dfg_node_heap *heap, int32_t node);

static inline int dfg_node_heap_holds(const dfg_node_heap *heap, int32_t node)
{
    return heap->slot[node] >= 0;
}

#endif
