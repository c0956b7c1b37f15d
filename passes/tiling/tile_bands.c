/* The rows of a tiled region's bands (passes/tiling/tile_bands.h): which
 * rows an operand's band holds, and which halo rows a band takes from
 * the band before. */
#include "passes/tiling/tile_bands.h"

#include <string.h>

typedef dfg_tile_rows rows;
typedef dfg_tile_bands bands;

int dfg_tile_fixed(const dfg_graph *g, int32_t v)
{
    const dfg_type *t = &g->values[v].type;
    return g->values[v].kind == DFG_VALUE_WEIGHT ||
           g->values[v].kind == DFG_VALUE_CONSTANT || t->rank != 4 ||
           t->dtype != DFG_F32 || t->layout != DFG_LAYOUT_PLAIN ||
           t->shape[2] <= 1;
}

rows dfg_tile_input_rows(const dfg_graph *g, const dfg_ir_node *node,
                         int32_t in, rows out)
{
    int64_t h = g->values[node->inputs[in]].type.shape[2];
    if ((node->op != DFG_OP_CONV2D && node->op != DFG_OP_MAX_POOL &&
         node->op != DFG_OP_AVERAGE_POOL) || in != 0)
        return out;
    const dfg_attrs *a = &node->attrs;
    int64_t k = node->op == DFG_OP_CONV2D
                    ? g->values[node->inputs[1]].type.shape[2]
                    : a->kernel[0];
    int64_t d = a->dilations[0] > 0 ? a->dilations[0] : 1;
    int64_t s = a->strides[0] > 0 ? a->strides[0] : 1;
    int64_t lo = out.lo * s - a->pads[0];
    int64_t hi = (out.hi - 1) * s - a->pads[0] + (k - 1) * d + 1;
    return (rows){lo > 0 ? lo : 0, hi < h ? hi : h};
}

/* 1 if the band can take rows [held.lo, band k-1's held.hi) of y (a
 * region node's output) from band k-1's y and compute only the rest:
 * band k-1 holds them and not all of this band's. */
static int can_carry(const bands *b, int32_t y)
{
    rows h = b->held[y], p = b->prev_held[y];
    return b->prev_value[y] >= 0 && p.lo <= h.lo && h.lo < p.hi &&
           p.hi < h.hi;
}

/* How a band carries a value (bands.carried): not, from the row after
 * band k-1's last on, or from as high a row as its operands' rows held
 * for other readers allow (its node computes rows again where that
 * spares an operand's slice). */
#define CARRY_NONE 0
#define CARRY_NEW 1
#define CARRY_LOWERED 2

static int64_t row_bytes(const dfg_graph *g, int32_t v)
{
    const dfg_type *t = &g->values[v].type;
    return t->shape[0] * t->shape[1] * t->shape[3] *
           (int64_t)dfg_dtype_size(t->dtype);
}

/* The first row made[y] may start at under CARRY_LOWERED: lo, lowered
 * while every row operand of node holds the rows it then reads for its
 * other readers (held so far) and y stays carried (above held[y].lo). */
static int64_t lowered(const bands *b, const dfg_ir_node *node, rows m)
{
    for (;; m.lo--) {
        rows up = {m.lo - 1, m.hi};
        if (up.lo <= b->held[node->outputs[0]].lo)
            return m.lo;
        for (int32_t j = 0; j < node->n_inputs; j++) {
            int32_t v = node->inputs[j];
            if (v >= 0 && !dfg_tile_fixed(b->g, v) &&
                dfg_tile_input_rows(b->g, node, j, up).lo < b->held[v].lo)
                return m.lo;
        }
    }
}

/* The rows each value of the band (rows `out` of the cut) holds and
 * those its node computes, the values marked in `carried` carrying where
 * they can (from the cut up); returns what computing them costs: the
 * FLOPs, and as a program's overhead counts them
 * (dfg_program_overhead), per carry its two steps and the bytes they
 * copy (the band's rows of the value, and the carried ones again), per
 * operand read in part its slice. */
static int64_t band_rows(bands *b, const int32_t *nodes, int32_t n_nodes,
                         int32_t cut, rows out)
{
    const dfg_graph *g = b->g;
    /* Only the region's values are read: their rows start empty. */
    for (int32_t i = 0; i < n_nodes; i++) {
        const dfg_ir_node *node = &g->nodes[nodes[i]];
        for (int32_t j = 0; j < node->n_outputs; j++)
            b->held[node->outputs[j]] = (rows){INT64_MAX, -1};
        for (int32_t j = 0; j < node->n_inputs; j++)
            if (node->inputs[j] >= 0)
                b->held[node->inputs[j]] = (rows){INT64_MAX, -1};
    }
    b->held[cut] = out;
    int64_t cost = 0;
    for (int32_t i = n_nodes - 1; i >= 0; i--) {
        const dfg_ir_node *node = &g->nodes[nodes[i]];
        int32_t y = node->outputs[0];
        rows *m = &b->made[y];
        *m = b->held[y];
        if (b->carried[y] != CARRY_NONE && can_carry(b, y)) {
            m->lo = b->prev_held[y].hi;
            if (b->carried[y] == CARRY_LOWERED)
                m->lo = lowered(b, node, *m);
            cost += (int64_t)(dfg_step_overhead(
                                  0, row_bytes(g, y) *
                                         (2 * m->lo - 2 * b->held[y].lo +
                                          m->hi - m->lo)) +
                              dfg_step_overhead(0, 0));
        }
        cost += b->row_flops[y] * (m->hi - m->lo);
        for (int32_t j = 0; j < node->n_inputs; j++) {
            int32_t v = node->inputs[j];
            if (v < 0 || dfg_tile_fixed(g, v))
                continue;
            rows r = dfg_tile_input_rows(g, node, j, *m);
            rows *h = &b->held[v];
            h->lo = r.lo < h->lo ? r.lo : h->lo;
            h->hi = r.hi > h->hi ? r.hi : h->hi;
        }
    }
    for (int32_t i = 0; i < n_nodes; i++) {
        const dfg_ir_node *node = &g->nodes[nodes[i]];
        for (int32_t j = 0; j < node->n_inputs; j++) {
            int32_t v = node->inputs[j];
            if (v < 0 || dfg_tile_fixed(g, v))
                continue;
            rows r = dfg_tile_input_rows(g, node, j,
                                         b->made[node->outputs[0]]);
            rows h = v == b->input ? (rows){0, g->values[v].type.shape[2]}
                                   : b->held[v];
            if (r.lo != h.lo || r.hi != h.hi)
                cost += (int64_t)dfg_step_overhead(
                    0, row_bytes(g, v) * (r.hi - r.lo));
        }
    }
    return cost;
}

/* How the band carries each value (carried, then held and made as
 * band_rows leaves them): from the cut up, for each value that can carry,
 * the way of least cost for the band with those below it decided and
 * those above it computed (a value's rows are set by its readers, all
 * below it). */
void dfg_tile_choose_carries(dfg_tile_bands *b, const int32_t *nodes,
                             int32_t n_nodes, int32_t cut,
                             dfg_tile_rows out)
{
    memset(b->carried, CARRY_NONE, (size_t)b->n_values);
    int64_t best = band_rows(b, nodes, n_nodes, cut, out);
    for (int32_t i = n_nodes - 1; b->carry && i >= 0; i--) {
        int32_t y = b->g->nodes[nodes[i]].outputs[0];
        if (!can_carry(b, y))
            continue;
        uint8_t way = CARRY_NONE;
        for (uint8_t w = CARRY_NEW; w <= CARRY_LOWERED; w++) {
            b->carried[y] = w;
            int64_t cost = band_rows(b, nodes, n_nodes, cut, out);
            if (cost < best) {
                best = cost;
                way = w;
            }
        }
        b->carried[y] = way;
    }
    band_rows(b, nodes, n_nodes, cut, out);
}

