/* Fusion of a conv2d with what follows it into its post-ops (pass.h,
 * dfg_pass_fuse_conv): one step instead of several, and no intermediate
 * tensors. Each match takes the conv's output y and the nodes that read
 * it; the chain (conv, then the matched nodes) is rewritten into its last
 * node (fuse_rewrite.h), and matching goes on from the fused node's
 * output. A HardSigmoid arrives from ONNX as clip(y * a + b, 0, 1). */
#include "fuse_rewrite.h"

#include <string.h>
#include "error.h"

/* The matched post-op: its kind and parameters, the residual of a sum,
 * and the nodes that it replaces, in order. */
typedef struct post_op_match {
    int32_t kind;
    float alpha, beta;
    int32_t residual;
    int32_t nodes[4];
    int32_t n_nodes;
} post_op_match;

/* The input of binary node n other than v (-1 unless v is one of them). */
static int32_t other_input(const dfg_graph *g, int32_t n, int32_t v)
{
    const dfg_ir_node *node = &g->nodes[n];
    if (node->n_inputs != 2)
        return -1;
    if (node->inputs[0] == v)
        return node->inputs[1];
    return node->inputs[1] == v ? node->inputs[0] : -1;
}

/* clip(y * a + b, 0, 1) starting at node n (the mul reading y): its
 * nodes appended to m, a and b in m's alpha and beta; the clip's output,
 * or -1. */
static int32_t hardsigmoid_from(const dfg_graph *g, const dfg_fuse_readers *r,
                                int32_t n, int32_t y, post_op_match *m)
{
    if (dfg_fuse_op(g, n) != DFG_OP_MUL ||
        !dfg_fuse_scalar(g, other_input(g, n, y), &m->alpha))
        return -1;
    int32_t scaled = g->nodes[n].outputs[0];
    int32_t add = dfg_fuse_only_reader(g, r, scaled);
    if (dfg_fuse_op(g, add) != DFG_OP_ADD ||
        !dfg_fuse_scalar(g, other_input(g, add, scaled), &m->beta))
        return -1;
    int32_t shifted = g->nodes[add].outputs[0];
    int32_t clip = dfg_fuse_only_reader(g, r, shifted);
    if (dfg_fuse_op(g, clip) != DFG_OP_CLIP ||
        g->nodes[clip].attrs.clip_min != 0.0f ||
        g->nodes[clip].attrs.clip_max != 1.0f)
        return -1;
    m->nodes[m->n_nodes++] = n;
    m->nodes[m->n_nodes++] = add;
    m->nodes[m->n_nodes++] = clip;
    return g->nodes[clip].outputs[0];
}

/* y's one reader n as a post-op. */
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
    case DFG_OP_GELU:
        m->kind = node->attrs.approximate == DFG_GELU_TANH
                      ? DFG_POST_GELU_TANH
                      : DFG_POST_GELU_ERF;
        return 1;
    case DFG_OP_ADD: {
        /* The fused node takes the add's place, after the residual. */
        int32_t residual = other_input(g, n, y);
        m->kind = DFG_POST_SUM;
        m->residual = residual;
        return residual >= 0 && residual != y &&
               g->nodes[conv].attrs.n_post_ops == 0 &&
               dfg_type_equal(&g->values[residual].type, &g->values[y].type);
    }
    default:
        m->n_nodes = 0;
        m->kind = DFG_POST_HARDSIGMOID;
        return hardsigmoid_from(g, r, n, y, m) >= 0;
    }
}

/* y read by a and b: y * sigmoid(y) or y * hardsigmoid(y), the gate
 * being a (tried both ways by the caller). */
static int match_gated(const dfg_graph *g, const dfg_fuse_readers *r,
                       int32_t a, int32_t b, int32_t y, post_op_match *m)
{
    int32_t gate;
    m->n_nodes = 0;
    if (dfg_fuse_op(g, a) == DFG_OP_SIGMOID) {
        m->kind = DFG_POST_SILU;
        m->nodes[m->n_nodes++] = a;
        gate = g->nodes[a].outputs[0];
    } else {
        m->kind = DFG_POST_HARDSWISH;
        gate = hardsigmoid_from(g, r, a, y, m);
        /* oneDNN's hardswish has ONNX's fixed slope and offset. */
        if (gate < 0 || m->alpha != 1.0f / 6.0f || m->beta != 0.5f)
            return 0;
        m->alpha = m->beta = 0.0f;
    }
    if (dfg_fuse_op(g, b) != DFG_OP_MUL || other_input(g, b, y) != gate ||
        dfg_fuse_only_reader(g, r, gate) != b)
        return 0;
    m->nodes[m->n_nodes++] = b;
    return 1;
}

static int match_post_op(const dfg_graph *g, const dfg_fuse_readers *r,
                         int32_t conv, post_op_match *m)
{
    int32_t y = g->nodes[conv].outputs[0];
    memset(m, 0, sizeof *m);
    m->residual = -1;
    if (g->values[y].is_output)
        return 0;
    if (r->count[y] == 1)
        return match_single(g, r, conv, r->first[y], y, m);
    if (r->count[y] != 2 || r->second[y] < 0)
        return 0;
    return match_gated(g, r, r->first[y], r->second[y], y, m) ||
           match_gated(g, r, r->second[y], r->first[y], y, m);
}

/* Fuses one post-op into conv; 1 if it did, 0 if none fits, -1 out of
 * memory. */
static int fuse_one(dfg_graph *g, const dfg_fuse_readers *r, int32_t conv,
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
    int32_t inputs[4] = {-1, -1, -1, -1};
    int32_t n_inputs = node->n_inputs;
    memcpy(inputs, node->inputs, (size_t)n_inputs * sizeof *inputs);
    if (m.residual >= 0) {
        inputs[3] = m.residual;
        n_inputs = 4;
    }
    int32_t chain[5] = {conv};
    memcpy(chain + 1, m.nodes, (size_t)m.n_nodes * sizeof *chain);
    int done = dfg_fuse_rewrite(g, chain, m.n_nodes + 1, DFG_OP_CONV2D,
                                &attrs, inputs, n_inputs);
    if (done != 0)
        return done < 0 ? -1 : 0;
    *fused = chain[m.n_nodes];
    return 1;
}

dfg_status dfg_pass_fuse_conv(dfg_graph *graph, dfg_pass_report *report)
{
    memset(report, 0, sizeof *report);
    report->pass = "fuse_conv";
    dfg_fuse_readers r;
    dfg_status st = dfg_fuse_readers_make(graph, &r);
    for (int32_t n = 0; st == DFG_OK && n < graph->n_nodes; n++) {
        if (dfg_fuse_op(graph, n) != DFG_OP_CONV2D)
            continue;
        int32_t conv = n, done;
        while ((done = fuse_one(graph, &r, conv, &conv)) == 1) {
            report->nodes_fused++;
            dfg_fuse_readers_count(graph, &r);
        }
        if (done < 0)
            st = dfg_error(DFG_ERR_OUT_OF_MEMORY, "fuse_conv: out of memory");
    }
    dfg_fuse_readers_free(graph, &r);
    return st;
}
