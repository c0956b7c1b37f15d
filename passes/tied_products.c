/* Products reading a weight transposed (tied_products.h). */
#include "passes/tied_products.h"

#include <stdio.h>
#include "passes/training/training.h"
#include "util/error.h"
#include "util/memory.h"

/* 1 if node reads b only where it can read b's transpose instead. */
static int slot_accepts(const dfg_graph *g, const dfg_ir_node *node,
                        int32_t slot, int32_t b)
{
    if (node->op == DFG_OP_GEMM)
        return slot < 2;
    if (node->op != DFG_OP_MATMUL || slot != 1 || node->inputs[0] == b ||
        node->attrs.n_post_ops != 0)
        return 0;
    for (int32_t i = 2; i < node->n_inputs; i++)
        if (node->inputs[i] >= 0)
            return 0;
    return g->values[node->inputs[0]].type.layout == DFG_LAYOUT_PLAIN;
}

int dfg_tied_readers_accept(const dfg_graph *graph, int32_t b)
{
    int readers = 0;
    for (int32_t n = 0; n < graph->n_nodes; n++) {
        const dfg_ir_node *node = &graph->nodes[n];
        for (int32_t i = 0; !node->dead && i < node->n_inputs; i++) {
            if (node->inputs[i] != b)
                continue;
            if (!slot_accepts(graph, node, i, b))
                return 0;
            readers++;
        }
    }
    return readers > 0;
}

void dfg_tied_readers_switch(dfg_graph *graph, int32_t b, int32_t a,
                             int32_t *tied_matmul)
{
    for (int32_t n = 0; n < graph->n_nodes; n++) {
        dfg_ir_node *node = &graph->nodes[n];
        for (int32_t i = 0; !node->dead && i < node->n_inputs; i++) {
            if (node->inputs[i] != b)
                continue;
            if (node->op == DFG_OP_MATMUL) {
                tied_matmul[n] = a;
                continue;
            }
            node->inputs[i] = a;
            int32_t *flag = i == 0 ? &node->attrs.trans_a
                                   : &node->attrs.trans_b;
            *flag = !*flag;
        }
    }
}

/* Appends a reshape of v to rank dims; its output in *out. */
static dfg_status reshape(dfg_graph *g, const char *name, int32_t v,
                          int32_t rank, const int64_t *dims, int32_t *out)
{
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.n_shape = rank;
    for (int32_t d = 0; d < rank; d++)
        attrs.shape[d] = dims[d];
    return dfg_graph_add_node(g, DFG_OP_RESHAPE, name, &v, 1, &attrs, 1, out);
}

/* The last appended node takes over old node n's output value y (name,
 * readers, graph output); n, now dead, keeps the fresh one. */
static void take_output(dfg_graph *g, int32_t n)
{
    int32_t last = g->n_nodes - 1;
    int32_t y = g->nodes[n].outputs[0], fresh = g->nodes[last].outputs[0];
    g->nodes[last].outputs[0] = y;
    g->values[y].producer = last;
    g->nodes[n].outputs[0] = fresh;
    g->values[fresh].producer = n;
    g->nodes[n].dead = 1;
}

/* Appends x (as [M, K]) times a ([N, K]) transposed, shaped as n's
 * output, and hands n's output to it. */
static dfg_status append_gemm(dfg_graph *g, int32_t n, int32_t a)
{
    const dfg_ir_node *node = &g->nodes[n];
    char name[300];
    int32_t x = node->inputs[0];
    dfg_type tx = g->values[x].type, ty = g->values[node->outputs[0]].type;
    int64_t k = g->values[a].type.shape[1];
    int64_t rows[2] = {k > 0 ? dfg_type_numel(&tx) / k : 0, k};
    dfg_status st = DFG_OK;
    if (tx.rank != 2) {
        snprintf(name, sizeof name, "%.270s/tied_rows", node->name);
        st = reshape(g, name, x, 2, rows, &x);
    }
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.trans_b = 1;
    int32_t in[2] = {x, a}, y;
    snprintf(name, sizeof name, "%.270s/tied", g->nodes[n].name);
    if (st == DFG_OK)
        st = dfg_graph_add_node(g, DFG_OP_GEMM, name, in, 2, &attrs, 1, &y);
    if (st == DFG_OK && ty.rank != 2) {
        snprintf(name, sizeof name, "%.270s/tied_shape", g->nodes[n].name);
        st = reshape(g, name, y, ty.rank, ty.shape, &y);
    }
    if (st == DFG_OK)
        take_output(g, n);
    return st;
}

dfg_status dfg_tied_matmuls_rewrite(dfg_graph *graph,
                                    const int32_t *tied_matmul)
{
    int32_t n_original = graph->n_nodes;
    /* Each rewrite appends at most three nodes. */
    int32_t *before = dfg_calloc(&graph->allocator,
                                 (size_t)n_original * 3 + 1, sizeof *before);
    if (!before)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "share weights: out of memory");
    dfg_status st = DFG_OK;
    for (int32_t n = 0; st == DFG_OK && n < n_original; n++) {
        if (tied_matmul[n] < 0)
            continue;
        int32_t added = graph->n_nodes;
        st = append_gemm(graph, n, tied_matmul[n]);
        while (added < graph->n_nodes)
            before[added++ - n_original] = n;
    }
    if (st == DFG_OK && graph->n_nodes > n_original)
        st = dfg_graph_place_appended(graph, n_original, before);
    dfg_free(&graph->allocator, before);
    return st;
}
