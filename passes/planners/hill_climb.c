/* Hill climbing over the placement order (after TVM USMP's hill climb).
 * It orders units (plan_units.h): a rigid group moves as one.
 *
 * A greedy best-fit placement depends only on the order in which it
 * considers the buffers. Greedy by size is a good order but can put a
 * large buffer where it blocks the peak (mnasnet1_0's first blocks: a
 * 2.3 MiB tensor placed above the bytes the peak step needs). The climb
 * starts from the size order and repeatedly either moves the buffer that
 * sets the arena's top to a random earlier position or moves a random
 * buffer placed before it to just after it (a blocker out of its way),
 * keeps the new order when its arena is no larger, and stops at the lower
 * bound. Those two moves only reorder the buffers placed before the top
 * one, and can stall in a local minimum (fcn_resnet50: 1.07x its bound,
 * with 1 MiB im2col workspaces of layer4's dilated convolutions at two
 * steps that each set the peak): when the climb ends above the bound, a
 * second one from the size order, with half the tries, also moves any
 * buffer to any position, and the smaller arena is kept. Random choices come from a fixed seed,
 * so plans are reproducible.
 *
 * Each try re-places every buffer (O(n log n)); the number of tries
 * shrinks with n so that a plan of 10^5 buffers costs about as much as a
 * few greedy plans. */
#include <stdlib.h>
#include <string.h>
#include "best_fit.h"
#include "error.h"

/* Tries for n buffers: HILL_CLIMB_WORK / n, between 2 and HILL_CLIMB_TRIES. */
#define HILL_CLIMB_TRIES 300
#define HILL_CLIMB_WORK 60000

typedef struct climb {
    dfg_buffer *buffers;
    int32_t n;
    const int64_t *aligned;
    const dfg_step_ranks *ranks;
    const dfg_plan_units *units;
    int32_t m;           /* units */
    int32_t *order;      /* current placement order of the m units */
    int32_t *trial;      /* the order being tried */
    int64_t *offsets;    /* offsets of the best placement */
    uint64_t rng;
    int moves;           /* 2: around the top buffer; 3: also anywhere */
} climb;

#define HILL_CLIMB_SEED 0x5eedc11bull

static uint64_t next_random(uint64_t *state)
{
    /* splitmix64 */
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Places every buffer in `order`; *arena gets the arena size and *top
 * the position in order of the first buffer reaching it. */
static dfg_status place_all(climb *c, const int32_t *order, int64_t *arena,
                            int32_t *top)
{
    dfg_best_fit fit;
    dfg_status status = dfg_best_fit_init(&fit, c->buffers, c->n, c->aligned,
                                          c->ranks, c->units);
    for (int32_t i = 0; status == DFG_OK && i < c->m; i++)
        status = dfg_best_fit_place(&fit, order[i]);
    *arena = fit.arena;
    *top = 0;
    for (int32_t i = 0; status == DFG_OK && i < c->m; i++) {
        int64_t extent = c->units->extent[order[i]];
        if (extent > 0 && c->buffers[order[i]].offset + extent == fit.arena) {
            *top = i;
            break;
        }
    }
    dfg_best_fit_free(&fit);
    return status;
}

static void keep_offsets(climb *c)
{
    for (int32_t i = 0; i < c->n; i++)
        c->offsets[i] = c->buffers[i].offset;
}

/* trial = order with the buffer at position `from` moved to `to` < from. */
static void move_earlier(climb *c, int32_t from, int32_t to)
{
    memcpy(c->trial, c->order, (size_t)to * sizeof *c->trial);
    c->trial[to] = c->order[from];
    memcpy(c->trial + to + 1, c->order + to, (size_t)(from - to) * sizeof *c->trial);
    memcpy(c->trial + from + 1, c->order + from + 1,
           (size_t)(c->m - from - 1) * sizeof *c->trial);
}

/* trial = order with the buffer at position `from` moved to `to` > from. */
static void move_later(climb *c, int32_t from, int32_t to)
{
    memcpy(c->trial, c->order, (size_t)from * sizeof *c->trial);
    memcpy(c->trial + from, c->order + from + 1, (size_t)(to - from) * sizeof *c->trial);
    c->trial[to] = c->order[from];
    memcpy(c->trial + to + 1, c->order + to + 1,
           (size_t)(c->m - to - 1) * sizeof *c->trial);
}

/* trial = order with one buffer moved: the top buffer earlier, a buffer
 * before the top to just after it, or (three moves) any buffer anywhere. */
static void random_move(climb *c, int32_t top)
{
    uint64_t r = next_random(&c->rng);
    if (c->moves == 2) {
        int32_t other = (int32_t)((r >> 1) % (uint64_t)top);
        if (r & 1)
            move_earlier(c, top, other);
        else
            move_later(c, other, top);
        return;
    }
    int32_t other = top > 0 ? (int32_t)((r >> 2) % (uint64_t)top) : 0;
    int32_t from = (int32_t)((r >> 2) % (uint64_t)c->m);
    int32_t to = (int32_t)((r >> 34) % (uint64_t)c->m);
    if (r % 3 == 1 && top > 0)
        move_earlier(c, top, other);
    else if (r % 3 == 0 && top > 0)
        move_later(c, other, top);
    else if (to < from)
        move_earlier(c, from, to);
    else if (to > from)
        move_later(c, from, to);
    else
        memcpy(c->trial, c->order, (size_t)c->m * sizeof *c->trial);
}

static dfg_status climb_from_size_order(climb *c, int64_t bound,
                                        int64_t *arena_bytes)
{
    dfg_placement_key *keys = malloc(2 * ((size_t)c->m + 1) * sizeof *keys);
    if (!keys)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "hill_climb: %d buffers", c->n);
    for (int32_t i = 0; i < c->m; i++)
        keys[i] = dfg_placement_key_of(c->units, c->units->unit[i]);
    dfg_placement_keys_sort(keys, keys + c->m, c->m);
    for (int32_t i = 0; i < c->m; i++)
        c->order[i] = keys[i].buffer;
    free(keys);
    int64_t best;
    int32_t top;
    dfg_status status = place_all(c, c->order, &best, &top);
    keep_offsets(c);
    int32_t tries = c->m > 0 ? HILL_CLIMB_WORK / c->m : 0;
    tries = tries > HILL_CLIMB_TRIES ? HILL_CLIMB_TRIES : tries < 2 ? 2 : tries;
    if (c->moves == 3)
        tries = tries / 2 > 2 ? tries / 2 : 2; /* the second climb */
    c->rng = HILL_CLIMB_SEED;
    for (int32_t t = 0; status == DFG_OK && t < tries && best > bound; t++) {
        if (top == 0 && c->moves == 2)
            break; /* the top buffer is placed first: it sits at 0 */
        random_move(c, top);
        int64_t arena;
        int32_t trial_top;
        status = place_all(c, c->trial, &arena, &trial_top);
        if (status == DFG_OK && arena <= best) {
            int32_t *swap = c->order;
            c->order = c->trial;
            c->trial = swap;
            best = arena;
            top = trial_top;
            keep_offsets(c);
        }
    }
    for (int32_t i = 0; i < c->n; i++)
        c->buffers[i].offset = c->offsets[i];
    *arena_bytes = best;
    return status;
}

static dfg_status place_by_hill_climb(dfg_buffer *buffers, int32_t n,
                                      const int64_t *aligned,
                                      const dfg_step_ranks *ranks,
                                      const dfg_plan_units *units,
                                      int64_t *arena_bytes)
{
    climb c = {.buffers = buffers, .n = n, .aligned = aligned, .ranks = ranks,
               .units = units, .m = units->count, .moves = 2};
    c.order = malloc(((size_t)n + 1) * sizeof *c.order);
    c.trial = malloc(((size_t)n + 1) * sizeof *c.trial);
    c.offsets = malloc(((size_t)n + 1) * sizeof *c.offsets);
    int64_t *first = malloc(((size_t)n + 1) * sizeof *first);
    int64_t *live = calloc((size_t)ranks->count + 1, sizeof *live);
    dfg_status status = DFG_OK;
    if (!c.order || !c.trial || !c.offsets || !first || !live)
        status = dfg_error(DFG_ERR_OUT_OF_MEMORY, "hill_climb: %d buffers", n);
    int64_t bound = 0, second;
    if (status == DFG_OK) {
        dfg_step_ranks_live_bytes(ranks, n, aligned, live);
        for (int32_t s = 0; s < ranks->count; s++)
            bound = live[s] > bound ? live[s] : bound;
        status = climb_from_size_order(&c, bound, arena_bytes);
    }
    if (status == DFG_OK && *arena_bytes > bound) {
        for (int32_t i = 0; i < n; i++)
            first[i] = buffers[i].offset;
        c.moves = 3;
        status = climb_from_size_order(&c, bound, &second);
        if (status == DFG_OK && second < *arena_bytes)
            *arena_bytes = second;
        else
            for (int32_t i = 0; i < n; i++)
                buffers[i].offset = first[i];
    }
    free(live);
    free(first);
    free(c.order);
    free(c.trial);
    free(c.offsets);
    return status;
}

dfg_status dfg_plan_hill_climb(dfg_buffer *buffers, int32_t n,
                               int64_t alignment, int64_t *arena_bytes)
{
    return dfg_plan_with_ranks("hill_climb", place_by_hill_climb, buffers, n,
                               alignment, arena_bytes);
}
