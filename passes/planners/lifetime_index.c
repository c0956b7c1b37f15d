#include "lifetime_index.h"

#include <stdlib.h>
#include <string.h>
#include "error.h"

/* The mark of a buffer that take_alive_at removed: no query reports it. */
#define TAKEN (-1)

static int grow(void **array, int32_t *capacity, int32_t needed, size_t item)
{
    if (needed <= *capacity)
        return 0;
    int64_t wanted = *capacity > 0 ? 2 * (int64_t)*capacity : 16;
    while (wanted < needed)
        wanted *= 2;
    if (wanted > INT32_MAX)
        wanted = INT32_MAX;
    void *bigger = realloc(*array, (size_t)wanted * item);
    if (!bigger)
        return -1;
    *array = bigger;
    *capacity = (int32_t)wanted;
    return 0;
}

dfg_status dfg_id_list_push(dfg_id_list *list, int32_t id)
{
    if (list->count == list->capacity &&
        grow((void **)&list->ids, &list->capacity, list->count + 1,
             sizeof *list->ids) != 0)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "list of %d buffers",
                         list->count + 1);
    list->ids[list->count++] = id;
    return DFG_OK;
}

dfg_status dfg_lifetime_index_init(dfg_lifetime_index *index, int32_t n_ranks,
                                   int32_t n_buffers)
{
    memset(index, 0, sizeof *index);
    index->leaves = 1;
    while (index->leaves < n_ranks)
        index->leaves *= 2;
    size_t nodes = 2 * (size_t)index->leaves;
    index->head = malloc(nodes * sizeof *index->head);
    index->count = calloc(nodes, sizeof *index->count);
    index->mark = calloc((size_t)n_buffers + 1, sizeof *index->mark);
    if (!index->head || !index->count || !index->mark)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "lifetime index of %d steps, %d buffers", n_ranks,
                         n_buffers);
    memset(index->head, 0xff, nodes * sizeof *index->head);
    return DFG_OK;
}

void dfg_lifetime_index_free(dfg_lifetime_index *index)
{
    free(index->head);
    free(index->count);
    free(index->entries);
    free(index->mark);
    memset(index, 0, sizeof *index);
}

static int32_t insert_at(dfg_lifetime_index *index, int32_t node, int32_t lo,
                         int32_t hi, int32_t first, int32_t last,
                         int32_t buffer)
{
    if (last < lo || hi < first)
        return 0;
    int32_t added;
    if (first <= lo && hi <= last) {
        int32_t e = index->n_entries++;
        index->entries[e].buffer = buffer;
        index->entries[e].next = index->head[node];
        index->head[node] = e;
        added = 1;
    } else {
        int32_t mid = lo + (hi - lo) / 2;
        added = insert_at(index, 2 * node, lo, mid, first, last, buffer) +
                insert_at(index, 2 * node + 1, mid + 1, hi, first, last, buffer);
    }
    index->count[node] += added;
    return added;
}

dfg_status dfg_lifetime_index_insert(dfg_lifetime_index *index, int32_t buffer,
                                     int32_t first, int32_t last)
{
    /* A lifetime tiles into at most two nodes per tree level. */
    int32_t levels = 1;
    for (int32_t l = index->leaves; l > 1; l /= 2)
        levels++;
    int32_t needed = index->n_entries + 2 * levels;
    if (grow((void **)&index->entries, &index->entry_capacity, needed,
             sizeof *index->entries) != 0)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "lifetime index of %d entries",
                         needed);
    insert_at(index, 1, 0, index->leaves - 1, first, last, buffer);
    return DFG_OK;
}

/* Every entry of a node whose range meets [first, last] overlaps it: the
 * entry's lifetime covers the whole node. */
static dfg_status collect(dfg_lifetime_index *index, int32_t node, int32_t lo,
                          int32_t hi, int32_t first, int32_t last,
                          dfg_id_list *out)
{
    if (index->count[node] == 0 || last < lo || hi < first)
        return DFG_OK;
    for (int32_t e = index->head[node]; e >= 0; e = index->entries[e].next) {
        int32_t b = index->entries[e].buffer;
        if (index->mark[b] == index->query || index->mark[b] == TAKEN)
            continue;
        index->mark[b] = index->query;
        dfg_status status = dfg_id_list_push(out, b);
        if (status != DFG_OK)
            return status;
    }
    if (lo == hi)
        return DFG_OK;
    int32_t mid = lo + (hi - lo) / 2;
    dfg_status status = collect(index, 2 * node, lo, mid, first, last, out);
    if (status != DFG_OK)
        return status;
    return collect(index, 2 * node + 1, mid + 1, hi, first, last, out);
}

dfg_status dfg_lifetime_index_overlapping(dfg_lifetime_index *index,
                                          int32_t first, int32_t last,
                                          dfg_id_list *out)
{
    index->query++;  /* marks start at 0, so the first query is 1 */
    return collect(index, 1, 0, index->leaves - 1, first, last, out);
}

dfg_status dfg_lifetime_index_take_alive_at(dfg_lifetime_index *index,
                                            int32_t step, dfg_id_list *out)
{
    /* The nodes alive at step are those on the path from its leaf to the
     * root; every entry there covers step, so each list empties at once. */
    int32_t removed = 0;
    for (int32_t node = index->leaves + step; node >= 1; node /= 2) {
        for (int32_t e = index->head[node]; e >= 0; e = index->entries[e].next) {
            int32_t b = index->entries[e].buffer;
            removed++;
            if (index->mark[b] == TAKEN)
                continue;
            index->mark[b] = TAKEN;
            dfg_status status = dfg_id_list_push(out, b);
            if (status != DFG_OK)
                return status;
        }
        index->head[node] = -1;
        index->count[node] -= removed;
    }
    return DFG_OK;
}
