/* The bands of one tiled region as passes/tiling/tile_spatial.c records them,
 * shared with the choice of the halo rows each band carries from the one
 * before (passes/tiling/tile_bands.c). Private to passes/. */
#ifndef DFG_TILE_BANDS_H
#define DFG_TILE_BANDS_H

#include "passes/pass.h"

/* Rows [lo, hi) of a value. */
typedef struct dfg_tile_rows {
    int64_t lo, hi;
} dfg_tile_rows;

/* The tiling of one region: per value, the rows this band holds, those
 * its node computes, its value index in the band, and the band before's
 * (band 0: no value). Indexed by the graph's values before tiling. */
typedef struct dfg_tile_bands {
    dfg_graph *g;
    dfg_tile_rows *held;      /* [n_values] */
    dfg_tile_rows *made;      /* [n_values] held, less the rows carried */
    int32_t *value;           /* [n_values] the band's value, -1 before */
    dfg_tile_rows *prev_held; /* [n_values] */
    int32_t *prev_value;      /* [n_values] */
    int64_t *row_flops;       /* [n_values] FLOPs of a region node's row */
    uint8_t *carried;         /* [n_values] how the band carries each */
    int32_t input;            /* the region's image */
    int32_t n_values;
    int carry;                /* 0: every band computes all its rows */
} dfg_tile_bands;

/* Rows of input `in` of node that rows `out` of its output read. */
dfg_tile_rows dfg_tile_input_rows(const dfg_graph *g, const dfg_ir_node *node,
                                  int32_t in, dfg_tile_rows out);

/* 1 if every band reads operand v whole: stored, or of no rows. */
int dfg_tile_fixed(const dfg_graph *g, int32_t v);

/* How band b (rows `out` of the cut; band k-1's rows and values in b)
 * carries each value of the region's nodes (nodes[0..n_nodes), recorded
 * order): b->carried, b->held and b->made set. */
void dfg_tile_choose_carries(dfg_tile_bands *b, const int32_t *nodes,
                             int32_t n_nodes, int32_t cut,
                             dfg_tile_rows out);

#endif
