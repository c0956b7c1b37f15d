/* Tiled execution through squeeze-excite blocks (tile_squeeze.c).
 *
 * A region of bands (passes/tiling/tile_spatial.h) stops at a node that needs
 * a whole tensor: a squeeze-excite block's global average pool of a
 * region value x, whose gate (small ops on [N,C,1,1]) then scales x
 * channel by channel. Crossing the block rewrites the graph so that the
 * region goes on past it:
 *   - pass 1: a copy of the region's nodes that x needs, from the
 *     region's image, tiled in bands up to x (dfg_pass_tile_spatial);
 *   - recomputed (DFG_TILE_RECOMPUTE): each band of x is pooled on its
 *     own and weighted by its share of x's rows; their sum takes the
 *     pool's place, so no band outlives its pool. The region's own nodes
 *     then compute x again band by band, and its bands scale their rows
 *     by the gate (an operand computed whole before them);
 *   - carried (DFG_TILE_CARRY): pass 1's bands are joined into x whole,
 *     which the pool and the scaling read; the region's nodes that only
 *     x needed die, and its bands read the block's result by rows.
 * Every value keeps its index; pass 1's nodes are placed right after
 * x's producer (before every reader of x), the band pools before the
 * pool they replace, so the order stays topological. */
#ifndef DFG_TILE_SQUEEZE_H
#define DFG_TILE_SQUEEZE_H

#include "passes/pass.h"

#define DFG_TILE_RECOMPUTE 1
#define DFG_TILE_CARRY 2

/* Crosses the blocks the region from `from` (as in dfg_tile_region)
 * meets one after the other, pass 1 in `tiles` bands: code's base-3
 * digits, lowest first, say how (DFG_TILE_RECOMPUTE or DFG_TILE_CARRY)
 * for each block, as many blocks as it has digits. *crossed: how many
 * were crossed; fewer than asked (the graph then holds those) when the
 * region stops at something else than such a block. */
dfg_status dfg_tile_cross_squeezes(dfg_graph *graph, int32_t from,
                                   int32_t tiles, int32_t code,
                                   int32_t *crossed);

/* How many blocks code asks to cross (its base-3 digits). */
int32_t dfg_tile_squeezes_asked(int32_t code);

#endif
