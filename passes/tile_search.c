/* Tiled execution's candidate search (tile_spatial.h,
 * dfg_tile_candidates): every cut of a first region in 2, 4, 8 and 16
 * bands, each joined the way its estimate prefers, and a second region
 * after some of them.
 *
 * Which first regions a second one extends: per band count, the one of
 * smallest estimated peak, and the SMALL_JOINS whose cut (the second
 * region's image) is smallest. A first region that alone leaves the peak
 * where it was (set by the layers after it) can be the cheap start of a
 * pair that lowers it: SqueezeNet's first conv and pool in many bands,
 * then its fire modules in two. */
#include "passes/tile_spatial.h"

#include <stdlib.h>
#include "util/error.h"
#include "util/memory.h"

/* Numbers of bands tried per region. */
#define BAND_COUNTS 4
static const int32_t band_counts[BAND_COUNTS] = {2, 4, 8, 16};

/* First regions of smallest cut extended per band count. */
#define SMALL_JOINS 2

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

/* graph tiled by base (joined: its last join, or -1) extended by one
 * region at each cut and band count, each estimated joined both ways
 * and the smaller kept: those of at most max_flops in plans (the max of
 * smallest peak), and with below_only those with a smaller peak than
 * base_peak only. plans has room for max; *n counts them. */
static dfg_status extend(const dfg_graph *graph, int32_t joined,
                         const dfg_tile_plan *base, int64_t base_peak,
                         int below_only, int64_t max_flops,
                         dfg_tile_plan *plans, int32_t max, int32_t *n)
{
    int32_t *cuts = dfg_calloc(&graph->allocator, (size_t)graph->n_values + 1,
                               sizeof *cuts), n_cuts = 0;
    dfg_status st = cuts ? dfg_tile_cuts(graph, joined, cuts, &n_cuts)
                         : dfg_error(DFG_ERR_OUT_OF_MEMORY,
                                     "tiling: out of memory");
    for (int32_t i = 0; st == DFG_OK && i < n_cuts; i++)
        for (int32_t b = 0; st == DFG_OK && b < BAND_COUNTS; b++) {
            dfg_tile_plan c = *base, put;
            c.cut[c.n] = cuts[i];
            c.tiles[c.n++] = band_counts[b];
            if (graph->values[cuts[i]].type.shape[2] < band_counts[b])
                continue;
            put = c;
            put.put[c.n - 1] = 1;
            st = dfg_tile_estimate(graph, joined, cuts[i], band_counts[b], 0,
                                   &c.peak, &c.flops);
            if (st == DFG_OK)
                st = dfg_tile_estimate(graph, joined, cuts[i],
                                       band_counts[b], 1, &put.peak,
                                       &put.flops);
            if (st == DFG_OK && by_peak(&put, &c) < 0)
                c = put;
            if (st != DFG_OK || (below_only && c.peak >= base_peak) ||
                c.flops > max_flops)
                continue;
            keep(plans, max, n, &c);
        }
    dfg_free(&graph->allocator, cuts);
    return st;
}

/* The bytes of the value a plan's last region ends at. */
static int64_t join_bytes(const dfg_graph *g, const dfg_tile_plan *p)
{
    return dfg_type_bytes(&g->values[p->cut[p->n - 1]].type);
}

/* 1 if plans[0..n) hold p's cuts and band counts already. */
static int listed(const dfg_tile_plan *plans, int32_t n,
                  const dfg_tile_plan *p)
{
    for (int32_t i = 0; i < n; i++)
        if (plans[i].cut[0] == p->cut[0] && plans[i].tiles[0] == p->tiles[0])
            return 1;
    return 0;
}

/* The first region of smallest peak below base_peak per band count
 * (small 0), or the SMALL_JOINS of smallest cut not already in bases
 * (small 1), from all[0..n_all) appended to bases[0..*n_bases). */
static void pick_bases(const dfg_graph *g, const dfg_tile_plan *all,
                       int32_t n_all, int64_t base_peak, int small,
                       dfg_tile_plan *bases, int32_t *n_bases)
{
    for (int32_t b = 0; b < BAND_COUNTS; b++)
        for (int32_t k = 0; k < (small ? SMALL_JOINS : 1); k++) {
            int32_t pick = -1;
            for (int32_t i = 0; i < n_all; i++) {
                const dfg_tile_plan *c = &all[i], *p = &all[pick < 0 ? 0 : pick];
                if (c->tiles[0] != band_counts[b] ||
                    listed(bases, *n_bases, c) ||
                    (!small && c->peak >= base_peak))
                    continue;
                int64_t cb = join_bytes(g, c), pb = join_bytes(g, p);
                if (pick < 0 || (!small && by_peak(c, p) < 0) ||
                    (small && (cb < pb || (cb == pb && c->flops < p->flops))))
                    pick = i;
            }
            if (pick >= 0)
                bases[(*n_bases)++] = all[pick];
        }
}

/* Extends each of bases[from..to) by a second region whose estimate is
 * below its own and the untiled one's (none), into plans (room for max,
 * *n counted). */
static dfg_status extend_bases(const dfg_graph *graph,
                               const dfg_tile_plan *bases, int32_t from,
                               int32_t to, const dfg_tile_plan *none,
                               int64_t max_flops, dfg_tile_plan *plans,
                               int32_t max, int32_t *n)
{
    dfg_status st = DFG_OK;
    for (int32_t i = from; st == DFG_OK && i < to; i++) {
        dfg_graph *copy = NULL;
        int32_t joined;
        int64_t below = bases[i].peak < none->peak ? bases[i].peak
                                                   : none->peak;
        st = dfg_graph_clone(graph, &graph->allocator, &copy);
        if (st == DFG_OK)
            st = dfg_tile_apply(copy, &bases[i], &joined);
        if (st == DFG_OK)
            st = extend(copy, joined, &bases[i], below, 1, max_flops, plans,
                        max, n);
        dfg_graph_destroy(copy);
    }
    return st;
}

dfg_status dfg_tile_candidates(const dfg_graph *graph, int64_t max_flops_pct,
                               dfg_tile_plan *plans, int32_t max_plans,
                               int32_t *n_plans)
{
    *n_plans = 0;
    dfg_tile_plan none = {0, {0}, {0}, 0, 0, {0}};
    dfg_status st = dfg_tile_estimate(graph, -1, -1, 0, 0, &none.peak,
                                      &none.flops);
    int64_t max_flops = none.flops + none.flops * max_flops_pct / 100;
    int32_t max_all = BAND_COUNTS * (graph->n_values + 1), n_all = 0;
    dfg_tile_plan *all = dfg_calloc(&graph->allocator, (size_t)max_all,
                                    sizeof *all);
    dfg_tile_plan bases[BAND_COUNTS * (1 + SMALL_JOINS)];
    int32_t n_bases = 0, n_best = 0, n = 0, n_small = 0;
    if (st == DFG_OK && !all)
        st = dfg_error(DFG_ERR_OUT_OF_MEMORY, "tiling: out of memory");
    if (st == DFG_OK)
        st = extend(graph, -1, &none, none.peak, 0, max_flops, all, max_all,
                    &n_all);
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
        st = extend_bases(graph, bases, 0, n_best, &none, max_flops, plans,
                          half, &n);
    if (st == DFG_OK && DFG_TILE_MAX_REGIONS > 1)
        st = extend_bases(graph, bases, n_best, n_bases, &none, max_flops,
                          plans + n, max_plans - n, &n_small);
    qsort(plans, (size_t)n, sizeof *plans, by_peak_q);
    qsort(plans + n, (size_t)n_small, sizeof *plans, by_peak_q);
    *n_plans = st == DFG_OK ? n + n_small : 0;
    return st;
}
