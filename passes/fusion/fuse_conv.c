/* Fusion of a conv2d with what follows it into its post-ops (pass.h,
 * dfg_pass_fuse_conv): one step instead of several, and no intermediate
 * tensors. Each match takes the conv's output y and the node that alone
 * reads it; the chain (conv, then the matched nodes) is rewritten into
 * its last node (fuse_rewrite.h), and matching goes on from the fused
 * node's output. A matmul's or gemm's post-ops are matched the same way
 * (dfg_fuse_post_op, fuse_matmul.c). A HardSigmoid arrives from ONNX as
 * clip(y * a + b, 0, 1); y * sigmoid(y) and y * hardsigmoid(y) arrive as
 * the silu and hardswish ops that dfg_pass_fuse_patterns made of them. */
#include "passes/fusion/fuse_rewrite.h"

#include <string.h>

/* The matched post-op: its kind and parameters, the residual of a sum,
 * and the nodes that it replaces, in order. */
typedef struct post_op_match {
    int32_t kind;
    float alpha, beta;
    int32_t residual;
    int32_t nodes[4];
    int32_t n_nodes;
} post_op_match;

/* y's one reader n as a post-op of node conv (a conv2d, matmul, gemm or
 * batch_norm: a gemm and a batch_norm take no residual). */
static int match_single(const dfg_graph *g, const dfg_fuse_readers *r,
                        int32_t conv, int32_t n, int32_t y, post_op_match *m)
{
    const dfg_ir_node *node = &g->nodes[n];
    m->nodes[m->n_nodes++] = n;
    switch (dfg_fuse_op(g, n)) {
    case DFG_OP_RELU:
        m->kind = DFG_POST_RELU;
        return 1;
    case DFG_OP_CLIP:
        m->kind = DFG_POST_CLIP;
        m->alpha = node->attrs.clip_min;
        m->beta = node->attrs.clip_max;
        return 1;
    case DFG_OP_SIGMOID:
        m->kind = DFG_POST_SIGMOID;
        return 1;
    case DFG_OP_TANH:
        m->kind = DFG_POST_TANH;
        return 1;
    case DFG_OP_SILU:
        m->kind = DFG_POST_SILU;
        return 1;
    case DFG_OP_HARDSWISH:
        m->kind = DFG_POST_HARDSWISH;
        return 1;
    case DFG_OP_GELU:
        m->kind = node->attrs.approximate == DFG_GELU_TANH
                      ? DFG_POST_GELU_TANH
                      : DFG_POST_GELU_ERF;
        return 1;
    case DFG_OP_ADD: {
        /* The fused node takes the add's place, after the residual. */
        int32_t residual = dfg_fuse_other_input(g, n, y);
        m->kind = DFG_POST_SUM;
        m->residual = residual;
        return residual >= 0 && residual != y &&
               g->nodes[conv].op != DFG_OP_GEMM &&
               g->nodes[conv].op != DFG_OP_BATCH_NORM &&
               g->nodes[conv].attrs.n_post_ops == 0 &&
               dfg_type_equal(&g->values[residual].type, &g->values[y].type);
    }
    default:
        m->kind = DFG_POST_HARDSIGMOID;
        m->n_nodes = 3;
        return dfg_fuse_hardsigmoid(g, r, n, y, &m->alpha, &m->beta,
                                    m->nodes) >= 0;
    }
}

static int match_post_op(const dfg_graph *g, const dfg_fuse_readers *r,
                         int32_t conv, post_op_match *m)
{
    int32_t y = g->nodes[conv].outputs[0];
    memset(m, 0, sizeof *m);
    m->residual = -1;
    int32_t reader = dfg_fuse_only_reader(g, r, y);
    return reader >= 0 && match_single(g, r, conv, reader, y, m);
}

int dfg_fuse_post_op(dfg_graph *g, dfg_fuse_readers *r, int32_t conv,
                     int32_t *fused)
{
    const dfg_ir_node *node = &g->nodes[conv];
    post_op_match m;
    if (node->attrs.n_post_ops >= DFG_MAX_POST_OPS ||
        g->values[node->outputs[0]].type.dtype != DFG_F32 ||
        !match_post_op(g, r, conv, &m))
        return 0;
    dfg_attrs attrs = node->attrs;
    attrs.post_ops[attrs.n_post_ops] = m.kind;
    attrs.post_op_alpha[attrs.n_post_ops] = m.alpha;
    attrs.post_op_beta[attrs.n_post_ops] = m.beta;
    attrs.n_post_ops++;
    int32_t inputs[5] = {-1, -1, -1, -1, -1};
    int32_t n_inputs = node->n_inputs;
    memcpy(inputs, node->inputs, (size_t)n_inputs * sizeof *inputs);
    if (m.residual >= 0) {
        inputs[3] = m.residual;
        n_inputs = 4;
    }
    int32_t chain[5] = {conv};
    memcpy(chain + 1, m.nodes, (size_t)m.n_nodes * sizeof *chain);
    int done = dfg_fuse_rewrite(g, r, chain, m.n_nodes + 1, node->op,
                                &attrs, inputs, n_inputs);
    if (done != 0)
        return done < 0 ? -1 : 0;
    *fused = chain[m.n_nodes];
    return 1;
}

int dfg_fuse_post_ops(dfg_graph *graph, dfg_fuse_readers *r, int32_t node)
{
    int fused = 0, done;
    while ((done = dfg_fuse_post_op(graph, r, node, &node)) == 1)
        fused++;
    return done < 0 ? -1 : fused;
}

static int fuse_at(dfg_graph *graph, dfg_fuse_readers *r, int32_t n)
{
    return dfg_fuse_op(graph, n) == DFG_OP_CONV2D
               ? dfg_fuse_post_ops(graph, r, n)
               : 0;
}

dfg_status dfg_pass_fuse_conv(dfg_graph *graph, dfg_pass_report *report)
{
    return dfg_fuse_pass(graph, "fuse_conv", fuse_at, report);
}

static int fuse_norm_at(dfg_graph *graph, dfg_fuse_readers *r, int32_t n)
{
    return dfg_fuse_op(graph, n) == DFG_OP_BATCH_NORM
               ? dfg_fuse_post_ops(graph, r, n)
               : 0;
}

dfg_status dfg_pass_fuse_norm_activation(dfg_graph *graph,
                                         dfg_pass_report *report)
{
    return dfg_fuse_pass(graph, "fuse_norm_activation", fuse_norm_at,
                         report);
}
