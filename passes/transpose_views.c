/* Transposes that move no data (pass.h, dfg_pass_transpose_views): a
 * permutation that keeps the dims larger than 1 in their order only moves
 * dims of size 1 ([197, 1, 768] -> [1, 197, 768], as ViT's encoder writes
 * batch-first and sequence-first around its attention), so its output
 * holds the input's bytes in the same order. Such a transpose becomes a
 * reshape to its output's shape: a view of its input, no step and no
 * copy (fuse_rewrite.h rewrites the one node in place). */
#include "fuse_rewrite.h"

#include <string.h>
#include "error.h"

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
        int done =
            dfg_fuse_rewrite(graph, &n, 1, DFG_OP_RESHAPE, &attrs, &x, 1);
        if (done < 0)
            return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                             "transpose_views: out of memory");
        report->nodes_fused += done == 0;
    }
    return DFG_OK;
}
