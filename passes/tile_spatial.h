/* Tiled execution (tile_spatial.c): the first layers of an image model
 * computed band by band of rows, so that only a band of each of their
 * activations lives at once.
 *
 * A region is the ops from the graph's image input on that work on rows
 * (conv2d of any group, max and average pools, batch_norm, element-wise
 * ops whose other operands are stored per-channel or scalar tensors, a
 * concat along the channels), up to a cut: a value that is the only one
 * of the region read after it. The pass splits the cut's rows into bands
 * and records, per band, a copy of every region op on just the rows that
 * band needs (its receptive field: halo rows are computed by both bands
 * that need them), reading the stored operands of the original op (no
 * weight is copied), with a top pad only where the band touches the top
 * border and a bottom pad only at the bottom. A band's input rows are a
 * slice of the image; the bands' cut rows are joined by a concat along
 * the rows, which takes the cut's place. Every output row is computed
 * from the same input rows and weights as before. */
#ifndef DFG_TILE_SPATIAL_H
#define DFG_TILE_SPATIAL_H

#include "passes/pass.h"

/* A cut the region can end at: its value (a graph value index), and
 * for a number of bands (tiles, 0 before it is estimated) the estimates
 * of dfg_tile_estimate. */
typedef struct dfg_tile_cut {
    int32_t value;
    int32_t tiles;
    int64_t peak, flops;
} dfg_tile_cut;

/* The cuts of graph's region with a number of bands (2, 4 or 8) whose
 * estimate (dfg_tile_estimate) has a smaller peak than graph's and at
 * most max_flops_pct percent more FLOPs: the max_cuts of smallest peak
 * in cuts, smallest first, their number in *n_cuts (0: none). */
dfg_status dfg_tile_candidates(const dfg_graph *graph, int64_t max_flops_pct,
                               dfg_tile_cut *cuts, int32_t max_cuts,
                               int32_t *n_cuts);

/* Tiles the region up to cut (a value dfg_tile_cuts named) in `tiles`
 * bands of rows (2 or more, at most the cut's rows).
 * DFG_ERR_INVALID_ARGUMENT when cut is no cut of the graph's region. */
dfg_status dfg_pass_tile_spatial(dfg_graph *graph, int32_t cut, int32_t tiles,
                                 dfg_pass_report *report);

/* What graph tiled at cut in `tiles` bands would cost, cheaply (no
 * plan): the bytes live at its largest step in the recorded order, and
 * its FLOPs. cut -1: graph as it is. */
dfg_status dfg_tile_estimate(const dfg_graph *graph, int32_t cut,
                             int32_t tiles, int64_t *peak, int64_t *flops);

#endif
