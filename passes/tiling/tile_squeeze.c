/* Tiled execution through squeeze-excite blocks: see tile_squeeze.h. */
#include "passes/tiling/tile_squeeze.h"

#include <stdio.h>
#include <string.h>
#include "passes/tiling/tile_spatial.h"
#include "util/error.h"
#include "util/memory.h"

/* One block being crossed. */
typedef struct crossing {
    dfg_graph *g;
    int32_t from, tiles;
    int32_t image;   /* the region's image */
    int32_t pooled;  /* the pool's output */
    int32_t x;       /* the pool's input, a region value */
    int32_t *prefix; /* [n_prefix] region nodes x needs, in order */
    int32_t n_prefix;
} crossing;

static dfg_status no_memory(void)
{
    return dfg_error(DFG_ERR_OUT_OF_MEMORY, "tiling: out of memory");
}

static int32_t reader_count(const dfg_graph *g, int32_t v)
{
    int32_t n = 0;
    for (int32_t m = 0; m < g->n_nodes; m++)
        for (int32_t i = 0; !g->nodes[m].dead && i < g->nodes[m].n_inputs;
             i++)
            n += g->nodes[m].inputs[i] == v;
    return n;
}

/* Finds the block the region stops at and the region nodes its pooled
 * value x needs; c->x -1 when the region stops at no such block. */
static dfg_status find_block(crossing *c)
{
    dfg_graph *g = c->g;
    c->x = -1;
    uint8_t *inside = dfg_calloc(&g->allocator, (size_t)g->n_values + 1, 1);
    uint8_t *need = dfg_calloc(&g->allocator, (size_t)g->n_values + 1, 1);
    c->prefix = dfg_calloc(&g->allocator, (size_t)g->n_nodes + 1,
                           sizeof *c->prefix);
    int32_t stop = -1;
    dfg_status st = inside && need && c->prefix ? DFG_OK : no_memory();
    if (st == DFG_OK)
        st = dfg_tile_region(g, c->from, inside, &stop, NULL, 0, NULL);
    const dfg_ir_node *pool = stop >= 0 ? &g->nodes[stop] : NULL;
    for (int32_t v = 0; c->from < 0 && v < g->n_values; v++)
        if (inside[v] && g->values[v].kind == DFG_VALUE_INPUT)
            c->image = v;
    /* A block scales x by its gate: x has a reader besides the pool. */
    if (st == DFG_OK && pool && pool->op == DFG_OP_GLOBAL_AVERAGE_POOL &&
        inside[pool->inputs[0]] && !g->values[pool->outputs[0]].is_output &&
        !g->values[pool->inputs[0]].is_output &&
        reader_count(g, pool->inputs[0]) > 1) {
        c->x = pool->inputs[0];
        c->pooled = pool->outputs[0];
        need[c->x] = 1;
        /* The region's nodes are those that write its values. */
        for (int32_t n = stop - 1; n >= 0; n--) {
            const dfg_ir_node *node = &g->nodes[n];
            if (node->dead || node->n_outputs != 1 ||
                !need[node->outputs[0]] || node->outputs[0] == c->image)
                continue;
            c->prefix[c->n_prefix++] = n;
            for (int32_t i = 0; i < node->n_inputs; i++)
                if (node->inputs[i] >= 0 && inside[node->inputs[i]])
                    need[node->inputs[i]] = 1;
        }
        for (int32_t i = 0; i < c->n_prefix / 2; i++) {
            int32_t t = c->prefix[i];
            c->prefix[i] = c->prefix[c->n_prefix - 1 - i];
            c->prefix[c->n_prefix - 1 - i] = t;
        }
    }
    dfg_free(&g->allocator, inside);
    dfg_free(&g->allocator, need);
    return st;
}

static dfg_status add(dfg_graph *g, dfg_op op, const char *base,
                      const char *what, int k, const int32_t *in,
                      int32_t n_in, const dfg_attrs *attrs, int32_t *out)
{
    char name[300];
    /* What first: the tiling cuts names short at their end. */
    snprintf(name, sizeof name, "%s_%d/%.240s", what, k, base);
    return dfg_graph_add_node(g, op, name, in, n_in, attrs, 1, out);
}

/* Live nodes' reads of value `was` read `now` instead. */
static void replace_reads(dfg_graph *g, int32_t was, int32_t now)
{
    for (int32_t n = 0; n < g->n_nodes; n++)
        for (int32_t i = 0; !g->nodes[n].dead && i < g->nodes[n].n_inputs;
             i++)
            if (g->nodes[n].inputs[i] == was)
                g->nodes[n].inputs[i] = now;
}

/* Pass 1's nodes, placed right after x: a view of the region's image
 * (so that the copy is a region of its own), then a copy of the prefix
 * reading it; *view and *copy_x: the view and the copy of x. */
static dfg_status copy_prefix(crossing *c, int32_t *view, int32_t *copy_x)
{
    dfg_graph *g = c->g;
    int32_t n_original = g->n_nodes, image = c->image;
    int32_t *map = dfg_calloc(&g->allocator, (size_t)g->n_values + 1,
                              sizeof *map);
    if (!map)
        return no_memory();
    for (int32_t v = 0; v < g->n_values; v++)
        map[v] = v;
    dfg_attrs none;
    dfg_attrs_init(&none);
    /* Names tell crossings apart by their pool's value. */
    dfg_status st = add(g, DFG_OP_IDENTITY, g->values[image].name,
                        "squeeze_view", (int)c->pooled, &image, 1, &none,
                        view);
    if (st == DFG_OK)
        map[image] = *view;
    for (int32_t i = 0; st == DFG_OK && i < c->n_prefix; i++) {
        /* A copy: recording nodes may move g->nodes. */
        const dfg_ir_node node = g->nodes[c->prefix[i]];
        int32_t in[64], y;
        if (node.n_inputs > 64) {
            st = dfg_error(DFG_ERR_UNSUPPORTED, "tiling: node '%s' has %d "
                           "inputs", node.name, (int)node.n_inputs);
            break;
        }
        for (int32_t j = 0; j < node.n_inputs; j++)
            in[j] = node.inputs[j] >= 0 ? map[node.inputs[j]] : -1;
        st = add(g, node.op, node.name, "squeeze_pass", (int)c->pooled, in,
                 node.n_inputs, &node.attrs, &y);
        if (st == DFG_OK)
            map[node.outputs[0]] = y;
    }
    *copy_x = map[c->x];
    dfg_free(&g->allocator, map);
    int32_t pool = g->values[c->pooled].producer;
    /* Right after x: before every reader of x, which a carried x's join
     * replaces; after every value the copy reads. */
    int32_t at = g->values[c->x].producer + 1;
    if (st == DFG_OK)
        g->nodes[pool].inputs[0] = *copy_x;
    int32_t *before = dfg_calloc(&g->allocator,
                                 (size_t)(g->n_nodes - n_original) + 1,
                                 sizeof *before);
    if (st == DFG_OK && !before)
        st = no_memory();
    for (int32_t k = 0; st == DFG_OK && k < g->n_nodes - n_original; k++)
        before[k] = at;
    if (st == DFG_OK)
        st = dfg_graph_place_appended(g, n_original, before);
    dfg_free(&g->allocator, before);
    return st;
}

/* The pool of x whole becomes the sum of its bands' pools, each weighted
 * by the band's share of x's rows; the join of the bands dies. */
static dfg_status pool_bands(crossing *c, int32_t joined)
{
    dfg_graph *g = c->g;
    int32_t n_original = g->n_nodes, pool = g->values[c->pooled].producer;
    int32_t join = g->values[joined].producer, sum = -1;
    const char *name = g->nodes[pool].name;
    int64_t rows = g->values[joined].type.shape[2];
    dfg_attrs none;
    dfg_attrs_init(&none);
    dfg_status st = DFG_OK;
    for (int32_t k = 0; st == DFG_OK && k < g->nodes[join].n_inputs; k++) {
        int32_t part = g->nodes[join].inputs[k], pooled, share, weighted;
        float w = (float)g->values[part].type.shape[2] / (float)rows;
        char share_name[300];
        snprintf(share_name, sizeof share_name, "band_share_%d/%.240s",
                 (int)k, name);
        dfg_value handle = DFG_NO_VALUE;
        st = add(g, DFG_OP_GLOBAL_AVERAGE_POOL, name, "band_pool", (int)k,
                 &part, 1, &none, &pooled);
        if (st == DFG_OK)
            st = dfg_graph_constant(g, share_name, DFG_F32, 0, NULL, &w,
                                    &handle);
        share = dfg_graph_index(g, handle);
        if (st == DFG_OK)
            st = add(g, DFG_OP_MUL, name, "band_weighted", (int)k,
                     (int32_t[]){pooled, share}, 2, &none, &weighted);
        if (st == DFG_OK && sum >= 0)
            st = add(g, DFG_OP_ADD, name, "band_sum", (int)k,
                     (int32_t[]){sum, weighted}, 2, &none, &weighted);
        sum = weighted;
    }
    if (st != DFG_OK)
        return st;
    replace_reads(g, c->pooled, sum);
    g->nodes[pool].dead = 1;
    g->nodes[join].dead = 1;
    int32_t *before = dfg_calloc(&g->allocator,
                                 (size_t)(g->n_nodes - n_original) + 1,
                                 sizeof *before);
    if (!before)
        return no_memory();
    for (int32_t k = 0; k < g->n_nodes - n_original; k++)
        before[k] = pool;
    st = dfg_graph_place_appended(g, n_original, before);
    dfg_free(&g->allocator, before);
    return st;
}

/* x whole is pass 1's join: its readers read that, and the prefix nodes
 * nothing reads any more die. */
static dfg_status carry(crossing *c, int32_t joined)
{
    dfg_graph *g = c->g;
    replace_reads(g, c->x, joined);
    int32_t *readers = dfg_calloc(&g->allocator, (size_t)g->n_values + 1,
                                  sizeof *readers);
    if (!readers)
        return no_memory();
    dfg_graph_count_readers(g, readers);
    for (int32_t i = c->n_prefix - 1; i >= 0; i--) {
        dfg_ir_node *node = &g->nodes[c->prefix[i]];
        if (readers[node->outputs[0]] > 0 ||
            g->values[node->outputs[0]].is_output)
            continue;
        node->dead = 1;
        for (int32_t j = 0; j < node->n_inputs; j++)
            if (node->inputs[j] >= 0)
                readers[node->inputs[j]]--;
    }
    dfg_free(&g->allocator, readers);
    return DFG_OK;
}

/* Crosses the block the region stops at (mode: DFG_TILE_RECOMPUTE or
 * DFG_TILE_CARRY); *found 0 when it stops at none. */
static dfg_status cross(dfg_graph *g, int32_t from, int32_t tiles,
                        int32_t mode, int *found)
{
    crossing c = {g, from, tiles, from, -1, -1, NULL, 0};
    dfg_status st = find_block(&c);
    *found = st == DFG_OK && c.x >= 0 && c.n_prefix > 0 && c.image >= 0;
    int32_t view = -1, copy_x = -1, joined = -1;
    if (*found)
        st = copy_prefix(&c, &view, &copy_x);
    dfg_pass_report report;
    if (*found && st == DFG_OK)
        st = dfg_pass_tile_spatial(g, view, copy_x, tiles, 0, 1, &joined,
                                   &report);
    if (*found && st == DFG_OK) {
        /* Pass 1 reads the image itself: its view is gone. */
        g->nodes[g->values[view].producer].dead = 1;
        replace_reads(g, view, g->nodes[g->values[view].producer].inputs[0]);
        st = mode == DFG_TILE_CARRY ? carry(&c, joined)
                                    : pool_bands(&c, joined);
    }
    dfg_free(&g->allocator, c.prefix);
    return st;
}

int32_t dfg_tile_squeezes_asked(int32_t code)
{
    int32_t n = 0;
    for (; code > 0; code /= 3)
        n++;
    return n;
}

dfg_status dfg_tile_cross_squeezes(dfg_graph *graph, int32_t from,
                                   int32_t tiles, int32_t code,
                                   int32_t *crossed)
{
    *crossed = 0;
    dfg_status st = DFG_OK;
    for (int found = 1; st == DFG_OK && found && code > 0; code /= 3) {
        int32_t mode = code % 3;
        if (mode != DFG_TILE_RECOMPUTE && mode != DFG_TILE_CARRY)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT, "tiling: crossing "
                             "code digit %d is no way to cross a block",
                             (int)mode);
        st = cross(graph, from, tiles, mode, &found);
        *crossed += found && st == DFG_OK;
    }
    return st;
}
