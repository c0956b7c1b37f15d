/* Tiled execution: see tile_spatial.h. */
#include "passes/tiling/tile_spatial.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "passes/tiling/tile_bands.h"
#include "util/error.h"
#include "util/memory.h"

/* The most operands a region node has (a concat's). */
#define MAX_OPERANDS 64

typedef dfg_tile_rows rows;
typedef dfg_tile_bands bands;

/* The walk over the region: which nodes are in it, in recorded order. */
typedef struct region {
    const dfg_graph *g;
    int32_t input;      /* the image the region reads */
    int32_t *nodes;     /* [n_nodes] region nodes in recorded order */
    int32_t n;
    uint8_t *inside;    /* [n_values] the input and region nodes' outputs */
    int32_t *remaining; /* [n_values] reads not by region nodes (+1 output) */
    int32_t stop;       /* the node the walk stopped at, or -1 */
} region;

static int stored(const dfg_graph *g, int32_t v)
{
    return v >= 0 && (g->values[v].kind == DFG_VALUE_WEIGHT ||
                      g->values[v].kind == DFG_VALUE_CONSTANT);
}

static int image(const dfg_graph *g, int32_t v)
{
    const dfg_type *t = &g->values[v].type;
    return t->rank == 4 && t->dtype == DFG_F32 &&
           t->layout == DFG_LAYOUT_PLAIN && t->shape[2] > 1;
}

/* An operand an element-wise op broadcasts over the rows, at most one
 * element per channel: stored, or computed ([N,C,1,1], as a squeeze-
 * excite gate): a value no region node writes (this walk's), so one the
 * bands read whole (dfg_tile_fixed). */
static int per_channel(const dfg_graph *g, int32_t v, int64_t channels)
{
    const dfg_type *t = &g->values[v].type;
    return (stored(g, v) || (t->rank == 4 && t->shape[2] == 1 &&
                             t->shape[3] == 1)) &&
           dfg_type_numel(t) <= channels;
}

/* A value of type out that no region node writes (so one that does not
 * depend on them: the walk stops at a node that reads the region and
 * is no region op), that the bands read by rows. */
static int side(const region *r, int32_t v, const dfg_type *out)
{
    return v >= 0 && !r->inside[v] && !stored(r->g, v) &&
           dfg_type_equal(&r->g->values[v].type, out);
}

/* 1 if node n works on rows and reads the region as it must: its row
 * operands inside (or side values), the others stored. */
static int fits(const region *r, int32_t n)
{
    const dfg_graph *g = r->g;
    const dfg_ir_node *node = &g->nodes[n];
    if (node->n_outputs != 1 || !image(g, node->outputs[0]))
        return 0;
    int64_t channels = g->values[node->outputs[0]].type.shape[1];
    const int32_t *in = node->inputs;
    switch (node->op) {
    case DFG_OP_CONV2D:
        return r->inside[in[0]] && stored(g, in[1]) &&
               (node->n_inputs < 3 || in[2] < 0 || stored(g, in[2])) &&
               (node->n_inputs < 4 || in[3] < 0 || r->inside[in[3]] ||
                side(r, in[3], &g->values[node->outputs[0]].type));
    case DFG_OP_AVERAGE_POOL:
        if (node->attrs.ceil_mode)
            return 0;
        /* fall through */
    case DFG_OP_MAX_POOL:
        return r->inside[in[0]] && node->attrs.dilations[0] <= 1;
    case DFG_OP_BATCH_NORM:
        for (int32_t i = 1; i < 5; i++)
            if (!stored(g, in[i]))
                return 0;
        return r->inside[in[0]];
    case DFG_OP_CONCAT:
        if (node->n_inputs > MAX_OPERANDS)
            return 0;
        for (int32_t i = 0; i < node->n_inputs; i++)
            if (in[i] < 0 || !r->inside[in[i]])
                return 0;
        return node->attrs.axis == 1;
    case DFG_OP_ADD: case DFG_OP_SUB: case DFG_OP_MUL: case DFG_OP_DIV:
    case DFG_OP_MAX: case DFG_OP_MIN: {
        int a = r->inside[in[0]], b = r->inside[in[1]];
        const dfg_type *out = &g->values[node->outputs[0]].type;
        for (int32_t i = 0; i < 2; i++)
            if (r->inside[in[i]] &&
                !dfg_type_equal(&g->values[in[i]].type, out))
                return 0;
        return (a && b) ||
               (a && (per_channel(g, in[1], channels) ||
                      side(r, in[1], out))) ||
               (b && (per_channel(g, in[0], channels) ||
                      side(r, in[0], out)));
    }
    case DFG_OP_SLICE:
        for (int32_t i = 0; i < node->attrs.n_axes; i++)
            if (node->attrs.axes[i] == 2 || node->attrs.axes[i] == -2)
                return 0;
        return r->inside[in[0]];
    case DFG_OP_RELU: case DFG_OP_LEAKY_RELU: case DFG_OP_SIGMOID:
    case DFG_OP_TANH: case DFG_OP_CLIP: case DFG_OP_GELU: case DFG_OP_NEG:
    case DFG_OP_ABS: case DFG_OP_EXP: case DFG_OP_ERF:
        return r->inside[in[0]];
    default:
        return 0;
    }
}

static int reads_inside(const region *r, int32_t n)
{
    const dfg_ir_node *node = &r->g->nodes[n];
    for (int32_t i = 0; i < node->n_inputs; i++)
        if (node->inputs[i] >= 0 && r->inside[node->inputs[i]])
            return 1;
    return 0;
}

/* 1 if of the region's values node n reads only its input. */
static int reads_only_input(const region *r, int32_t n)
{
    const dfg_ir_node *node = &r->g->nodes[n];
    for (int32_t i = 0; i < node->n_inputs; i++)
        if (node->inputs[i] >= 0 && node->inputs[i] != r->input &&
            r->inside[node->inputs[i]])
            return 0;
    return 1;
}

static void region_free(region *r)
{
    dfg_allocator a = r->g->allocator;
    dfg_free(&a, r->nodes);
    dfg_free(&a, r->inside);
    dfg_free(&a, r->remaining);
}

/* The region's image: the first graph input that is one, or -1. */
static int32_t region_input(const dfg_graph *g)
{
    for (int32_t v = 0; v < g->n_values; v++)
        if (g->values[v].kind == DFG_VALUE_INPUT && image(g, v))
            return v;
    return -1;
}

/* The region reads `from` (a plain f32 image), or with -1 the graph's
 * first image input. */
static dfg_status region_make(const dfg_graph *g, int32_t from, region *r)
{
    memset(r, 0, sizeof *r);
    r->g = g;
    dfg_allocator a = g->allocator;
    r->nodes = dfg_calloc(&a, (size_t)g->n_nodes + 1, sizeof *r->nodes);
    r->inside = dfg_calloc(&a, (size_t)g->n_values + 1, 1);
    r->remaining = dfg_calloc(&a, (size_t)g->n_values + 1,
                              sizeof *r->remaining);
    if (!r->nodes || !r->inside || !r->remaining) {
        region_free(r);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "tiling: out of memory");
    }
    for (int32_t n = 0; n < g->n_nodes; n++)
        for (int32_t i = 0; !g->nodes[n].dead && i < g->nodes[n].n_inputs;
             i++)
            if (g->nodes[n].inputs[i] >= 0)
                r->remaining[g->nodes[n].inputs[i]]++;
    for (int32_t i = 0; i < g->n_outputs; i++)
        r->remaining[g->outputs[i]]++;
    r->stop = -1;
    r->input = from < 0 ? region_input(g)
               : from < g->n_values && image(g, from) ? from : -1;
    if (r->input >= 0)
        r->inside[r->input] = 1;
    return DFG_OK;
}

/* Walks the region in recorded order; calls at_cut (when not NULL) at
 * each cut with the region so far; stops after the cut `stop` (-1: at
 * the region's end). Returns the last cut walked over, or -1. */
static int32_t walk(region *r, int32_t stop,
                    void (*at_cut)(void *ctx, int32_t cut),
                    void *ctx)
{
    const dfg_graph *g = r->g;
    int32_t escaping = 0, last_cut = -1;
    if (r->input < 0)
        return -1;
    for (int32_t n = 0; n < g->n_nodes; n++) {
        const dfg_ir_node *node = &g->nodes[n];
        if (node->dead || !reads_inside(r, n))
            continue;
        if (!fits(r, n)) {
            if (reads_only_input(r, n))
                continue; /* the input lives on: read it whole */
            r->stop = n;
            break;
        }
        r->nodes[r->n++] = n;
        for (int32_t i = 0; i < node->n_inputs; i++) {
            int32_t v = node->inputs[i];
            if (v >= 0 && r->inside[v] && --r->remaining[v] == 0 &&
                v != r->input)
                escaping--;
        }
        int32_t y = node->outputs[0];
        r->inside[y] = 1;
        if (r->remaining[y] > 0)
            escaping++;
        if (escaping != 1 || r->remaining[y] == 0 || g->values[y].is_output)
            continue;
        last_cut = y;
        if (at_cut)
            at_cut(ctx, y);
        if (y == stop)
            return y;
    }
    return stop >= 0 ? -1 : last_cut;
}

typedef struct cut_list {
    int32_t *values;
    int32_t max, n;
} cut_list;

static void add_cut(void *ctx, int32_t cut)
{
    cut_list *l = ctx;
    if (l->n < l->max)
        l->values[l->n++] = cut;
}

dfg_status dfg_tile_region(const dfg_graph *graph, int32_t from,
                           uint8_t *inside, int32_t *stop, int32_t *cuts,
                           int32_t max_cuts, int32_t *n_cuts)
{
    region r;
    dfg_status st = region_make(graph, from, &r);
    if (st != DFG_OK)
        return st;
    cut_list l = {cuts, cuts ? max_cuts : 0, 0};
    walk(&r, -1, add_cut, &l);
    if (inside)
        memcpy(inside, r.inside, (size_t)graph->n_values);
    if (stop)
        *stop = r.stop;
    if (n_cuts)
        *n_cuts = l.n;
    region_free(&r);
    return DFG_OK;
}

/* The right pad under which a max pool with ceil_mode gives its output
 * columns without it: the last window's columns past the input are
 * padding, which a max pool ignores. */
static int64_t last_column_pad(const dfg_graph *g, const dfg_ir_node *node)
{
    const dfg_attrs *a = &node->attrs;
    int64_t w = g->values[node->inputs[0]].type.shape[3];
    int64_t w_out = g->values[node->outputs[0]].type.shape[3];
    int64_t s = a->strides[1] > 0 ? a->strides[1] : 1;
    int64_t d = a->dilations[1] > 0 ? a->dilations[1] : 1;
    int64_t need = (w_out - 1) * s + (a->kernel[1] - 1) * d + 1 - w -
                   a->pads[1];
    return need > a->pads[3] ? need : a->pads[3];
}

static dfg_status add(dfg_graph *g, dfg_op op, const char *base, int k,
                      const char *what, const int32_t *in, int32_t n_in,
                      const dfg_attrs *attrs, int32_t *out)
{
    char name[300];
    snprintf(name, sizeof name, "%.240s/tile_%d%s", base, k, what);
    return dfg_graph_add_node(g, op, name, in, n_in, attrs, 1, out);
}

/* Rows want of value `have`, which holds rows `held`: have itself, or a
 * slice of it (named after base, band k and what). */
static dfg_status rows_of(dfg_graph *g, int32_t have, rows held, rows want,
                          const char *base, int k, const char *what,
                          int32_t *out)
{
    if (held.lo == want.lo && held.hi == want.hi) {
        *out = have;
        return DFG_OK;
    }
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.n_axes = 1;
    a.axes[0] = 2;
    a.starts[0] = want.lo - held.lo;
    a.ends[0] = want.hi - held.lo;
    a.steps[0] = 1;
    return add(g, DFG_OP_SLICE, base, k, what, &have, 1, &a, out);
}

/* Value v of the band, holding exactly rows want: the band's own value,
 * or a slice of it (or of the image) when it holds more. */
static dfg_status band_operand(bands *b, int32_t v, rows want,
                               const char *base, int k, int32_t in,
                               int32_t *out)
{
    int32_t have = b->value[v] >= 0 ? b->value[v] : v;
    rows held = b->value[v] >= 0
                    ? b->held[v]
                    : (rows){0, b->g->values[v].type.shape[2]};
    char what[32];
    snprintf(what, sizeof what, "/rows_%d", (int)in);
    return rows_of(b->g, have, held, want, base, k, what, out);
}

/* Records the band's node that writes y (original node, a copy: recording
 * nodes may move g->nodes) on rows made[y], with operands in; where rows
 * are carried, joined below the slice of band k-1's rows that value[y]
 * holds (recorded at the band's start). */
static dfg_status add_node(bands *b, const dfg_ir_node *node, int k,
                           const int32_t *in)
{
    dfg_graph *g = b->g;
    int32_t y = node->outputs[0];
    rows want = b->made[y];
    int carried = want.lo != b->held[y].lo;
    int32_t made;
    dfg_attrs a = node->attrs;
    if (node->op == DFG_OP_CONV2D || node->op == DFG_OP_MAX_POOL ||
        node->op == DFG_OP_AVERAGE_POOL) {
        rows r = dfg_tile_input_rows(g, node, 0, want);
        int64_t s = a.strides[0] > 0 ? a.strides[0] : 1;
        int64_t k_eff = (node->op == DFG_OP_CONV2D
                             ? g->values[node->inputs[1]].type.shape[2]
                             : a.kernel[0]) - 1;
        k_eff = k_eff * (a.dilations[0] > 0 ? a.dilations[0] : 1) + 1;
        /* The band's first window starts at row `top` of the input
         * (negative inside the top pad), its last ends at `end`. */
        int64_t top = want.lo * s - a.pads[0];
        int64_t end = (want.hi - 1) * s - a.pads[0] + k_eff;
        a.pads[0] = r.lo - top;
        a.pads[2] = end - r.hi;
        if (a.ceil_mode) /* a max pool's: its last column by pad */
            a.pads[3] = last_column_pad(g, node);
        a.ceil_mode = 0;
    }
    dfg_status st = add(g, node->op, node->name, k, carried ? "/new" : "",
                        in, node->n_inputs, &a, &made);
    if (st != DFG_OK)
        return st;
    const dfg_type *t = &g->values[made].type;
    dfg_type band = g->values[y].type;
    band.shape[2] = want.hi - want.lo;
    if (!dfg_type_equal(t, &band))
        return dfg_error(DFG_ERR_SHAPE, "tiling: node '%s' band %d gives "
                         "[%lld,%lld,%lld,%lld], not %lld rows of its "
                         "output", node->name, k, (long long)t->shape[0],
                         (long long)t->shape[1], (long long)t->shape[2],
                         (long long)t->shape[3],
                         (long long)(want.hi - want.lo));
    if (!carried) {
        b->value[y] = made;
        return DFG_OK;
    }
    dfg_attrs cat;
    dfg_attrs_init(&cat);
    cat.axis = 2;
    int32_t parts[2] = {b->value[y], made};
    return add(g, DFG_OP_CONCAT, node->name, k, "", parts, 2, &cat,
               &b->value[y]);
}

/* Records band k of the region's nodes, whose rows
 * (dfg_tile_choose_carries) and carried slices of band k-1's rows (in
 * value[], until the node joins them) b holds; with next (band k+1's
 * rows chosen, NULL for the last band), each value's slice of the rows
 * band k+1 carries, recorded right after its node (into next->value):
 * band k's value then dies at its last reader in the band, where a slice
 * taken at band k+1's start kept every carried value alive across it. */
static dfg_status add_band(bands *b, bands *next, const int32_t *nodes,
                           int32_t n_nodes, int32_t cut, int k,
                           int32_t *joined)
{
    dfg_graph *g = b->g;
    dfg_status st = DFG_OK;
    for (int32_t i = 0; st == DFG_OK && i < n_nodes; i++) {
        /* A copy: recording nodes may move g->nodes. */
        const dfg_ir_node node = g->nodes[nodes[i]];
        int32_t in[MAX_OPERANDS], y = node.outputs[0];
        rows want = b->made[y];
        for (int32_t j = 0; st == DFG_OK && j < node.n_inputs; j++) {
            in[j] = node.inputs[j];
            if (in[j] >= 0 && !dfg_tile_fixed(g, in[j]))
                st = band_operand(b, in[j],
                                  dfg_tile_input_rows(g, &node, j, want),
                                  node.name, k, j, &in[j]);
        }
        if (st == DFG_OK)
            st = add_node(b, &node, k, in);
        if (st == DFG_OK && next && next->made[y].lo != next->held[y].lo)
            st = rows_of(g, b->value[y], b->held[y],
                         (rows){next->held[y].lo, next->made[y].lo},
                         node.name, k + 1, "/carried", &next->value[y]);
    }
    *joined = b->value[cut];
    return st;
}

/* The new nodes (from first_added on) take the place of the region's
 * last node; the region's nodes die. */
static dfg_status take_place(dfg_graph *g, const region *r,
                             int32_t first_added)
{
    int32_t *order = dfg_calloc(&g->allocator, (size_t)g->n_nodes + 1,
                                sizeof *order);
    if (!order)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "tiling: out of memory");
    int32_t at = 0, last = r->nodes[r->n - 1];
    for (int32_t n = 0; n < first_added; n++) {
        order[at++] = n;
        for (int32_t m = first_added; n == last && m < g->n_nodes; m++)
            order[at++] = m;
    }
    for (int32_t i = 0; i < r->n; i++)
        g->nodes[r->nodes[i]].dead = 1;
    dfg_status st = dfg_graph_reorder_nodes(g, order);
    dfg_free(&g->allocator, order);
    return st;
}

dfg_status dfg_tile_put_rows(dfg_graph *graph, const char *cut_name, int k,
                             int32_t whole, int32_t part, int64_t at,
                             int64_t rows, int32_t *joined)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.n_axes = 1;
    a.axes[0] = 2;
    a.starts[0] = at;
    a.ends[0] = at + graph->values[part].type.shape[2];
    a.steps[0] = 1;
    a.n_shape = whole < 0;
    a.shape[0] = rows;
    int32_t in[2] = {whole, part};
    char name[300];
    snprintf(name, sizeof name, "%.270s/tiles_%d", cut_name, k);
    return dfg_graph_add_node(graph, DFG_OP_PUT_ROWS, name,
                              whole < 0 ? in + 1 : in, whole < 0 ? 1 : 2,
                              &a, 1, joined);
}

/* The bands' rows of the cut joined by a concat along the rows. */
static dfg_status concat_rows(dfg_graph *g, int32_t cut, const int32_t *parts,
                              int32_t tiles, int32_t *joined)
{
    dfg_attrs cat;
    dfg_attrs_init(&cat);
    cat.axis = 2;
    char name[300];
    snprintf(name, sizeof name, "%.270s/tiles", g->values[cut].name);
    return dfg_graph_add_node(g, DFG_OP_CONCAT, name, parts, tiles, &cat, 1,
                              joined);
}

/* Frees b (band k's) and next (band k+1's: its own rows, values and
 * prev_value; prev_held and row_flops are b's). */
static void bands_free(bands *b, bands *next)
{
    dfg_allocator *a = &b->g->allocator;
    bands *both[2] = {b, next};
    for (int i = 0; i < 2; i++) {
        dfg_free(a, both[i]->held);
        dfg_free(a, both[i]->made);
        dfg_free(a, both[i]->value);
        dfg_free(a, both[i]->prev_value);
        dfg_free(a, both[i]->carried);
    }
    dfg_free(a, b->prev_held);
    dfg_free(a, b->row_flops);
}

/* The bands of region r's values: b for band 0 (band k-1's all absent,
 * values none) and next for the band after it (band k-1's: each value,
 * made by the band before), with the FLOPs of an output row of each
 * region node. */
static dfg_status bands_make(dfg_graph *g, const region *r, int carry,
                             bands *b, bands *next)
{
    dfg_allocator *a = &g->allocator;
    size_t n = (size_t)g->n_values;
    *b = (bands){g, dfg_calloc(a, n, sizeof(rows)),
                 dfg_calloc(a, n, sizeof(rows)),
                 dfg_calloc(a, n, sizeof(int32_t)),
                 dfg_calloc(a, n, sizeof(rows)),
                 dfg_calloc(a, n, sizeof(int32_t)),
                 dfg_calloc(a, n, sizeof(int64_t)), dfg_calloc(a, n, 1),
                 r->input, g->n_values, carry};
    *next = *b;
    next->held = dfg_calloc(a, n, sizeof(rows));
    next->made = dfg_calloc(a, n, sizeof(rows));
    next->value = dfg_calloc(a, n, sizeof(int32_t));
    next->prev_value = dfg_calloc(a, n, sizeof(int32_t));
    next->carried = dfg_calloc(a, n, 1);
    if (!b->held || !b->made || !b->value || !b->prev_held ||
        !b->prev_value || !b->row_flops || !b->carried || !next->held ||
        !next->made || !next->value || !next->prev_value || !next->carried)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "tiling: out of memory");
    for (int32_t v = 0; v < b->n_values; v++)
        b->prev_value[v] = b->value[v] = next->value[v] = -1;
    for (int32_t i = 0; i < r->n; i++) {
        dfg_type *types = dfg_node_types(g, r->nodes[i], a);
        if (!types)
            return dfg_error(DFG_ERR_OUT_OF_MEMORY, "tiling: out of memory");
        int32_t y = g->nodes[r->nodes[i]].outputs[0];
        b->row_flops[y] = dfg_node_flops(g, r->nodes[i], types) /
                          g->values[y].type.shape[2];
        dfg_free(a, types);
    }
    return DFG_OK;
}

#define SWAP(type, x, y) do { type t_ = (x); (x) = (y); (y) = t_; } while (0)

/* Rows [lo, hi) of the cut's h that band k of `tiles` computes. */
static rows band_of(int64_t h, int32_t tiles, int k)
{
    return (rows){h * k / tiles, h * (k + 1) / tiles};
}

static dfg_status tile(dfg_graph *g, const region *r, int32_t cut,
                       int32_t tiles, int put, int carry,
                       int32_t *joined_out)
{
    int64_t h = g->values[cut].type.shape[2];
    int32_t first_added = g->n_nodes, parts[64], joined = -1;
    bands b, next;
    dfg_status st = bands_make(g, r, carry, &b, &next);
    if (st == DFG_OK)
        dfg_tile_choose_carries(&b, r->nodes, r->n, cut, band_of(h, tiles, 0));
    for (int k = 0; st == DFG_OK && k < tiles; k++) {
        int last = k + 1 == tiles;
        for (int32_t i = 0; i < r->n; i++) /* only its nodes' are set */
            next.value[g->nodes[r->nodes[i]].outputs[0]] = -1;
        next.prev_held = b.held;
        if (!last)
            dfg_tile_choose_carries(&next, r->nodes, r->n, cut,
                                    band_of(h, tiles, k + 1));
        st = add_band(&b, last ? NULL : &next, r->nodes, r->n, cut, k,
                      &parts[k]);
        rows out = band_of(h, tiles, k);
        if (st == DFG_OK && put)
            st = dfg_tile_put_rows(g, g->values[cut].name, k, joined,
                                   parts[k], out.lo, h, &joined);
        SWAP(rows *, b.held, next.held);
        SWAP(rows *, b.made, next.made);
        SWAP(uint8_t *, b.carried, next.carried);
        SWAP(int32_t *, b.value, next.value);
    }
    bands_free(&b, &next);
    if (st == DFG_OK && !put)
        st = concat_rows(g, cut, parts, tiles, &joined);
    if (st != DFG_OK)
        return st;
    for (int32_t n = 0; n < first_added; n++)
        for (int32_t i = 0; !g->nodes[n].dead && i < g->nodes[n].n_inputs; i++)
            if (g->nodes[n].inputs[i] == cut)
                g->nodes[n].inputs[i] = joined;
    *joined_out = joined;
    return take_place(g, r, first_added);
}

dfg_status dfg_pass_tile_spatial(dfg_graph *graph, int32_t from, int32_t cut,
                                 int32_t tiles, int put, int carry,
                                 int32_t *joined, dfg_pass_report *report)
{
    memset(report, 0, sizeof *report);
    report->pass = "tile_spatial";
    region r;
    dfg_status st = region_make(graph, from, &r);
    if (st != DFG_OK)
        return st;
    if (cut < 0 || walk(&r, cut, NULL, NULL) != cut || tiles < 2 ||
        tiles > 64 || tiles > graph->values[cut].type.shape[2])
        st = dfg_error(DFG_ERR_INVALID_ARGUMENT, "tiling: value %d is no "
                       "cut of the region in %d bands", (int)cut, (int)tiles);
    if (st == DFG_OK)
        st = tile(graph, &r, cut, tiles, put, carry, joined);
    if (st == DFG_OK)
        report->nodes_tiled = r.n;
    region_free(&r);
    return st;
}
