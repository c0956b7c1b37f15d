/* Pool before a 1x1 conv (pass.h, dfg_pass_pool_first). An average pool
 * with no padding makes each output pixel a weighted mean of input pixels
 * (weights summing to one), and a 1x1 conv with no post-ops is the same
 * affine map at every pixel, so the two commute:
 * average_pool(conv(x)) = conv(average_pool(x)). Pooling first runs the
 * conv on the pooled pixels only (a quarter of them after DenseNet's
 * transitions' 2x2 pools). The two nodes trade ops, attributes, inputs
 * and names in place: the first (the conv's slot) pools x into the value
 * between them, whose type becomes the pooled x's, and the second conv's
 * that into the pool's old output, so the recorded order stays
 * topological and every other reader sees the same values.
 *
 * And a pad of zeros into an average pool (dfg_pass_pad_into_pool): the
 * pool counting the pad as its own (count_include_pad) reads the zeros it
 * would have read, so the padded copy of x is never made. */
#include "passes/fusion/fuse_rewrite.h"

#include <string.h>
#include "util/error.h"

/* 1 if node c is a conv2d that commutes with an average pool: 1x1 at
 * stride 1, no padding, no post-ops and no residual. */
static int pointwise_conv(const dfg_graph *g, int32_t c)
{
    const dfg_ir_node *n = &g->nodes[c];
    const dfg_attrs *a = &n->attrs;
    if (dfg_fuse_op(g, c) != DFG_OP_CONV2D || n->n_inputs > 3 ||
        n->n_outputs != 1 || a->n_post_ops != 0 || a->kernel[0] != 1 ||
        a->kernel[1] != 1 || a->strides[0] != 1 || a->strides[1] != 1)
        return 0;
    for (int32_t i = 0; i < 4; i++)
        if (a->pads[i] != 0)
            return 0;
    return 1;
}

/* 1 if node p is an average pool with no padding and whole windows (no
 * ceil_mode): its weights sum to one at every output pixel. */
static int unpadded_average_pool(const dfg_graph *g, int32_t p)
{
    const dfg_ir_node *n = &g->nodes[p];
    if (dfg_fuse_op(g, p) != DFG_OP_AVERAGE_POOL || n->n_inputs != 1 ||
        n->n_outputs != 1 || n->attrs.ceil_mode != 0)
        return 0;
    for (int32_t i = 0; i < 2 * DFG_MAX_RANK; i++)
        if (n->attrs.pads[i] != 0)
            return 0;
    return 1;
}

static int pool_first_at(dfg_graph *g, dfg_fuse_readers *r, int32_t c)
{
    if (!pointwise_conv(g, c))
        return 0;
    int32_t y = g->nodes[c].outputs[0];
    int32_t p = dfg_fuse_only_reader(g, r, y);
    if (p < 0 || !unpadded_average_pool(g, p))
        return 0;
    dfg_ir_node *conv = &g->nodes[c], *pool = &g->nodes[p];
    int32_t x = conv->inputs[0];
    dfg_type pooled;
    memset(&pooled, 0, sizeof pooled);
    const dfg_type *xt = &g->values[x].type, *yt = &g->values[y].type;
    if (dfg_op_get(DFG_OP_AVERAGE_POOL)->shape(&pool->attrs, xt, 1, &pooled,
                                               1) != DFG_OK ||
        pooled.shape[2] * pooled.shape[3] >= yt->shape[2] * yt->shape[3])
        return 0;
    if (dfg_fuse_swap_names(g, c, p) != 0)
        return -1;
    int32_t read[3]; /* the conv's inputs: x, w and its bias, if any */
    memcpy(read, conv->inputs, (size_t)conv->n_inputs * sizeof *read);
    dfg_ir_node held = *conv;
    conv->op = pool->op;
    conv->attrs = pool->attrs;
    conv->inputs = pool->inputs;
    conv->n_inputs = pool->n_inputs;
    conv->inputs[0] = x;
    pool->op = held.op;
    pool->attrs = held.attrs;
    pool->inputs = held.inputs;
    pool->n_inputs = held.n_inputs;
    pool->inputs[0] = y;
    g->values[y].type = pooled;
    const dfg_fuse_reading was[2] = {{c, read, held.n_inputs}, {p, &y, 1}};
    dfg_fuse_readers_change(g, r, was, 2);
    return 1;
}

/* 1 if node p pads a plain 4-D f32 value with zeros on its rows and
 * columns only, each side by less than kernel's (the pool's window). */
static int zero_pad_of_rows(const dfg_graph *g, int32_t p,
                            const int32_t kernel[2])
{
    const dfg_ir_node *n = &g->nodes[p];
    const dfg_type *t = n->n_inputs == 1 ? &g->values[n->inputs[0]].type
                                           : NULL;
    if (dfg_fuse_op(g, p) != DFG_OP_PAD || !t || t->rank != 4 ||
        t->dtype != DFG_F32 || n->attrs.pad_value != 0.0f)
        return 0;
    for (int32_t d = 0; d < 4; d++) {
        int64_t begin = n->attrs.pads[d], end = n->attrs.pads[4 + d];
        int64_t most = d < 2 ? 0 : kernel[d - 2] - 1;
        if (begin < 0 || end < 0 || begin > most || end > most)
            return 0;
    }
    return 1;
}

static int pad_into_pool_at(dfg_graph *g, dfg_fuse_readers *r, int32_t p)
{
    if (dfg_fuse_op(g, p) != DFG_OP_PAD || g->nodes[p].n_outputs != 1)
        return 0;
    int32_t pool = dfg_fuse_only_reader(g, r, g->nodes[p].outputs[0]);
    if (pool < 0 || !unpadded_average_pool(g, pool) ||
        !zero_pad_of_rows(g, p, g->nodes[pool].attrs.kernel))
        return 0;
    dfg_attrs a = g->nodes[pool].attrs;
    const dfg_attrs *pad = &g->nodes[p].attrs;
    a.pads[0] = pad->pads[2];
    a.pads[1] = pad->pads[3];
    a.pads[2] = pad->pads[6];
    a.pads[3] = pad->pads[7];
    a.count_include_pad = 1;
    int32_t chain[2] = {p, pool}, x = g->nodes[p].inputs[0];
    int done =
        dfg_fuse_rewrite(g, r, chain, 2, DFG_OP_AVERAGE_POOL, &a, &x, 1);
    return done < 0 ? -1 : done == 0;
}

dfg_status dfg_pass_pad_into_pool(dfg_graph *graph, dfg_pass_report *report)
{
    return dfg_fuse_pass(graph, "pad_into_pool", pad_into_pool_at, report);
}

dfg_status dfg_pass_pool_first(dfg_graph *graph, dfg_pass_report *report)
{
    return dfg_fuse_pass(graph, "pool_first", pool_first_at, report);
}
