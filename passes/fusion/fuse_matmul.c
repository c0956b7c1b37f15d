/* Fusion of a matmul or gemm with what follows it (pass.h,
 * dfg_pass_fuse_matmul): first an add of a row of N values (a linear
 * layer's bias) becomes the product's bias, a matmul's input 2 or a
 * gemm's C (beta 1) where it has none; then the post-ops as a conv's
 * (dfg_fuse_post_op): activations, and a matmul's residual add. Each
 * rewrite keeps the chain's last node (fuse_rewrite.h), and the shape
 * rule decides what is a bias (dfg_shape_matmul: every dim but the last
 * 1; dfg_shape_gemm: C broadcasts to the product without changing it). */
#include "passes/fusion/fuse_rewrite.h"

/* 1 if v is a row: every dim but the last 1 (a gemm's C could be any
 * tensor that broadcasts to its product, but oneDNN takes a row only). */
static int is_row(const dfg_graph *g, int32_t v)
{
    const dfg_type *t = &g->values[v].type;
    int row = t->rank >= 1;
    for (int32_t d = 0; row && d + 1 < t->rank; d++)
        row = t->shape[d] == 1;
    return row;
}

/* Folds an add of a row into node (a matmul or gemm without a bias yet);
 * 1 and *fused if it did, 0 if it does not fit, -1 out of memory. */
static int fuse_bias(dfg_graph *g, dfg_fuse_readers *r, int32_t node,
                     int32_t *fused)
{
    const dfg_ir_node *mm = &g->nodes[node];
    int32_t y = mm->outputs[0];
    int32_t add = dfg_fuse_only_reader(g, r, y);
    int32_t row = add >= 0 && dfg_fuse_op(g, add) == DFG_OP_ADD
                      ? dfg_fuse_other_input(g, add, y)
                      : -1;
    if (row < 0 || row == y || !is_row(g, row) || mm->attrs.n_post_ops > 0 ||
        (mm->n_inputs > 2 && mm->inputs[2] >= 0) ||
        g->values[y].type.dtype != DFG_F32)
        return 0;
    dfg_attrs attrs = mm->attrs;
    if (mm->op == DFG_OP_GEMM)
        attrs.beta = 1.0f;
    const int32_t inputs[3] = {mm->inputs[0], mm->inputs[1], row};
    const int32_t chain[2] = {node, add};
    int done = dfg_fuse_rewrite(g, r, chain, 2, mm->op, &attrs, inputs, 3);
    if (done != 0)
        return done < 0 ? -1 : 0;
    *fused = add;
    return 1;
}

/* A bias first, then the post-ops. */
static int fuse_at(dfg_graph *graph, dfg_fuse_readers *r, int32_t n)
{
    dfg_op op = dfg_fuse_op(graph, n);
    if (op != DFG_OP_MATMUL && op != DFG_OP_GEMM)
        return 0;
    int32_t node = n;
    int bias = fuse_bias(graph, r, node, &node);
    int more = bias < 0 ? -1 : dfg_fuse_post_ops(graph, r, node);
    return more < 0 ? -1 : bias + more;
}

dfg_status dfg_pass_fuse_matmul(dfg_graph *graph, dfg_pass_report *report)
{
    return dfg_fuse_pass(graph, "fuse_matmul", fuse_at, report);
}
