/* Tiled execution's estimate (passes/tiling/tile_spatial.h, dfg_tile_estimate):
 * a tiling's peak and FLOPs from the tiled graph's recorded order, with
 * no plan made. */
#include "passes/tiling/tile_spatial.h"

#include "ir/op_table.h"
#include "util/error.h"
#include "util/memory.h"

int dfg_tile_joins_in_place(const dfg_graph *graph, int32_t n,
                            const int32_t *last)
{
    const dfg_ir_node *node = &graph->nodes[n];
    return node->op == DFG_OP_PUT_ROWS && node->n_inputs == 2 &&
           node->inputs[0] >= 0 && last[node->inputs[0]] == n;
}

static int stored(const dfg_graph *g, int32_t v)
{
    return g->values[v].kind == DFG_VALUE_WEIGHT ||
           g->values[v].kind == DFG_VALUE_CONSTANT;
}

/* What running node n costs beside its FLOPs, as dfg_program_overhead
 * counts a step: a step, the weight a product reads, and the bytes it
 * writes when it computes nothing, but for a concat along the channels
 * (its producers write into it at batch 1: passes/concat_views.c). */
static int64_t overhead(const dfg_graph *g, const dfg_ir_node *node,
                        int64_t flops)
{
    int64_t weight = 0, moved = 0;
    if (dfg_op_uses_blas(node->op) && node->n_inputs > 1 &&
        node->inputs[1] >= 0 && g->values[node->inputs[1]].kind ==
                                    DFG_VALUE_WEIGHT)
        weight = dfg_type_bytes(&g->values[node->inputs[1]].type);
    int view = node->op == DFG_OP_CONCAT && node->attrs.axis == 1;
    for (int32_t i = 0; flops <= 0 && !view && i < node->n_outputs; i++)
        moved += dfg_type_bytes(&g->values[node->outputs[i]].type);
    return (int64_t)dfg_step_overhead(weight, moved);
}

/* Bytes live at the largest step of graph's recorded order (values that
 * are not stored, from their producer, or the start, to their last
 * reader; outputs to the end) and what its live nodes cost: their FLOPs
 * and overhead. */
static dfg_status measure(const dfg_graph *g, int64_t *peak, int64_t *flops)
{
    dfg_allocator a = g->allocator;
    int32_t *last = dfg_calloc(&a, (size_t)g->n_values + 1, sizeof *last);
    if (!last)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "tiling: out of memory");
    int64_t live = 0;
    for (int32_t v = 0; v < g->n_values; v++) {
        last[v] = -1;
        if (g->values[v].kind == DFG_VALUE_INPUT)
            live += dfg_type_bytes(&g->values[v].type);
    }
    for (int32_t n = 0; n < g->n_nodes; n++)
        for (int32_t i = 0; !g->nodes[n].dead && i < g->nodes[n].n_inputs; i++)
            if (g->nodes[n].inputs[i] >= 0)
                last[g->nodes[n].inputs[i]] = n;
    for (int32_t i = 0; i < g->n_outputs; i++)
        last[g->outputs[i]] = g->n_nodes;
    *peak = live;
    *flops = 0;
    dfg_status st = DFG_OK;
    for (int32_t n = 0; st == DFG_OK && n < g->n_nodes; n++) {
        const dfg_ir_node *node = &g->nodes[n];
        if (node->dead)
            continue;
        dfg_type *types = dfg_node_types(g, n, &a);
        if (!types) {
            st = dfg_error(DFG_ERR_OUT_OF_MEMORY, "tiling: out of memory");
            break;
        }
        int64_t f = dfg_node_flops(g, n, types);
        *flops += f + overhead(g, node, f);
        dfg_free(&a, types);
        /* A join in place: its whole's bytes carry on as its output's. */
        int32_t carried = dfg_tile_joins_in_place(g, n, last)
                              ? node->inputs[0] : -1;
        if (carried >= 0)
            last[carried] = -2;
        for (int32_t i = 0; carried < 0 && i < node->n_outputs; i++)
            live += dfg_type_bytes(&g->values[node->outputs[i]].type);
        *peak = live > *peak ? live : *peak;
        for (int32_t i = 0; i < node->n_outputs; i++)
            if (last[node->outputs[i]] < 0)
                live -= dfg_type_bytes(&g->values[node->outputs[i]].type);
        for (int32_t i = 0; i < node->n_inputs; i++) {
            int32_t v = node->inputs[i];
            if (v >= 0 && last[v] == n && !stored(g, v)) {
                live -= dfg_type_bytes(&g->values[v].type);
                last[v] = -2; /* read twice by n: freed once */
            }
        }
    }
    dfg_free(&a, last);
    return st;
}

dfg_status dfg_tile_estimate(const dfg_graph *graph, int32_t from,
                             int32_t cut, int32_t tiles, int put,
                             int64_t *peak, int64_t *flops)
{
    if (cut < 0)
        return measure(graph, peak, flops);
    dfg_graph *copy = NULL;
    dfg_status st = dfg_graph_clone_scratch(graph, &graph->allocator, &copy);
    dfg_pass_report report;
    int32_t joined;
    if (st == DFG_OK)
        st = dfg_pass_tile_spatial(copy, from, cut, tiles, put, 1, &joined,
                                   &report);
    if (st == DFG_OK)
        st = measure(copy, peak, flops);
    dfg_graph_destroy(copy);
    return st;
}
