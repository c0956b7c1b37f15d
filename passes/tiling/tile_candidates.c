/* Tiled execution's choice: the candidate tilings of a graph and their
 * application (passes/tiling/tile_spatial.h).
 *
 * The search: every cut of a first region in 2, 3, 4, 6, 8, 12 and 16
 * bands, crossing no squeeze-excite block or some, each joined the way
 * its estimate prefers, and a second region after some of them. Which
 * first regions a second one extends: per band count, the one of
 * smallest estimated peak, and per power of two (the counts of
 * small_join_count) the SMALL_JOINS whose cut (the second region's
 * image) is smallest. A first region that alone leaves the peak where
 * it was (set by the layers after it) can be the cheap start of a pair
 * that lowers it: SqueezeNet's first conv and pool in many bands, then
 * its fire modules in two. */
#include "passes/tiling/tile_spatial.h"

#include <stdlib.h>
#include "passes/tiling/tile_squeeze.h"
#include "util/error.h"
#include "util/memory.h"

/* Numbers of bands tried per region: between each power of two and the
 * next, the count halfway too. Each band recomputes its halo, so of two
 * counts that reach one arena the smaller costs fewer FLOPs; the steps
 * between powers of two let a region stop at the fewest bands that reach
 * an arena rather than double past them (a count of 6 where 4 leaves
 * the peak in the region and 8 recomputes a third more). */
#define BAND_COUNTS 7
static const int32_t band_counts[BAND_COUNTS] = {2, 3, 4, 6, 8, 12, 16};

/* First regions of smallest cut extended per band count, their second
 * regions crossing no squeeze-excite block (the first SMALL_CROSSINGS of
 * crossings[]): fewer estimates than the best ones get. */
#define SMALL_JOINS 2
#define SMALL_CROSSINGS 1

/* The band counts whose smallest joins are extended: the powers of two
 * (each extension is a search of its own, and the counts between them
 * would double it; their first regions are extended where their
 * estimate is the best of their count). */
static int small_join_count(int32_t bands) { return (bands & (bands - 1)) == 0; }

static int by_peak(const dfg_tile_plan *x, const dfg_tile_plan *y)
{
    return x->peak < y->peak ? -1 : x->peak > y->peak ? 1
           : x->flops < y->flops ? -1 : x->flops > y->flops;
}

static int by_peak_q(const void *a, const void *b) { return by_peak(a, b); }

/* Adds c to plans[0..*n) (at most max), or puts it in the place of the
 * plan of largest peak if c's is smaller. */
static void keep(dfg_tile_plan *plans, int32_t max, int32_t *n,
                 const dfg_tile_plan *c)
{
    if (*n < max) {
        plans[(*n)++] = *c;
        return;
    }
    int32_t worst = 0;
    for (int32_t k = 1; k < *n; k++)
        worst = by_peak(&plans[k], &plans[worst]) > 0 ? k : worst;
    if (*n > 0 && by_peak(c, &plans[worst]) < 0)
        plans[worst] = *c;
}

dfg_status dfg_tile_apply(dfg_graph *graph, const dfg_tile_plan *plan,
                          int32_t *joined)
{
    *joined = -1;
    dfg_status st = DFG_OK;
    for (int32_t k = 0; st == DFG_OK && k < plan->n; k++) {
        dfg_pass_report report;
        int32_t crossed = 0;
        st = dfg_tile_cross_squeezes(graph, *joined, plan->tiles[k],
                                     plan->squeeze[k], &crossed);
        if (st == DFG_OK && crossed < dfg_tile_squeezes_asked(
                                          plan->squeeze[k]))
            st = dfg_error(DFG_ERR_INVALID_ARGUMENT, "tiling: region %d "
                           "meets %d squeeze-excite blocks, not %d",
                           (int)k, (int)crossed,
                           (int)dfg_tile_squeezes_asked(plan->squeeze[k]));
        if (st == DFG_OK)
            st = dfg_pass_tile_spatial(graph, *joined, plan->cut[k],
                                       plan->tiles[k], plan->put[k],
                                       !plan->recompute[k], joined, &report);
    }
    return st;
}

/* Squeeze-excite crossings tried per region (dfg_tile_cross_squeezes
 * codes): none, then one block recomputed or carried, then two. */
static const int32_t crossings[] = {
    0, DFG_TILE_RECOMPUTE, DFG_TILE_CARRY,
    DFG_TILE_RECOMPUTE + 3 * DFG_TILE_RECOMPUTE,
    DFG_TILE_RECOMPUTE + 3 * DFG_TILE_CARRY,
    DFG_TILE_CARRY + 3 * DFG_TILE_RECOMPUTE,
    DFG_TILE_CARRY + 3 * DFG_TILE_CARRY,
};
#define CROSSINGS ((int32_t)(sizeof crossings / sizeof crossings[0]))

/* One extension of a base tiling: its next region's candidates, with
 * the first n_crossings of crossings[], those of at most max_flops (and
 * with below_only of a peak below base_peak) kept in plans (room for
 * max, *n counted). */
typedef struct extension {
    const dfg_tile_plan *base;
    int64_t base_peak, max_flops;
    int below_only;
    int32_t n_crossings;
    dfg_tile_plan *plans;
    int32_t max, *n;
} extension;

/* c (its last region in the graph it was cut from, joined: the image)
 * estimated joined both ways, the smaller kept in c. */
static dfg_status estimate_joins(const dfg_graph *graph, int32_t joined,
                                 dfg_tile_plan *c)
{
    int32_t last = c->n - 1;
    dfg_tile_plan put = *c;
    put.put[last] = 1;
    c->put[last] = 0;
    dfg_status st = dfg_tile_estimate(graph, joined, c->cut[last],
                                      c->tiles[last], 0, &c->peak,
                                      &c->flops);
    if (st == DFG_OK)
        st = dfg_tile_estimate(graph, joined, put.cut[last],
                               put.tiles[last], 1, &put.peak, &put.flops);
    if (st == DFG_OK && by_peak(&put, c) < 0)
        *c = put;
    return st;
}

/* graph (joined: the last join of e's base, or -1) extended by one
 * region crossing the blocks `crossing` codes, in `bands` bands, at each
 * of its cuts but those uncrossed marks (the region's cuts without a
 * crossing: cheaper), estimated; kept as e says. uncrossed:
 * graph->n_values entries, marked here when crossing is 0 (tried first). */
static dfg_status extend_at(const dfg_graph *graph, int32_t joined,
                            int32_t crossing, int32_t bands,
                            uint8_t *uncrossed, const extension *e)
{
    dfg_graph *copy = NULL;
    int32_t crossed = 0, n_cuts = 0, *cuts = NULL;
    int32_t n_uncrossed = graph->n_values;
    dfg_status st = DFG_OK;
    if (crossing) {
        st = dfg_graph_clone_scratch(graph, &graph->allocator, &copy);
        if (st == DFG_OK)
            st = dfg_tile_cross_squeezes(copy, joined, bands, crossing,
                                         &crossed);
        if (st != DFG_OK || crossed < dfg_tile_squeezes_asked(crossing)) {
            dfg_graph_destroy(copy);
            return DFG_OK; /* no such blocks there: nothing to try */
        }
        graph = copy;
    }
    cuts = dfg_calloc(&graph->allocator, (size_t)graph->n_values + 1,
                      sizeof *cuts);
    st = cuts ? dfg_tile_region(graph, joined, NULL, NULL, cuts,
                                graph->n_values, &n_cuts)
              : dfg_error(DFG_ERR_OUT_OF_MEMORY, "tiling: out of memory");
    for (int32_t i = 0; st == DFG_OK && i < n_cuts; i++) {
        if (!crossing)
            uncrossed[cuts[i]] = 1;
        if ((crossing && cuts[i] < n_uncrossed &&
             uncrossed[cuts[i]]) ||
            graph->values[cuts[i]].type.shape[2] < bands)
            continue;
        dfg_tile_plan c = *e->base;
        c.cut[c.n] = cuts[i];
        c.squeeze[c.n] = crossing;
        c.tiles[c.n++] = bands;
        st = estimate_joins(graph, joined, &c);
        if (st != DFG_OK && crossing) {
            st = DFG_OK; /* a crossing that does not tile: passed over */
            continue;
        }
        if (st != DFG_OK || (e->below_only && c.peak >= e->base_peak) ||
            c.flops > e->max_flops)
            continue;
        keep(e->plans, e->max, e->n, &c);
    }
    dfg_free(&graph->allocator, cuts);
    dfg_graph_destroy(copy);
    return st;
}

/* graph tiled by e's base (joined: its last join, or -1) extended by one
 * region at each cut, band count and crossing e allows, estimated, kept
 * as e says. */
static dfg_status extend(const dfg_graph *graph, int32_t joined,
                         const extension *e)
{
    uint8_t *uncrossed = dfg_calloc(&graph->allocator,
                                    (size_t)graph->n_values + 1, 1);
    dfg_status st = uncrossed ? DFG_OK
                    : dfg_error(DFG_ERR_OUT_OF_MEMORY, "tiling: out of "
                                "memory");
    for (int32_t x = 0; st == DFG_OK && x < e->n_crossings; x++)
        for (int32_t b = 0; st == DFG_OK && b < BAND_COUNTS; b++)
            st = extend_at(graph, joined, crossings[x], band_counts[b],
                           uncrossed, e);
    dfg_free(&graph->allocator, uncrossed);
    return st;
}

/* The bytes of the value a plan's last region ends at, or -1 when that
 * value is one a crossing added (not in g). */
static int64_t join_bytes(const dfg_graph *g, const dfg_tile_plan *p)
{
    int32_t v = p->cut[p->n - 1];
    return v < g->n_values ? dfg_type_bytes(&g->values[v].type) : -1;
}

/* 1 if plans[0..n) hold p's first region already. */
static int listed(const dfg_tile_plan *plans, int32_t n,
                  const dfg_tile_plan *p)
{
    for (int32_t i = 0; i < n; i++)
        if (plans[i].cut[0] == p->cut[0] &&
            plans[i].tiles[0] == p->tiles[0] &&
            plans[i].squeeze[0] == p->squeeze[0])
            return 1;
    return 0;
}

/* The first region of smallest peak below base_peak per band count
 * (small 0), or the SMALL_JOINS of smallest cut not already in bases per
 * band count of small_join_count (small 1; cuts a crossing added are
 * not compared), from
 * all[0..n_all) appended to bases[0..*n_bases). */
static void pick_bases(const dfg_graph *g, const dfg_tile_plan *all,
                       int32_t n_all, int64_t base_peak, int small,
                       dfg_tile_plan *bases, int32_t *n_bases)
{
    for (int32_t b = 0; b < BAND_COUNTS; b++)
        for (int32_t k = 0;
             k < (!small ? 1 : small_join_count(band_counts[b]) ? SMALL_JOINS
                                                                  : 0);
             k++) {
            int32_t pick = -1;
            for (int32_t i = 0; i < n_all; i++) {
                const dfg_tile_plan *c = &all[i], *p = &all[pick < 0 ? 0 : pick];
                int64_t cb = join_bytes(g, c), pb = join_bytes(g, p);
                if (c->tiles[0] != band_counts[b] ||
                    listed(bases, *n_bases, c) ||
                    (!small && c->peak >= base_peak) || (small && cb < 0))
                    continue;
                if (pick < 0 || (!small && by_peak(c, p) < 0) ||
                    (small && (cb < pb || (cb == pb && c->flops < p->flops))))
                    pick = i;
            }
            if (pick >= 0)
                bases[(*n_bases)++] = all[pick];
        }
}

/* Extends each of bases[from..to) by a second region (crossing at most
 * the first n_crossings of crossings[]) whose estimate is below its own
 * and the untiled one's (none), into plans (room for max, *n counted). */
static dfg_status extend_bases(const dfg_graph *graph,
                               const dfg_tile_plan *bases, int32_t from,
                               int32_t to, int32_t n_crossings,
                               const dfg_tile_plan *none,
                               int64_t max_flops, dfg_tile_plan *plans,
                               int32_t max, int32_t *n)
{
    dfg_status st = DFG_OK;
    for (int32_t i = from; st == DFG_OK && i < to; i++) {
        dfg_graph *copy = NULL;
        int32_t joined;
        extension e = {&bases[i], bases[i].peak < none->peak ? bases[i].peak
                                                              : none->peak,
                       max_flops, 1, n_crossings, plans, max, n};
        st = dfg_graph_clone_scratch(graph, &graph->allocator, &copy);
        if (st == DFG_OK)
            st = dfg_tile_apply(copy, &bases[i], &joined);
        if (st == DFG_OK)
            st = extend(copy, joined, &e);
        dfg_graph_destroy(copy);
    }
    return st;
}

dfg_status dfg_tile_candidates(const dfg_graph *graph, int64_t max_flops_pct,
                               dfg_tile_plan *plans, int32_t max_plans,
                               int32_t *n_plans)
{
    *n_plans = 0;
    dfg_tile_plan none = {0, {0}, {0}, 0, 0, {0}, {0}, {0}};
    dfg_status st = dfg_tile_estimate(graph, -1, -1, 0, 0, &none.peak,
                                      &none.flops);
    int64_t max_flops = none.flops + none.flops * max_flops_pct / 100;
    /* Every first region, a crossing's cuts beyond the graph's values. */
    int32_t max_all = CROSSINGS * BAND_COUNTS * (2 * graph->n_values + 1);
    int32_t n_all = 0;
    dfg_tile_plan *all = dfg_calloc(&graph->allocator, (size_t)max_all,
                                    sizeof *all);
    dfg_tile_plan bases[BAND_COUNTS * (1 + SMALL_JOINS)];
    int32_t n_bases = 0, n_best = 0, n = 0, n_small = 0;
    extension first = {&none, none.peak, max_flops, 0, CROSSINGS, all,
                       max_all, &n_all};
    if (st == DFG_OK && !all)
        st = dfg_error(DFG_ERR_OUT_OF_MEMORY, "tiling: out of memory");
    if (st == DFG_OK)
        st = extend(graph, -1, &first);
    if (st == DFG_OK) {
        pick_bases(graph, all, n_all, none.peak, 0, bases, &n_bases);
        n_best = n_bases;
        pick_bases(graph, all, n_all, none.peak, 1, bases, &n_bases);
    }
    /* Half the list from the first regions and the extensions of the
     * best ones, half from the extensions of the smallest joins: on a
     * tie of estimates each half keeps its own. */
    int32_t half = (max_plans + 1) / 2;
    for (int32_t i = 0; st == DFG_OK && i < n_all; i++)
        if (all[i].peak < none.peak)
            keep(plans, half, &n, &all[i]);
    dfg_free(&graph->allocator, all);
    if (st == DFG_OK && DFG_TILE_MAX_REGIONS > 1)
        st = extend_bases(graph, bases, 0, n_best, CROSSINGS, &none,
                          max_flops, plans, half, &n);
    if (st == DFG_OK && DFG_TILE_MAX_REGIONS > 1)
        st = extend_bases(graph, bases, n_best, n_bases, SMALL_CROSSINGS,
                          &none, max_flops, plans + n, max_plans - n,
                          &n_small);
    qsort(plans, (size_t)n, sizeof *plans, by_peak_q);
    qsort(plans + n, (size_t)n_small, sizeof *plans, by_peak_q);
    *n_plans = st == DFG_OK ? n + n_small : 0;
    return st;
}
