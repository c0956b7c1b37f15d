#include "passes/node_heap.h"

#include <string.h>
#include "util/error.h"
#include "util/memory.h"

dfg_status dfg_node_heap_init(dfg_node_heap *heap, int32_t n_nodes,
                              dfg_node_before before, const void *ctx,
                              const dfg_allocator *allocator)
{
    memset(heap, 0, sizeof *heap);
    heap->before = before;
    heap->ctx = ctx;
    size_t n = n_nodes > 0 ? (size_t)n_nodes : 0;
    heap->items = dfg_calloc(allocator, n + 1, sizeof *heap->items);
    heap->slot = dfg_calloc(allocator, n + 1, sizeof *heap->slot);
    if (!heap->items || !heap->slot)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "schedule: out of memory for %d ready nodes",
                         (int)n_nodes);
    for (size_t i = 0; i < n; i++)
        heap->slot[i] = -1;
    return DFG_OK;
}

void dfg_node_heap_free(dfg_node_heap *heap, const dfg_allocator *allocator)
{
    dfg_free(allocator, heap->items);
    dfg_free(allocator, heap->slot);
    memset(heap, 0, sizeof *heap);
}

static void put(dfg_node_heap *h, int32_t i, int32_t node)
{
    h->items[i] = node;
    h->slot[node] = i;
}

/* Moves the node at i up while it comes before its parent. */
static void sift_up(dfg_node_heap *h, int32_t i)
{
    int32_t node = h->items[i];
    while (i > 0) {
        int32_t parent = (i - 1) / 2;
        if (!h->before(h->ctx, node, h->items[parent]))
            break;
        put(h, i, h->items[parent]);
        i = parent;
    }
    put(h, i, node);
}

/* Moves the node at i down while a child comes before it. */
static void sift_down(dfg_node_heap *h, int32_t i)
{
    int32_t node = h->items[i];
    for (;;) {
        int32_t child = 2 * i + 1;
        if (child >= h->count)
            break;
        if (child + 1 < h->count &&
            h->before(h->ctx, h->items[child + 1], h->items[child]))
            child++;
        if (!h->before(h->ctx, h->items[child], node))
            break;
        put(h, i, h->items[child]);
        i = child;
    }
    put(h, i, node);
}

void dfg_node_heap_push(dfg_node_heap *heap, int32_t node)
{
    put(heap, heap->count++, node);
    sift_up(heap, heap->count - 1);
}

int32_t dfg_node_heap_pop(dfg_node_heap *heap)
{
    int32_t first = heap->items[0];
    heap->slot[first] = -1;
    if (--heap->count > 0) {
        put(heap, 0, heap->items[heap->count]);
        sift_down(heap, 0);
    }
    return first;
}

void dfg_node_heap_update(dfg_node_heap *heap, int32_t node)
{
    int32_t i = heap->slot[node];
    if (i < 0)
        return;
    sift_up(heap, i);
    sift_down(heap, heap->slot[node]);
}
