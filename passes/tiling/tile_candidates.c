/* Tiled execution's choice: the candidate tilings of a graph and their
 * application (passes/tile_spatial.h). */
#include "passes/tile_spatial.h"

#include <stdlib.h>
#include "passes/tiling/tile_squeeze.h"
#include "util/error.h"
#include "util/memory.h"

/* Numbers of bands tried per region. */
#define BAND_COUNTS 4

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

/* Keeps c in plans[0..*n) if it has the smallest peak of the plans
 * whose last region has its number of bands: one plan per band count. */
static void keep_per_bands(dfg_tile_plan *plans, int32_t *n,
                           const dfg_tile_plan *c)
{
    int32_t bands = c->tiles[c->n - 1];
    for (int32_t k = 0; k < *n; k++)
        if (plans[k].tiles[plans[k].n - 1] == bands) {
            if (by_peak(c, &plans[k]) < 0)
                plans[k] = *c;
            return;
        }
    plans[(*n)++] = *c;
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
                                       plan->tiles[k], joined, &report);
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

/* graph (joined: the last join of base's regions, or -1) extended by one
 * region crossing the blocks `crossing` codes, in `bands` bands, at each
 * of its cuts but those uncrossed marks (the region's cuts without a
 * crossing: cheaper), estimated; kept as extend says. uncrossed:
 * graph->n_values entries, marked here when crossing is 0 (tried first). */
static dfg_status extend_at(const dfg_graph *graph, int32_t joined,
                            int32_t crossing, int32_t bands,
                            uint8_t *uncrossed, const dfg_tile_plan *base,
                            int64_t base_peak, int64_t max_flops,
                            dfg_tile_plan *plans, int32_t max, int32_t *n)
{
    dfg_graph *copy = NULL;
    int32_t crossed = 0, n_cuts = 0, *cuts = NULL;
    int32_t n_uncrossed = graph->n_values;
    dfg_status st = DFG_OK;
    if (crossing) {
        st = dfg_graph_clone(graph, &graph->allocator, &copy);
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
        dfg_tile_plan c = *base;
        c.cut[c.n] = cuts[i];
        c.squeeze[c.n] = crossing;
        c.tiles[c.n++] = bands;
        st = dfg_tile_estimate(graph, joined, cuts[i], bands, &c.peak,
                               &c.flops);
        if (st != DFG_OK && crossing) {
            st = DFG_OK; /* a crossing that does not tile: passed over */
            continue;
        }
        if (st != DFG_OK || c.peak >= base_peak || c.flops > max_flops)
            continue;
        if (max > 0)
            keep(plans, max, n, &c);
        else
            keep_per_bands(plans, n, &c);
    }
    dfg_free(&graph->allocator, cuts);
    dfg_graph_destroy(copy);
    return st;
}

/* graph tiled by base (joined: its last join, or -1) extended by one
 * region at each cut, band count and crossing, estimated; those with a
 * smaller peak than base_peak and at most max_flops kept in plans: the
 * max of smallest peak, or with max 0 the one of smallest peak per band
 * count (at most BAND_COUNTS). */
static dfg_status extend(const dfg_graph *graph, int32_t joined,
                         const dfg_tile_plan *base, int64_t base_peak,
                         int64_t max_flops, dfg_tile_plan *plans,
                         int32_t max, int32_t *n)
{
    static const int32_t bands[BAND_COUNTS] = {2, 4, 8, 16};
    uint8_t *uncrossed = dfg_calloc(&graph->allocator,
                                    (size_t)graph->n_values + 1, 1);
    dfg_status st = uncrossed ? DFG_OK
                    : dfg_error(DFG_ERR_OUT_OF_MEMORY, "tiling: out of "
                                "memory");
    for (int32_t x = 0; st == DFG_OK && x < CROSSINGS; x++)
        for (int32_t b = 0; st == DFG_OK && b < BAND_COUNTS; b++)
            st = extend_at(graph, joined, crossings[x], bands[b], uncrossed,
                           base, base_peak, max_flops, plans, max, n);
    dfg_free(&graph->allocator, uncrossed);
    return st;
}

dfg_status dfg_tile_candidates(const dfg_graph *graph, int64_t max_flops_pct,
                               dfg_tile_plan *plans, int32_t max_plans,
                               int32_t *n_plans)
{
    *n_plans = 0;
    dfg_tile_plan none = {0, {0}, {0}, 0, 0, {0}};
    dfg_status st = dfg_tile_estimate(graph, -1, -1, 0, &none.peak,
                                      &none.flops);
    int64_t max_flops = none.flops + none.flops * max_flops_pct / 100;
    /* The second region extends the best first one of each band count:
     * a cheaper first region can leave room for a second. */
    dfg_tile_plan first[BAND_COUNTS];
    int32_t n_first = 0;
    if (st == DFG_OK)
        st = extend(graph, -1, &none, none.peak, max_flops, first, 0,
                    &n_first);
    int32_t n = 0;
    for (int32_t i = 0; i < n_first; i++)
        keep(plans, max_plans, &n, &first[i]);
    for (int32_t i = 0; st == DFG_OK && i < n_first &&
                        DFG_TILE_MAX_REGIONS > 1; i++) {
        dfg_graph *copy = NULL;
        int32_t joined;
        st = dfg_graph_clone(graph, &graph->allocator, &copy);
        if (st == DFG_OK)
            st = dfg_tile_apply(copy, &first[i], &joined);
        if (st == DFG_OK)
            st = extend(copy, joined, &first[i], first[i].peak, max_flops,
                        plans, max_plans, &n);
        dfg_graph_destroy(copy);
    }
    qsort(plans, (size_t)n, sizeof *plans, by_peak_q);
    *n_plans = st == DFG_OK ? n : 0;
    return st;
}
