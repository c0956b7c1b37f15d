#include "program/occupancy_sweep.h"

#include <stdlib.h>
#include "util/error.h"
#include "util/memory.h"

/* The live set: a treap over occupancy indices, keyed by (begin, index). */
typedef struct live_set {
    const dfg_occupancy *occ;
    int32_t *left, *right;
    uint32_t *priority;
    int64_t *max_end;   /* highest end in the node's subtree */
    int32_t root;
} live_set;

static int key_less(const live_set *s, int32_t x, int64_t begin, int32_t index)
{
    return s->occ[x].begin < begin || (s->occ[x].begin == begin && x < index);
}

static void update(live_set *s, int32_t x)
{
    int64_t m = s->occ[x].end;
    if (s->left[x] >= 0 && s->max_end[s->left[x]] > m)
        m = s->max_end[s->left[x]];
    if (s->right[x] >= 0 && s->max_end[s->right[x]] > m)
        m = s->max_end[s->right[x]];
    s->max_end[x] = m;
}

/* Splits t into keys < (begin, index) and the rest. */
static void split(live_set *s, int32_t t, int64_t begin, int32_t index,
                  int32_t *lo, int32_t *hi)
{
    if (t < 0) {
        *lo = *hi = -1;
    } else if (key_less(s, t, begin, index)) {
        split(s, s->right[t], begin, index, &s->right[t], hi);
        update(s, t);
        *lo = t;
    } else {
        split(s, s->left[t], begin, index, lo, &s->left[t]);
        update(s, t);
        *hi = t;
    }
}

static int32_t merge(live_set *s, int32_t lo, int32_t hi)
{
    if (lo < 0)
        return hi;
    if (hi < 0)
        return lo;
    if (s->priority[lo] > s->priority[hi]) {
        s->right[lo] = merge(s, s->right[lo], hi);
        update(s, lo);
        return lo;
    }
    s->left[hi] = merge(s, lo, s->left[hi]);
    update(s, hi);
    return hi;
}

static void insert(live_set *s, int32_t x)
{
    int32_t lo, hi;
    s->left[x] = s->right[x] = -1;
    s->max_end[x] = s->occ[x].end;
    split(s, s->root, s->occ[x].begin, x, &lo, &hi);
    s->root = merge(s, merge(s, lo, x), hi);
}

static void erase(live_set *s, int32_t x)
{
    int32_t lo, mid, hi;
    split(s, s->root, s->occ[x].begin, x, &lo, &mid);
    split(s, mid, s->occ[x].begin, x + 1, &mid, &hi);
    s->root = merge(s, lo, hi);
}

/* A live occupancy of another group sharing a byte with x, or -1. */
static int32_t find_conflict(const live_set *s, int32_t t, int32_t x)
{
    const dfg_occupancy *o = &s->occ[x];
    if (t < 0 || s->max_end[t] <= o->begin)
        return -1;
    int32_t found = find_conflict(s, s->left[t], x);
    if (found >= 0)
        return found;
    if (s->occ[t].begin >= o->end)  /* so does all of the right subtree */
        return -1;
    if (s->occ[t].end > o->begin && s->occ[t].group != o->group)
        return t;
    return find_conflict(s, s->right[t], x);
}

/* Occupancies ordered by a step: when they start, or when they end. */
typedef struct step_order {
    int32_t step;
    int32_t index;
} step_order;

static int compare_step_order(const void *a, const void *b)
{
    const step_order *x = a, *y = b;
    if (x->step != y->step)
        return (x->step > y->step) - (x->step < y->step);
    return (x->index > y->index) - (x->index < y->index);
}

static uint32_t mix(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

dfg_status dfg_find_shared_bytes(const dfg_occupancy *occupancies, int32_t n,
                                 const dfg_allocator *allocator, int32_t *a,
                                 int32_t *b)
{
    *a = *b = -1;
    size_t count = (size_t)n + 1;
    const dfg_allocator *m = allocator;
    live_set s = {occupancies, dfg_alloc(m, count * sizeof(int32_t)),
                  dfg_alloc(m, count * sizeof(int32_t)),
                  dfg_alloc(m, count * sizeof(uint32_t)),
                  dfg_alloc(m, count * sizeof(int64_t)), -1};
    step_order *starts = dfg_alloc(m, count * sizeof *starts);
    step_order *ends = dfg_alloc(m, count * sizeof *ends);
    dfg_status status = DFG_OK;
    if (!s.left || !s.right || !s.priority || !s.max_end || !starts || !ends)
        status = dfg_error(DFG_ERR_OUT_OF_MEMORY, "verifying %d tensors", n);
    for (int32_t i = 0; status == DFG_OK && i < n; i++) {
        starts[i] = (step_order){occupancies[i].first_step, i};
        ends[i] = (step_order){occupancies[i].last_step, i};
        s.priority[i] = mix((uint32_t)i + 0x9e3779b9u);
    }
    if (status == DFG_OK) {
        qsort(starts, (size_t)n, sizeof *starts, compare_step_order);
        qsort(ends, (size_t)n, sizeof *ends, compare_step_order);
    }
    /* Before the occupancies starting at a step join, those that ended
     * earlier leave; lifetimes are closed, so one ending at the step stays. */
    for (int32_t i = 0, e = 0; status == DFG_OK && i < n && *a < 0; i++) {
        int32_t x = starts[i].index;
        const dfg_occupancy *o = &occupancies[x];
        for (; ends[e].step < o->first_step; e++)
            if (occupancies[ends[e].index].begin < occupancies[ends[e].index].end)
                erase(&s, ends[e].index);
        if (o->begin == o->end)
            continue;
        int32_t other = find_conflict(&s, s.root, x);
        if (other >= 0) {
            *a = other;
            *b = x;
        }
        insert(&s, x);
    }
    dfg_free(m, s.left);
    dfg_free(m, s.right);
    dfg_free(m, s.priority);
    dfg_free(m, s.max_end);
    dfg_free(m, starts);
    dfg_free(m, ends);
    return status;
}
