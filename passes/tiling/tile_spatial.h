/* Tiled execution (tile_spatial.c): the first layers of an image model
 * computed band by band of rows, so that only a band of each of their
 * activations lives at once.
 *
 * A region is the ops from an image (the graph's image input, or a
 * value such as an earlier region's join) on that work on rows
 * (conv2d of any group, max and average pools, batch_norm, element-wise
 * ops whose other operands are per-channel or scalar tensors, stored or
 * computed before the region (a squeeze-excite gate), or values of their
 * output's shape that the region does not compute (read by rows), a
 * concat along the channels), up to a cut: a value that is the only one
 * of the region read after it. Nodes that read only the image among the
 * region's values read it whole and stay outside (the image lives on);
 * any other node that reads the region ends it (a squeeze-excite
 * block's pool is crossed by passes/tiling/tile_squeeze.h). The pass
 * splits the cut's rows into bands and records, per band, a copy of
 * every region op on just the rows that band needs (its receptive
 * field), reading
 * the stored and per-channel operands of the original op whole (no
 * weight is copied), with a top pad only where the band touches the top
 * border and a bottom pad only at the bottom. A band's input rows are a
 * slice of the image; the bands' cut rows are put into the whole band
 * by band (dfg_tile_put_rows), which takes the cut's place. Every output
 * row is computed from the same input rows and weights as before.
 *
 * Halo rows, those of a value that two bands need, are computed by both,
 * or carried: band k takes them from band k-1's value (a slice of it,
 * concatenated above the rows band k computes), which then lives into
 * band k. A value's halo is carried where computing it again would cost
 * more than the copies (tile_spatial.c, carries): behind a dense conv,
 * not behind a depthwise one or a pool. */
#ifndef DFG_TILE_SPATIAL_H
#define DFG_TILE_SPATIAL_H

#include "passes/pass.h"

/* Regions tiled one after the other, at most this many. */
#define DFG_TILE_MAX_REGIONS 2

/* A tiling: n regions, region k up to the value cut[k] in tiles[k]
 * bands, the first from the graph's image, each other from the join of
 * the one before, crossing the squeeze-excite blocks squeeze[k] says
 * (a code of dfg_tile_cross_squeezes, passes/tiling/tile_squeeze.h; 0:
 * none); with its estimates (dfg_tile_estimate). put[k]: region k's
 * bands join band by band (dfg_tile_put_rows), else by one concat.
 * recompute[k]: its bands compute every halo row again (0: carried where
 * that pays). */
typedef struct dfg_tile_plan {
    int32_t n;
    int32_t cut[DFG_TILE_MAX_REGIONS], tiles[DFG_TILE_MAX_REGIONS];
    int64_t peak, flops;
    int32_t squeeze[DFG_TILE_MAX_REGIONS];
    int32_t put[DFG_TILE_MAX_REGIONS];
    int32_t recompute[DFG_TILE_MAX_REGIONS];
} dfg_tile_plan;

/* In what follows `from` is the region's image: a plain f32 [N,C,H,W]
 * value, or -1 for the graph's first such input. */

/* The tilings of graph (passes/tiling/tile_candidates.c: one region at
 * each cut, in 2, 3, 4, 6, 8, 12 or 16 bands, crossing no squeeze-excite
 * block or some, joined either way, and some of those extended by a second
 * region) whose estimate has a smaller peak than graph's and costs at
 * most max_flops_pct percent more (FLOPs and overhead, as
 * dfg_tile_estimate counts them), into plans: the first half of
 * max_plans those of smallest estimated peak among the single regions
 * and the extensions of the best ones, then those among the extensions
 * of the smallest joins, each part smallest first; their number in
 * *n_plans (0: none). */
dfg_status dfg_tile_candidates(const dfg_graph *graph, int64_t max_flops_pct,
                               dfg_tile_plan *plans, int32_t max_plans,
                               int32_t *n_plans);

/* Tiles graph as plan says (dfg_tile_cross_squeezes and
 * dfg_pass_tile_spatial per region, joined as put says); *joined: the
 * last region's join. */
dfg_status dfg_tile_apply(dfg_graph *graph, const dfg_tile_plan *plan,
                          int32_t *joined);

/* Tiles the region up to cut (a value dfg_tile_candidates named) in
 * `tiles` bands of rows (2 or more, at most the cut's rows, at most 64),
 * joined band by band (put) or by one concat, halos carried where that
 * pays (carry) or all computed again; *joined: the value that joins the
 * bands and takes the cut's place. DFG_ERR_INVALID_ARGUMENT when cut is
 * no cut of the region. */
dfg_status dfg_pass_tile_spatial(dfg_graph *graph, int32_t from, int32_t cut,
                                 int32_t tiles, int put, int carry,
                                 int32_t *joined, dfg_pass_report *report);

/* The region from `from` as the pass walks it: inside[v] (n_values
 * entries) marks its image and the values its nodes write, *stop is the
 * first node after them that reads the region and is no region op (-1:
 * none), cuts[0..*n_cuts) its cuts in order (at most max_cuts). inside,
 * stop, cuts and n_cuts may be NULL. */
dfg_status dfg_tile_region(const dfg_graph *graph, int32_t from,
                           uint8_t *inside, int32_t *stop, int32_t *cuts,
                           int32_t max_cuts, int32_t *n_cuts);

/* What graph tiled at cut in `tiles` bands, joined as put says, halos
 * carried where that pays, would cost, cheaply (no plan): the bytes live
 * at its largest step in the recorded order (a join in place counted
 * once), and in *flops its FLOPs with each node's overhead as a step
 * (dfg_program_overhead's weights). cut -1: graph as it is. */
dfg_status dfg_tile_estimate(const dfg_graph *graph, int32_t from,
                             int32_t cut, int32_t tiles, int put,
                             int64_t *peak, int64_t *flops);

/* The join: the bands' rows of the cut put into the
 * whole one band at a time (put_rows, src/ir/ops.def), so that the whole
 * and one band's rows live at the join, where a concat of every band
 * kept them all beside the whole. Records band k's: part (its rows of the
 * cut named cut_name, from row `at` of `rows`) put into whole (the join
 * so far, -1 for the first band: a new whole); *joined: the whole with
 * part's rows. */
dfg_status dfg_tile_put_rows(dfg_graph *graph, const char *cut_name, int k,
                             int32_t whole, int32_t part, int64_t at,
                             int64_t rows, int32_t *joined);

/* 1 if node n of graph is a join that writes its output over its whole
 * (input 0) where that dies at n (last[v]: the index of v's last
 * reader): the whole's bytes carry on as the output's. For
 * dfg_tile_estimate's count. */
int dfg_tile_joins_in_place(const dfg_graph *graph, int32_t n,
                            const int32_t *last);

#endif
