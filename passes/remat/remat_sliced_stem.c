/* A channel-sliced stem (remat.h): a memory budget's last resort for the
 * first layers of an image model.
 *
 * resnet18's stem at 224x224, batch 32: conv 7x7/2 of the image (which
 * needs no gradient) -> batch_norm -> relu -> max_pool 3x3/2. Every tensor
 * up to the pool is [32,64,112,112] f32, 98 MiB; batch norm's backward
 * holds its input and its output gradient at once, the pool's backward
 * its input and its input gradient, and no recomputation can split a
 * tensor. Batch normalization works per channel (each channel's
 * statistics cover its whole N, H, W), and so do the relu and the pool,
 * and each output channel of the conv reads the whole image: the chain
 * is the same computed per slice of output channels. So the forward
 * graph, before the training pass, gets one chain per slice: a conv on
 * the slice of the kernel (a view: output channels are the kernel's outer
 * dim), batch_norm_train on the slices of scale, bias and running
 * statistics (views of the weights, updated in place through them), relu
 * and pool, and a concat of the pooled slices takes the pool's place.
 * Autodiff then makes a backward per slice, and rematerialization can
 * drop each slice's conv output and recompute it (from the image, kept
 * anyway) in its own slice's backward, so that no full-size tensor of
 * the stem lives across the step: only one slice's tensors at a time.
 *
 * Every value is computed by the same kernels on the same operands, per
 * channel, so a channel's results are those of the unsliced chain (the
 * conv's GEMM over fewer output rows may round differently; tests say
 * which bits differ). The kernel's gradient is the sum of its slices'
 * slice_grad (zeros elsewhere), exact. The pipeline applies this only
 * when the budget is not met without it (passes/pipeline.c).
 *
 * A residual block's first conv -> batch_norm -> relu is sliced the same
 * way (dfg_slice_first_block), the block's second conv reading the
 * concat whole. Its input needs a gradient, the sum of the slices' input
 * gradients (so its bits may differ from the unsliced sum's too); what
 * it buys is that rematerialization can remake the block's first conv
 * output a slice at a time. Whether that costs fewer FLOPs at a budget,
 * or meets it at all, depends on the plan, so the pipeline plans the step
 * with and without it and keeps the cheaper. */
#include "passes/remat/remat.h"

#include <stdio.h>
#include "passes/fusion/fuse_rewrite.h"
#include "util/error.h"
#include "util/memory.h"

/* Slices per stem: each slice's tensors are an eighth of the full ones. */
#define STEM_SLICES 8

/* The matched chain: conv (required), batch_norm (required), relu and
 * max_pool (each optional, -1 when absent). */
typedef struct stem_chain {
    int32_t conv, batch_norm, relu, pool;
} stem_chain;

static int stored(const dfg_graph *g, int32_t v)
{
    return v >= 0 && (g->values[v].kind == DFG_VALUE_WEIGHT ||
                      g->values[v].kind == DFG_VALUE_CONSTANT);
}

/* The reader of node n's only output if it has op `op` and reads it as
 * input 0, or -1. */
static int32_t next_in_chain(const dfg_graph *g, const dfg_fuse_readers *r,
                             int32_t n, dfg_op op)
{
    if (n < 0 || g->nodes[n].n_outputs != 1)
        return -1;
    int32_t v = g->nodes[n].outputs[0];
    int32_t reader = dfg_fuse_only_reader(g, r, v);
    return reader >= 0 && g->nodes[reader].op == op &&
                   g->nodes[reader].inputs[0] == v
               ? reader : -1;
}

/* Which chain is sliced: the stem's conv reads a graph input; a block's
 * reads a value the forward computes, and its relu is read by the
 * block's next conv alone. */
typedef enum chain_kind { STEM, BLOCK } chain_kind;

static int matches_at(const dfg_graph *g, const dfg_fuse_readers *r,
                      int32_t n, chain_kind kind, stem_chain *s)
{
    const dfg_ir_node *conv = &g->nodes[n];
    dfg_value_kind reads = kind == STEM ? DFG_VALUE_INPUT
                                        : DFG_VALUE_NODE_OUTPUT;
    if (conv->dead || conv->op != DFG_OP_CONV2D || conv->n_inputs > 3 ||
        conv->attrs.group != 1 ||
        g->values[conv->inputs[0]].kind != reads ||
        g->values[conv->inputs[0]].type.dtype != DFG_F32 ||
        !stored(g, conv->inputs[1]) ||
        (conv->n_inputs == 3 && conv->inputs[2] >= 0 &&
         !stored(g, conv->inputs[2])))
        return 0;
    s->conv = n;
    s->batch_norm = next_in_chain(g, r, n, DFG_OP_BATCH_NORM);
    if (s->batch_norm < 0)
        return 0;
    const dfg_ir_node *bn = &g->nodes[s->batch_norm];
    for (int32_t i = 1; i < 5; i++)
        if (!stored(g, bn->inputs[i]))
            return 0;
    s->relu = next_in_chain(g, r, s->batch_norm, DFG_OP_RELU);
    s->pool = next_in_chain(g, r, s->relu >= 0 ? s->relu : s->batch_norm,
                            DFG_OP_MAX_POOL);
    if (kind == BLOCK && next_in_chain(g, r, s->relu, DFG_OP_CONV2D) < 0)
        return 0;
    return g->values[conv->outputs[0]].type.shape[1] >= STEM_SLICES;
}

/* *found 1 and *s where a chain of that kind matches (the first in node
 * order), 0 where none does. */
static dfg_status find_chain(const dfg_graph *g, chain_kind kind,
                             stem_chain *s, int *found)
{
    dfg_fuse_readers r;
    *found = 0;
    dfg_status st = dfg_fuse_readers_make(g, &r);
    if (st != DFG_OK)
        return st;
    for (int32_t n = 0; n < g->n_nodes && !*found; n++)
        *found = matches_at(g, &r, n, kind, s);
    dfg_fuse_readers_free(g, &r);
    return DFG_OK;
}

/* Records a node named "<base>/slice_<k>/<what>"; its first output in
 * *out (n_out outputs). */
static dfg_status add(dfg_graph *g, dfg_op op, const char *base, int k,
                      const char *what, const int32_t *in, int32_t n_in,
                      const dfg_attrs *attrs, int32_t n_out, int32_t *out)
{
    char name[300];
    snprintf(name, sizeof name, "%.240s/slice_%d/%s", base, k, what);
    int32_t outs[3];
    dfg_status st = dfg_graph_add_node(g, op, name, in, n_in, attrs, n_out,
                                       outs);
    *out = outs[0];
    return st;
}

/* Channels [begin, end) of v's outer dim: a view. */
static dfg_status channel_slice(dfg_graph *g, int32_t v, const char *base,
                                int k, const char *what, int64_t begin,
                                int64_t end, int32_t *out)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.n_axes = 1;
    a.axes[0] = 0;
    a.starts[0] = begin;
    a.ends[0] = end;
    a.steps[0] = 1;
    return add(g, DFG_OP_SLICE, base, k, what, &v, 1, &a, 1, out);
}

/* Slice k of the chain, channels [begin, end); its last value in *out. */
static dfg_status add_slice(dfg_graph *g, const stem_chain *s, int k,
                            int64_t begin, int64_t end, int32_t *out)
{
    /* Copies: adding nodes may move g->nodes. */
    const dfg_ir_node conv = g->nodes[s->conv];
    const dfg_ir_node bn = g->nodes[s->batch_norm];
    const dfg_ir_node relu = g->nodes[s->relu >= 0 ? s->relu : s->conv];
    const dfg_ir_node pool = g->nodes[s->pool >= 0 ? s->pool : s->conv];
    static const char *const bn_operand[5] = {"", "scale", "bias", "mean",
                                              "var"};
    int32_t conv_in[3] = {conv.inputs[0], -1, -1}, bn_in[5];
    dfg_status st = channel_slice(g, conv.inputs[1], conv.name, k, "kernel",
                                  begin, end, &conv_in[1]);
    if (st == DFG_OK && conv.n_inputs == 3 && conv.inputs[2] >= 0)
        st = channel_slice(g, conv.inputs[2], conv.name, k, "conv_bias",
                           begin, end, &conv_in[2]);
    for (int32_t i = 1; st == DFG_OK && i < 5; i++)
        st = channel_slice(g, bn.inputs[i], bn.name, k, bn_operand[i], begin,
                           end, &bn_in[i]);
    if (st == DFG_OK)
        st = add(g, DFG_OP_CONV2D, conv.name, k, "conv", conv_in,
                 conv.n_inputs, &conv.attrs, 1, &bn_in[0]);
    dfg_attrs bn_attrs = bn.attrs;
    bn_attrs.alpha = dfg_batch_norm_momentum(&bn.attrs);
    if (st == DFG_OK)
        st = add(g, DFG_OP_BATCH_NORM_TRAIN, bn.name, k, "batch_norm", bn_in,
                 5, &bn_attrs, 3, out);
    if (st == DFG_OK && s->relu >= 0)
        st = add(g, DFG_OP_RELU, relu.name, k, "relu", out, 1, &relu.attrs, 1,
                 out);
    if (st == DFG_OK && s->pool >= 0)
        st = add(g, DFG_OP_MAX_POOL, pool.name, k, "max_pool", out, 1,
                 &pool.attrs, 1, out);
    return st;
}

static void replace_reads(dfg_graph *g, int32_t from, int32_t to)
{
    for (int32_t n = 0; n < g->n_nodes; n++)
        for (int32_t i = 0; !g->nodes[n].dead && i < g->nodes[n].n_inputs; i++)
            if (g->nodes[n].inputs[i] == from)
                g->nodes[n].inputs[i] = to;
}

/* The new nodes (from first_added on) take the place of the chain's last
 * node, which dies with the rest of the chain. */
static dfg_status take_place(dfg_graph *g, const stem_chain *s,
                             int32_t first_added, int32_t last)
{
    int32_t *order = dfg_calloc(&g->allocator, (size_t)g->n_nodes + 1,
                                sizeof *order);
    if (!order)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "sliced stem: out of memory");
    int32_t at = 0;
    for (int32_t n = 0; n < first_added; n++) {
        order[at++] = n;
        for (int32_t m = first_added; n == last && m < g->n_nodes; m++)
            order[at++] = m;
    }
    g->nodes[s->conv].dead = g->nodes[s->batch_norm].dead = 1;
    if (s->relu >= 0)
        g->nodes[s->relu].dead = 1;
    if (s->pool >= 0)
        g->nodes[s->pool].dead = 1;
    dfg_status st = dfg_graph_reorder_nodes(g, order);
    dfg_free(&g->allocator, order);
    return st;
}

static dfg_status slice_chain(dfg_graph *g, chain_kind kind,
                              int32_t *n_slices)
{
    *n_slices = 0;
    stem_chain s;
    int found;
    dfg_status found_st = find_chain(g, kind, &s, &found);
    if (found_st != DFG_OK || !found)
        return found_st;
    int32_t last = s.pool >= 0 ? s.pool : s.relu >= 0 ? s.relu : s.batch_norm;
    int32_t y = g->nodes[last].outputs[0];
    int64_t channels = g->values[g->nodes[s.conv].outputs[0]].type.shape[1];
    int64_t step = (channels + STEM_SLICES - 1) / STEM_SLICES;
    int32_t first_added = g->n_nodes, parts[STEM_SLICES];
    dfg_status st = DFG_OK;
    int k = 0;
    for (int64_t c = 0; st == DFG_OK && c < channels; c += step, k++)
        st = add_slice(g, &s, k, c, c + step < channels ? c + step : channels,
                       &parts[k]);
    /* Updated in place through the views: persistent state, as the
     * training pass makes them (training_batch_norm.c). */
    for (int32_t i = 3; st == DFG_OK && i < 5; i++)
        g->values[g->nodes[s.batch_norm].inputs[i]].kind = DFG_VALUE_WEIGHT;
    int32_t joined = -1;
    dfg_attrs cat;
    dfg_attrs_init(&cat);
    cat.axis = 1;
    char name[300];
    snprintf(name, sizeof name, "%.270s/slices", g->nodes[last].name);
    if (st == DFG_OK)
        st = dfg_graph_add_node(g, DFG_OP_CONCAT, name, parts, k, &cat, 1,
                                &joined);
    if (st != DFG_OK)
        return dfg_error_prefix(st, "sliced %s at conv '%s'",
                                kind == STEM ? "stem" : "block",
                                g->nodes[s.conv].name);
    replace_reads(g, y, joined);
    *n_slices = k;
    return take_place(g, &s, first_added, last);
}

dfg_status dfg_slice_stem(dfg_graph *g, int32_t *n_slices)
{
    return slice_chain(g, STEM, n_slices);
}

dfg_status dfg_slice_first_block(dfg_graph *g, int32_t *n_slices)
{
    return slice_chain(g, BLOCK, n_slices);
}
