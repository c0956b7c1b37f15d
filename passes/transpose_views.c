/* Transposes that move no data (pass.h, dfg_pass_transpose_views): a
 * permutation that keeps the dims larger than 1 in their order only moves
 * dims of size 1 ([197, 1, 768] -> [1, 197, 768], as ViT's encoder writes
 * batch-first and sequence-first around its attention), so its output
 * holds the input's bytes in the same order. Such a transpose becomes a
 * reshape to its output's shape: a view of its input, no step and no
 * copy (fuse_rewrite.h rewrites the one node in place).
 *
 * And transposes a product reads in place (dfg_pass_transpose_operands):
 * a swap of the last two dims feeding a matmul or gemm (BERT's
 * q . k^T) becomes the product's trans flag, the transpose and its
 * product rewritten into the product (fuse_rewrite.h). */
#include "passes/fusion/fuse_rewrite.h"

#include <string.h>
#include "util/error.h"

/* 1 if transpose node n keeps the order of its input's dims above 1. */
static int moves_only_ones(const dfg_graph *g, int32_t n)
{
    const dfg_ir_node *node = &g->nodes[n];
    const dfg_type *in = &g->values[node->inputs[0]].type;
    int64_t last = -1;
    for (int32_t i = 0; i < in->rank; i++) {
        int64_t p = node->attrs.n_shape ? node->attrs.shape[i]
                                        : in->rank - 1 - i;
        if (p < 0 || p >= in->rank || in->shape[p] == 1)
            continue;
        if (p < last)
            return 0;
        last = p;
    }
    return 1;
}

dfg_status dfg_pass_transpose_views(dfg_graph *graph,
                                    dfg_pass_report *report)
{
    memset(report, 0, sizeof *report);
    report->pass = "transpose_views";
    for (int32_t n = 0; n < graph->n_nodes; n++) {
        if (dfg_fuse_op(graph, n) != DFG_OP_TRANSPOSE ||
            !moves_only_ones(graph, n))
            continue;
        const dfg_type *out = &graph->values[graph->nodes[n].outputs[0]].type;
        dfg_attrs attrs;
        dfg_attrs_init(&attrs);
        attrs.n_shape = out->rank;
        memcpy(attrs.shape, out->shape, (size_t)out->rank * sizeof *out->shape);
        int32_t x = graph->nodes[n].inputs[0];
        int done = dfg_fuse_rewrite(graph, NULL, &n, 1, DFG_OP_RESHAPE,
                                    &attrs, &x, 1);
        if (done < 0)
            return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                             "transpose_views: out of memory");
        report->nodes_fused += done == 0;
    }
    return DFG_OK;
}

/* 1 if transpose node n swaps the last two dims of its input and keeps
 * the others in place. */
static int swaps_last_two(const dfg_graph *g, int32_t n)
{
    const dfg_ir_node *node = &g->nodes[n];
    int32_t rank = g->values[node->inputs[0]].type.rank;
    if (rank < 2 || (node->attrs.n_shape != 0 && node->attrs.n_shape != rank))
        return 0;
    for (int32_t i = 0; i < rank; i++) {
        int64_t want = i < rank - 2 ? i : 2 * rank - 3 - i;
        int64_t p = node->attrs.n_shape ? node->attrs.shape[i] : rank - 1 - i;
        if (p != want)
            return 0;
    }
    return 1;
}

/* Folds transpose t into its one reader if that is a product reading it
 * as input 0 or 1; 1 if it did, 0 if not, -1 out of memory. */
static int fold_into_product(dfg_graph *g, dfg_fuse_readers *r,
                             int32_t t)
{
    int32_t v = g->nodes[t].outputs[0];
    int32_t p = dfg_fuse_only_reader(g, r, v);
    dfg_op op = dfg_fuse_op(g, p);
    if (op != DFG_OP_MATMUL && op != DFG_OP_GEMM)
        return 0;
    const dfg_ir_node *node = &g->nodes[p];
    int32_t slot = node->inputs[0] == v ? 0 : node->inputs[1] == v ? 1 : -1;
    int32_t inputs[4]; /* a product's: A, B, bias or C, residual */
    int32_t n_inputs = node->n_inputs;
    if (slot < 0 || n_inputs > 4)
        return 0;
    dfg_attrs attrs = node->attrs;
    int32_t *flag = slot == 0 ? &attrs.trans_a : &attrs.trans_b;
    *flag = !*flag;
    for (int32_t i = 0; i < n_inputs; i++)
        inputs[i] = node->inputs[i];
    inputs[slot] = g->nodes[t].inputs[0];
    const int32_t chain[2] = {t, p};
    int done = dfg_fuse_rewrite(g, r, chain, 2, op, &attrs, inputs, n_inputs);
    return done < 0 ? -1 : done == 0;
}

dfg_status dfg_pass_transpose_operands(dfg_graph *graph,
                                       dfg_pass_report *report)
{
    memset(report, 0, sizeof *report);
    report->pass = "transpose_operands";
    dfg_fuse_readers r;
    dfg_status st = dfg_fuse_readers_make(graph, &r);
    if (st != DFG_OK)
        return st;
    for (int32_t n = 0; n < graph->n_nodes && st == DFG_OK; n++) {
        if (dfg_fuse_op(graph, n) != DFG_OP_TRANSPOSE ||
            !swaps_last_two(graph, n))
            continue;
        int done = fold_into_product(graph, &r, n);
        if (done < 0)
            st = dfg_error(DFG_ERR_OUT_OF_MEMORY,
                           "transpose_operands: out of memory");
        else
            report->nodes_fused += done;
    }
    dfg_fuse_readers_free(graph, &r);
    return st;
}
