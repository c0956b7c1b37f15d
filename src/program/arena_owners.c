/* The arena's bytes and the tensors they hold (arena_owners.h). A node
 * whose value is pending is uniform and its children are stale; a node
 * that is not uniform has nothing pending, so its children are exact and
 * a query can descend without writing. */
#include "program/arena_owners.h"

#include <stdlib.h>
#include <string.h>
#include "util/error.h"
#include "util/memory.h"

#define MIXED (-2)

static int compare_offsets(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

dfg_status dfg_arena_owners_init(dfg_arena_owners *o, const int64_t *offsets,
                                 int32_t n, const dfg_allocator *allocator)
{
    memset(o, 0, sizeof *o);
    o->allocator = allocator;
    size_t nodes = 4 * ((size_t)n + 1);
    o->points = dfg_alloc(allocator, ((size_t)n + 1) * sizeof *o->points);
    o->owner = dfg_alloc(allocator, nodes * sizeof *o->owner);
    o->klass = dfg_alloc(allocator, nodes * sizeof *o->klass);
    o->pending = dfg_calloc(allocator, nodes, 1);
    if (!o->points || !o->owner || !o->klass || !o->pending) {
        dfg_arena_owners_free(o);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "program check: %d arena offsets", (int)n);
    }
    if (n)
        memcpy(o->points, offsets, (size_t)n * sizeof *offsets);
    qsort(o->points, (size_t)n, sizeof *o->points, compare_offsets);
    int32_t distinct = 0;
    for (int32_t i = 0; i < n; i++)
        if (distinct == 0 || o->points[i] != o->points[distinct - 1])
            o->points[distinct++] = o->points[i];
    o->n_segments = distinct > 1 ? distinct - 1 : 0;
    for (size_t i = 0; i < nodes; i++)
        o->owner[i] = o->klass[i] = DFG_OWNER_NONE;
    return DFG_OK;
}

void dfg_arena_owners_free(dfg_arena_owners *o)
{
    dfg_free(o->allocator, o->points);
    dfg_free(o->allocator, o->owner);
    dfg_free(o->allocator, o->klass);
    dfg_free(o->allocator, o->pending);
    memset(o, 0, sizeof *o);
}

/* The segment that starts at byte offset x (n_segments for the last
 * point, or for an offset past every point). */
static int32_t segment_at(const dfg_arena_owners *o, int64_t x)
{
    int32_t lo = 0, hi = o->n_segments + 1;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (o->points[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void set_node(dfg_arena_owners *o, size_t node, int32_t owner,
                     int32_t klass)
{
    o->owner[node] = owner;
    o->klass[node] = klass;
    o->pending[node] = 1;
}

static void write_range(dfg_arena_owners *o, size_t node, int32_t l, int32_t r,
                        int32_t a, int32_t b, int32_t owner, int32_t klass)
{
    if (b <= l || r <= a)
        return;
    if (a <= l && r <= b) {
        set_node(o, node, owner, klass);
        return;
    }
    if (o->pending[node]) {
        set_node(o, 2 * node, o->owner[node], o->klass[node]);
        set_node(o, 2 * node + 1, o->owner[node], o->klass[node]);
        o->pending[node] = 0;
    }
    int32_t m = l + (r - l) / 2;
    write_range(o, 2 * node, l, m, a, b, owner, klass);
    write_range(o, 2 * node + 1, m, r, a, b, owner, klass);
    o->owner[node] = o->owner[2 * node] == o->owner[2 * node + 1]
                         ? o->owner[2 * node] : MIXED;
    o->klass[node] = o->klass[2 * node] == o->klass[2 * node + 1]
                         ? o->klass[2 * node] : MIXED;
}

void dfg_arena_owners_write(dfg_arena_owners *o, int64_t begin, int64_t end,
                            int32_t owner, int32_t klass)
{
    if (o->n_segments == 0)
        return;
    int32_t a = segment_at(o, begin), b = segment_at(o, end);
    if (a < b)
        write_range(o, 1, 0, o->n_segments, a, b, owner, klass);
}

static int32_t first_mismatch(const dfg_arena_owners *o, size_t node,
                              int32_t l, int32_t r, int32_t a, int32_t b,
                              int32_t want, int by_class)
{
    if (b <= l || r <= a)
        return DFG_OWNER_MATCH;
    int32_t value = by_class ? o->klass[node] : o->owner[node];
    if (value != MIXED)
        return value == want ? DFG_OWNER_MATCH : value;
    int32_t m = l + (r - l) / 2;
    int32_t left = first_mismatch(o, 2 * node, l, m, a, b, want, by_class);
    return left != DFG_OWNER_MATCH
               ? left
               : first_mismatch(o, 2 * node + 1, m, r, a, b, want, by_class);
}

int32_t dfg_arena_owners_mismatch(const dfg_arena_owners *o, int64_t begin,
                                  int64_t end, int32_t want, int by_class)
{
    if (o->n_segments == 0)
        return DFG_OWNER_MATCH;
    int32_t a = segment_at(o, begin), b = segment_at(o, end);
    if (a >= b)
        return DFG_OWNER_MATCH;
    return first_mismatch(o, 1, 0, o->n_segments, a, b, want, by_class);
}
