#include "passes/planners/lifetime_index.h"

#include <string.h>
#include "util/error.h"
#include "util/memory.h"

#define BLOCK DFG_LIFETIME_BLOCK
#define CHUNK_ENTRIES 4096

struct dfg_lifetime_chunk {
    struct dfg_lifetime_chunk *next;
    int64_t used, capacity;  /* entries */
    dfg_lifetime_entry items[];
};

/* count entries from the index's chunks, a new chunk when the newest one
 * lacks them. */
static dfg_lifetime_entry *carve(dfg_lifetime_index *index, int64_t count)
{
    struct dfg_lifetime_chunk *chunk = index->chunks;
    if (!chunk || chunk->capacity - chunk->used < count) {
        int64_t capacity = count > CHUNK_ENTRIES ? count : CHUNK_ENTRIES;
        chunk = dfg_alloc(index->allocator,
                          sizeof *chunk +
                              (size_t)capacity * sizeof chunk->items[0]);
        if (!chunk)
            return NULL;
        *chunk = (struct dfg_lifetime_chunk){index->chunks, 0, capacity};
        index->chunks = chunk;
    }
    chunk->used += count;
    return &chunk->items[chunk->used - count];
}

/* Room for one more entry in list: twice its capacity, from index's
 * chunks when index is given, else from allocator. */
static dfg_status reserve_one(dfg_lifetime_index *index,
                              const dfg_allocator *allocator,
                              dfg_entry_list *list)
{
    if (list->count < list->capacity)
        return DFG_OK;
    int64_t wanted = list->capacity > 0 ? 2 * (int64_t)list->capacity : 4;
    if (wanted > INT32_MAX)
        return dfg_error(DFG_ERR_OVERFLOW, "list of %d buffers", list->count);
    size_t old_bytes = (size_t)list->count * sizeof *list->items;
    dfg_lifetime_entry *bigger;
    if (index) {
        bigger = carve(index, wanted);
        if (bigger && old_bytes)
            memcpy(bigger, list->items, old_bytes);
    } else {
        bigger = dfg_realloc(allocator, list->items, old_bytes,
                             (size_t)wanted * sizeof *bigger);
    }
    if (!bigger)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "list of %d buffers",
                         list->count + 1);
    list->items = bigger;
    list->capacity = (int32_t)wanted;
    return DFG_OK;
}

dfg_status dfg_entry_list_push(const dfg_allocator *allocator,
                               dfg_entry_list *list,
                               const dfg_lifetime_entry *entry)
{
    dfg_status status = reserve_one(NULL, allocator, list);
    if (status == DFG_OK)
        list->items[list->count++] = *entry;
    return status;
}

dfg_status dfg_lifetime_index_init(dfg_lifetime_index *index, int32_t n_ranks,
                                   int32_t n_buffers,
                                   const dfg_allocator *allocator)
{
    memset(index, 0, sizeof *index);
    index->allocator = allocator;
    int32_t blocks = n_ranks / BLOCK + 1;
    index->leaves = 1;
    while (index->leaves < blocks) {
        index->leaves *= 2;
        index->depth++;
    }
    size_t nodes = 2 * (size_t)index->leaves;
    index->nodes = dfg_calloc(allocator, nodes, sizeof *index->nodes);
    index->filled = dfg_calloc(allocator, nodes, sizeof *index->filled);
    index->taken = dfg_calloc(allocator, (size_t)n_buffers + 1,
                              sizeof *index->taken);
    if (!index->nodes || !index->filled || !index->taken)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "lifetime index of %d steps, %d buffers", n_ranks,
                         n_buffers);
    return DFG_OK;
}

void dfg_lifetime_index_free(dfg_lifetime_index *index)
{
    while (index->chunks) {
        struct dfg_lifetime_chunk *next = index->chunks->next;
        dfg_free(index->allocator, index->chunks);
        index->chunks = next;
    }
    dfg_free(index->allocator, index->nodes);
    dfg_free(index->allocator, index->filled);
    dfg_free(index->allocator, index->taken);
    memset(index, 0, sizeof *index);
}

dfg_status dfg_lifetime_index_insert(dfg_lifetime_index *index,
                                     const dfg_lifetime_entry *entry)
{
    /* The nodes tiling the blocks, found bottom-up; then their ancestors
     * learn that they hold entries, up to the first that knew already. */
    int32_t lo = index->leaves + entry->first / BLOCK;
    int32_t hi = index->leaves + entry->last / BLOCK + 1;
    for (; lo < hi; lo /= 2, hi /= 2) {
        int32_t tiles[2] = {lo & 1 ? lo++ : 0, hi & 1 ? --hi : 0};
        for (int t = 0; t < 2; t++) {
            if (tiles[t] == 0)
                continue;
            dfg_entry_list *list = &index->nodes[tiles[t]];
            dfg_status status = reserve_one(index, NULL, list);
            if (status != DFG_OK)
                return status;
            list->items[list->count++] = *entry;
            for (int32_t v = tiles[t]; v >= 1 && !index->filled[v]; v /= 2)
                index->filled[v] = 1;
        }
    }
    return DFG_OK;
}

dfg_status dfg_lifetime_index_overlapping(const dfg_lifetime_index *index,
                                          int32_t first, int32_t last,
                                          dfg_entry_list *out)
{
    /* A depth-first walk over the filled nodes that meet the query's
     * blocks, with an explicit stack: at most two nodes pending per level. */
    int32_t first_block = first / BLOCK, last_block = last / BLOCK;
    struct pending { int32_t node, lo, hi; } stack[2 * 32];
    int32_t top = 0;
    if (index->filled[1])
        stack[top++] = (struct pending){1, 0, index->leaves - 1};
    while (top > 0) {
        struct pending p = stack[--top];
        /* An entry stored at several nodes is reported by the one whose
         * blocks hold the first step it shares with the query. */
        const dfg_entry_list *here = &index->nodes[p.node];
        for (int32_t j = 0; j < here->count; j++) {
            const dfg_lifetime_entry *e = &here->items[j];
            if (e->first > last || e->last < first)
                continue;
            int32_t shared_block = (e->first > first ? e->first : first) / BLOCK;
            if (shared_block < p.lo || shared_block > p.hi)
                continue;
            if (out->count < out->capacity) { /* no call while it fits */
                out->items[out->count++] = *e;
                continue;
            }
            dfg_status status = dfg_entry_list_push(index->allocator, out, e);
            if (status != DFG_OK)
                return status;
        }
        if (p.lo == p.hi)
            continue;
        int32_t mid = p.lo + (p.hi - p.lo) / 2;
        if (mid < last_block && index->filled[2 * p.node + 1])
            stack[top++] = (struct pending){2 * p.node + 1, mid + 1, p.hi};
        if (first_block <= mid && index->filled[2 * p.node])
            stack[top++] = (struct pending){2 * p.node, p.lo, mid};
    }
    return DFG_OK;
}

dfg_status dfg_lifetime_index_take_alive_at(dfg_lifetime_index *index,
                                            int32_t step, dfg_entry_list *out)
{
    /* Only the nodes on the path from step's block to the root can hold
     * entries alive at step. Entries of buffers taken through another of
     * their pieces are dropped on the way. */
    for (int32_t node = index->leaves + step / BLOCK; node >= 1; node /= 2) {
        dfg_entry_list *here = &index->nodes[node];
        int32_t kept = 0;
        for (int32_t j = 0; j < here->count; j++) {
            dfg_lifetime_entry e = here->items[j];
            if (!index->taken[e.buffer] && (e.first > step || e.last < step)) {
                here->items[kept++] = e;
                continue;
            }
            if (!index->taken[e.buffer]) {
                index->taken[e.buffer] = 1;
                dfg_status status = dfg_entry_list_push(index->allocator, out,
                                                        &e);
                if (status != DFG_OK)
                    return status;
            }
        }
        here->count = kept;
    }
    return DFG_OK;
}
