/* Hill climbing over the placement order (after TVM USMP's hill climb).
 * It orders units (plan_units.h): a rigid group moves as one.
 *
 * A greedy best-fit placement depends only on the order in which it
 * considers the buffers. Greedy by size is a good order but can put a
 * large buffer where it blocks the peak (mnasnet1_0's first blocks: a
 * 2.3 MiB tensor placed above the bytes the peak step needs). The climb
 * starts from the size order and repeatedly picks a unit that reaches the
 * arena's top (a random one: a model of repeated layers has one per
 * layer, and the first one's may be a basin that the others are not) and
 * either moves it to a random earlier position or moves a buffer placed
 * before it to just after it (a blocker out of its way; half the time one
 * whose lifetime overlaps the top unit's, since in a deep model most
 * units placed before it belong to other layers). It keeps the new order
 * when its arena is smaller, or as small with no more units reaching the
 * top (a plateau is crossed by emptying the top one unit at a time), and
 * stops at the lower bound.
 *
 * Those two moves only reorder the buffers placed before the top one, and
 * a start can sit in a basin they never leave. So, while the best arena is
 * above the bound, the climb restarts (up to three times) and the smallest
 * arena is kept:
 * - from the area order (extent times lifetime, largest first): a
 *   long-lived buffer goes low before the short-lived large ones around
 *   it. vit_b_16's residual stream crosses encoder layers; in size order
 *   the 2.3 MiB MLP tensors take offset 0 and the residual sits above
 *   them, leaving under it, at the attention peak, a 0.53 MiB gap that no
 *   0.58 MiB tensor fits (1.13x the bound: the climb from there stalled
 *   even with 30,000 tries); from the area order the residual starts low
 *   and the climb reaches the bound;
 * - from the size order with a third move, any buffer to any position, for
 *   half the tries (fcn_resnet50: 1.07x its bound, with 1 MiB im2col
 *   workspaces of layer4's dilated convolutions at two steps that each set
 *   the peak);
 * - from the area order with the third move (vit_b_16 with its linear
 *   layers' bias adds and residuals fused into the matmuls: 1.13x its
 *   bound after the two climbs above, at it after this one).
 * Random choices come from a fixed seed, so plans are reproducible.
 *
 * Each try re-places the units from the first position its move changed
 * (O(n log n)); those before it are given the kept placement's bases
 * without a search, since a best fit depends only on the units placed
 * before it (resnet18's 224x224 training plan under a 33% budget, 216
 * trial plans: 30.7 -> 25.1 s; 32x32: 39.5 -> 35.6 s). The number of tries
 * shrinks with n so that a plan of 10^5 buffers costs about as much as a
 * few greedy plans, and a model of a few hundred units gets up to 1000
 * (vit_b_16's 284 units: 528 a climb). */
#include <stdlib.h>
#include <string.h>
#include "passes/planners/best_fit.h"
#include "util/error.h"
#include "util/memory.h"

/* Tries for m units: HILL_CLIMB_WORK / m, between 2 and HILL_CLIMB_TRIES;
 * LONG_CLIMB times as many for dfg_plan_hill_climb_long. */
#define HILL_CLIMB_TRIES 1000
#define HILL_CLIMB_WORK 150000
#define LONG_CLIMB 4

/* Where a climb starts. */
typedef enum start_order { BY_SIZE, BY_AREA } start_order;

typedef struct climb {
    dfg_buffer *buffers;
    int32_t n;
    const int64_t *aligned;
    const dfg_step_ranks *ranks;
    const dfg_plan_units *units;
    const dfg_allocator *allocator; /* of the arrays below and the fits */
    int32_t m;           /* units */
    int32_t *order;      /* current placement order of the m units */
    int32_t *trial;      /* the order being tried */
    int32_t *near;       /* scratch: positions of units live with the top one */
    int64_t *offsets;    /* offsets of the best placement */
    uint64_t rng;
    int moves;           /* 2: around the top buffer; 3: also anywhere */
    int32_t scale;       /* 1, or LONG_CLIMB: the tries times this */
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

/* The base the kept placement gave a unit. */
static int64_t kept_base(const climb *c, int32_t unit)
{
    const dfg_plan_units *u = c->units;
    int32_t cell = c->buffers[unit].group == 0
                       ? unit : u->cells[u->cells_begin[unit]];
    return c->offsets[cell] - c->buffers[cell].cell_offset;
}

/* Places every buffer in `order`, whose first `same` units are those of
 * c->order (their bases are the kept placement's, replayed without a
 * search: a best fit depends only on the units placed before); *arena
 * gets the arena size, *top the position in order of the first unit
 * reaching it and *at_top how many units reach it. A placement that
 * cannot end below `limit` with at most `limit_at_top` units at its top
 * (the kept one's) stops there: an arena only grows as units are placed,
 * and while it stays the units reaching it stay at its top. *arena is
 * then set to limit + 1 and the buffers' offsets are partial. */
static dfg_status place_all(climb *c, const int32_t *order, int32_t same,
                            int64_t limit, int32_t limit_at_top,
                            int64_t *arena, int32_t *top, int32_t *at_top)
{
    dfg_best_fit fit;
    dfg_status status = dfg_best_fit_init(&fit, c->buffers, c->n, c->aligned,
                                          c->ranks, c->units, c->allocator);
    int32_t reaching = 0; /* units placed so far whose end is fit.arena */
    for (int32_t i = 0; status == DFG_OK && i < c->m; i++) {
        int64_t before = fit.arena, extent = c->units->extent[order[i]];
        status = i < same
                     ? dfg_best_fit_place_at(&fit, order[i],
                                             kept_base(c, order[i]))
                     : dfg_best_fit_place(&fit, order[i]);
        int reaches = extent > 0 &&
                      c->buffers[order[i]].offset + extent == fit.arena;
        reaching = fit.arena > before ? reaches : reaching + reaches;
        if (fit.arena > limit ||
            (fit.arena == limit && reaching > limit_at_top)) {
            fit.arena = limit + 1;
            break;
        }
    }
    *arena = fit.arena;
    *top = -1;
    *at_top = 0;
    for (int32_t i = 0; status == DFG_OK && fit.arena <= limit && i < c->m;
         i++) {
        int64_t extent = c->units->extent[order[i]];
        if (extent > 0 && c->buffers[order[i]].offset + extent == fit.arena) {
            *top = *top < 0 ? i : *top;
            ++*at_top;
        }
    }
    *top = *top < 0 ? 0 : *top;
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

/* The position in c->order of a random one of the at_top units that
 * reach `arena` in the kept placement. */
static int32_t random_top(climb *c, int64_t arena, int32_t at_top)
{
    int32_t k = (int32_t)(next_random(&c->rng) % (uint64_t)at_top);
    for (int32_t i = 0; i < c->m; i++) {
        int32_t unit = c->order[i];
        int64_t extent = c->units->extent[unit];
        if (extent > 0 && c->offsets[unit] + extent == arena && k-- == 0)
            return i;
    }
    return 0;
}

/* Fills c->near with the positions before `top` of the units whose
 * lifetimes overlap the top unit's: the ones that can block its gap (in a
 * model of many layers, most units placed before it belong to others).
 * Returns how many. */
static int32_t live_with(climb *c, int32_t top)
{
    const dfg_plan_units *u = c->units;
    int32_t unit = c->order[top], n = 0;
    for (int32_t i = 0; i < top; i++) {
        int32_t other = c->order[i];
        if (u->first[other] <= u->last[unit] && u->first[unit] <= u->last[other])
            c->near[n++] = i;
    }
    return n;
}

/* trial = order with one buffer moved: the top buffer earlier or a buffer
 * before the top to just after it (half the time one live with it), or
 * (three moves) any buffer anywhere. Returns how many units lead both
 * orders unchanged. */
static int32_t random_move(climb *c, int32_t top)
{
    uint64_t r = next_random(&c->rng);
    if (c->moves == 2) {
        int32_t other = (int32_t)((r >> 2) % (uint64_t)top);
        int32_t near = (r & 2) ? live_with(c, top) : 0;
        if (near > 0)
            other = c->near[(r >> 2) % (uint64_t)near];
        if (r & 1)
            move_earlier(c, top, other);
        else
            move_later(c, other, top);
        return other;
    }
    int32_t other = top > 0 ? (int32_t)((r >> 2) % (uint64_t)top) : 0;
    int32_t from = (int32_t)((r >> 2) % (uint64_t)c->m);
    int32_t to = (int32_t)((r >> 34) % (uint64_t)c->m);
    if (r % 3 == 1 && top > 0) {
        move_earlier(c, top, other);
        return other;
    }
    if (r % 3 == 0 && top > 0) {
        move_later(c, other, top);
        return other;
    }
    if (to < from)
        move_earlier(c, from, to);
    else if (to > from)
        move_later(c, from, to);
    else
        memcpy(c->trial, c->order, (size_t)c->m * sizeof *c->trial);
    return to < from ? to : from;
}

/* The placement key of a unit in the area order: its extent times the
 * steps it lives (saturated), then as in the size order. */
static dfg_placement_key area_key(const dfg_plan_units *units, int32_t unit)
{
    dfg_placement_key key = dfg_placement_key_of(units, unit);
    int64_t area;
    if (__builtin_mul_overflow(key.size, (int64_t)key.length + 1, &area))
        area = INT64_MAX;
    key.size = area;
    return key;
}

static dfg_status climb_from(climb *c, start_order start, int64_t bound,
                             int64_t *arena_bytes)
{
    dfg_placement_key *keys =
        dfg_alloc(c->allocator, 2 * ((size_t)c->m + 1) * sizeof *keys);
    if (!keys)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "hill_climb: %d buffers", c->n);
    for (int32_t i = 0; i < c->m; i++)
        keys[i] = start == BY_AREA ? area_key(c->units, c->units->unit[i])
                                   : dfg_placement_key_of(c->units, c->units->unit[i]);
    dfg_placement_keys_sort(keys, keys + c->m, c->m);
    for (int32_t i = 0; i < c->m; i++)
        c->order[i] = keys[i].buffer;
    dfg_free(c->allocator, keys);
    int64_t best;
    int32_t top, at_top;
    dfg_status status = place_all(c, c->order, 0, INT64_MAX - 1, INT32_MAX,
                                  &best, &top, &at_top);
    keep_offsets(c);
    int32_t tries = c->m > 0 ? HILL_CLIMB_WORK / c->m : 0;
    tries = tries > HILL_CLIMB_TRIES ? HILL_CLIMB_TRIES : tries < 2 ? 2 : tries;
    tries *= c->scale;
    if (c->moves == 3)
        tries = tries / 2 > 2 ? tries / 2 : 2; /* the second climb */
    c->rng = HILL_CLIMB_SEED;
    for (int32_t t = 0; status == DFG_OK && t < tries && best > bound; t++) {
        /* With several units at the top (one per layer of a model of
         * repeated layers), work on any of them: the first one's may be a
         * basin that the others are not. */
        int32_t pick = at_top > 1 ? random_top(c, best, at_top) : top;
        if (pick == 0 && c->moves == 2 && at_top == 1)
            break; /* the top buffer is placed first: it sits at 0 */
        if (pick == 0 && c->moves == 2)
            continue;
        int32_t same = random_move(c, pick);
        int64_t arena;
        int32_t trial_top, trial_at_top;
        /* A trial that cannot be kept stops where that shows. */
        status = place_all(c, c->trial, same, best, at_top, &arena,
                           &trial_top, &trial_at_top);
        if (status == DFG_OK &&
            (arena < best || (arena == best && trial_at_top <= at_top))) {
            int32_t *swap = c->order;
            c->order = c->trial;
            c->trial = swap;
            best = arena;
            top = trial_top;
            at_top = trial_at_top;
            keep_offsets(c);
        }
    }
    for (int32_t i = 0; i < c->n; i++)
        c->buffers[i].offset = c->offsets[i];
    *arena_bytes = best;
    return status;
}

/* The climbs after the first, while the arena is above the bound. */
static const struct restart { start_order start; int moves; } restarts[] = {
    {.start = BY_AREA, .moves = 2},
    {.start = BY_SIZE, .moves = 3},
    {.start = BY_AREA, .moves = 3},
};

static dfg_status climb_all(dfg_buffer *buffers, int32_t n,
                            const int64_t *aligned, const dfg_step_ranks *ranks,
                            const dfg_plan_units *units,
                            const dfg_allocator *a, int32_t scale,
                            int64_t *arena_bytes)
{
    climb c = {.buffers = buffers, .n = n, .aligned = aligned, .ranks = ranks,
               .units = units, .allocator = a, .m = units->count, .moves = 2,
               .scale = scale};
    c.order = dfg_alloc(a, ((size_t)n + 1) * sizeof *c.order);
    c.trial = dfg_alloc(a, ((size_t)n + 1) * sizeof *c.trial);
    c.near = dfg_alloc(a, ((size_t)n + 1) * sizeof *c.near);
    c.offsets = dfg_alloc(a, ((size_t)n + 1) * sizeof *c.offsets);
    int64_t *kept = dfg_alloc(a, ((size_t)n + 1) * sizeof *kept);
    int64_t *live = dfg_calloc(a, (size_t)ranks->count + 1, sizeof *live);
    dfg_status status = DFG_OK;
    if (!c.order || !c.trial || !c.near || !c.offsets || !kept || !live)
        status = dfg_error(DFG_ERR_OUT_OF_MEMORY, "hill_climb: %d buffers", n);
    int64_t bound = 0, again;
    if (status == DFG_OK) {
        dfg_step_ranks_live_bytes(ranks, n, aligned, live);
        for (int32_t s = 0; s < ranks->count; s++)
            bound = live[s] > bound ? live[s] : bound;
        status = climb_from(&c, BY_SIZE, bound, arena_bytes);
    }
    for (size_t r = 0; r < sizeof restarts / sizeof *restarts &&
                       status == DFG_OK && *arena_bytes > bound; r++) {
        for (int32_t i = 0; i < n; i++)
            kept[i] = buffers[i].offset;
        c.moves = restarts[r].moves;
        status = climb_from(&c, restarts[r].start, bound, &again);
        if (status == DFG_OK && again < *arena_bytes)
            *arena_bytes = again;
        else
            for (int32_t i = 0; i < n; i++)
                buffers[i].offset = kept[i];
    }
    dfg_free(a, live);
    dfg_free(a, kept);
    dfg_free(a, c.order);
    dfg_free(a, c.trial);
    dfg_free(a, c.near);
    dfg_free(a, c.offsets);
    return status;
}

static dfg_status place_by_hill_climb(dfg_buffer *buffers, int32_t n,
                                      const int64_t *aligned,
                                      const dfg_step_ranks *ranks,
                                      const dfg_plan_units *units,
                                      const dfg_allocator *allocator,
                                      int64_t *arena_bytes)
{
    return climb_all(buffers, n, aligned, ranks, units, allocator, 1,
                     arena_bytes);
}

static dfg_status place_by_long_climb(dfg_buffer *buffers, int32_t n,
                                      const int64_t *aligned,
                                      const dfg_step_ranks *ranks,
                                      const dfg_plan_units *units,
                                      const dfg_allocator *allocator,
                                      int64_t *arena_bytes)
{
    return climb_all(buffers, n, aligned, ranks, units, allocator, LONG_CLIMB,
                     arena_bytes);
}

dfg_status dfg_plan_hill_climb(dfg_buffer *buffers, int32_t n,
                               int64_t alignment,
                               const dfg_allocator *allocator,
                               int64_t *arena_bytes)
{
    return dfg_plan_with_ranks("hill_climb", place_by_hill_climb, buffers, n,
                               alignment, allocator, arena_bytes);
}

dfg_status dfg_plan_hill_climb_long(dfg_buffer *buffers, int32_t n,
                                    int64_t alignment,
                                    const dfg_allocator *allocator,
                                    int64_t *arena_bytes)
{
    return dfg_plan_with_ranks("hill_climb", place_by_long_climb, buffers, n,
                               alignment, allocator, arena_bytes);
}
