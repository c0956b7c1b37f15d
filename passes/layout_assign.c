/* Layout assignment (pass.h, dfg_pass_assign_layouts): activations
 * between the CPU backend's oneDNN convolutions stay in one blocked
 * layout, with an explicit reorder step where a blocked tensor meets a
 * reader that wants it plain, or the other way round. The layout is the
 * one oneDNN chooses for the convs on this CPU (nChw8c with AVX2); where
 * it chooses, for some convs, a format dfg has no layout for (nhwc,
 * AVX-512's brgemm convs), the widest blocked layout its jit kernels take for nearly
 * the most conv work, the convs oneDNN blocks itself included
 * (choose_foreign_block: nChw16c, padded where channel counts such as 24
 * and 40 do not fill its blocks and the padding adds little work, else
 * nChw8c where such counts carry over an eighth of it and the padded wide
 * block is not estimated faster).
 *
 * Values that must share a layout form groups: the operands and output
 * of a layout-agnostic node (src/ir/layout_rule.h: elementwise without
 * broadcast, concat along the channels) or of a pool, per-channel add
 * or mul, or batch norm (x and y) that the CPU backend runs blocked, and a
 * conv's output and its residual. A group may be blocked when every value in it is a 4-D f32
 * tensor whose channels fill whole blocks (no padding: its bytes are
 * NCHW's), or with a padded layout pads cheaply (dfg_layout_pads_cheaply),
 * and none is a graph output. With padding, a concat along the channels
 * and an agnostic op that could make the padding infinite
 * (dfg_op_pads_finitely) stay uniform only where no operand is padded. It is blocked when that saves
 * reorders: the conv ports (x, y, residual) touching it that oneDNN
 * wants blocked outnumber the reorders it costs (a plain producer's
 * value that blocked readers read, a blocked value that plain readers
 * read, a conv port oneDNN wants plain), or, on a tie, where a depthwise
 * conv reads or writes it (TIE_DEPTHWISE).
 *
 * Then each value takes its layout from its producer: a conv or a
 * uniform node (agnostic, or such a pool or binary) writes its group's
 * layout, any other node (and every leaf) writes plain; and each reader
 * that wants the other layout reads one shared reorder of the value,
 * recorded just before the first such reader.
 *
 * On a target with its own conv rule (dfg_target.conv_layout: the CUDA
 * backend's 16-bit convs want nhwc) the same groups and scores decide,
 * with that rule in place of oneDNN's: a conv wants the target's layout
 * for x and y where the rule says so and its filter is a stored weight
 * no other node reads (the filter is then permuted to KRSC here, once),
 * and its x and y share a group (one layout for both);
 * the uniform nodes are the agnostic ones (a channel concat included:
 * the target copies nhwc parts per pixel), max and average pooling and
 * batch norm's x and y (the target's kernels index nhwc; its statistics
 * stay plain); anything else, a global average pool, a
 * flatten, a graph output, reads plain through a reorder. */
#include "passes/pass.h"

#include <stdio.h>
#include <string.h>
#include "ir/layout_rule.h"
#include "passes/remat/remat_core.h"
#include "passes/training/training.h"
#include "runtime/cpu_layout_rule.h"
#include "util/error.h"
#include "util/memory.h"
#include "util/shared_bytes.h"

typedef struct layouts {
    dfg_graph *g;
    const dfg_target *target; /* its conv_layout rule, or NULL: oneDNN's */
    int32_t *readers;    /* [n_values] target rule: how many nodes read v */
    int32_t block;       /* the blocked layout chosen (dfg_layout) */
    int pad;             /* 1: values may be blocked with padding */
    int32_t *group;      /* [n_values] union-find parent */
    int32_t *score;      /* [n_values] per group root: benefit - cost */
    uint8_t *blockable;  /* [n_values] per group root */
    int32_t *want_x;     /* [n_nodes] a oneDNN conv's x layout, else -1 */
    int32_t *want_y;     /* [n_nodes] its y layout */
    uint8_t *foreign;    /* [n_nodes] a conv oneDNN wants in a format dfg
                            has no layout for (nhwc) */
    uint8_t *uniform;    /* [n_nodes] operands and output in one layout,
                            which may be the blocked one */
    int32_t *copy;       /* [n_values * 2]: v reordered to plain, blocked */
    uint8_t *counted;    /* [n_values] scoring: a reorder counted */
    uint8_t *tie;        /* [n_values] per group root: TIE_* flags */
    int32_t *before;     /* appended node k precedes original node before[k] */
    int32_t n_values, n_nodes;
} layouts;

static int32_t find(layouts *l, int32_t v)
{
    while (l->group[v] != v)
        v = l->group[v] = l->group[l->group[v]];
    return v;
}

static void unite(layouts *l, int32_t a, int32_t b)
{
    a = find(l, a);
    b = find(l, b);
    if (a != b)
        l->group[a] = b;
}

static int is_conv(const layouts *l, int32_t n) { return l->want_x[n] >= 0; }

/* The conv's operand types: in[0..n_inputs), *out. */
static void conv_types(const layouts *l, int32_t n, dfg_type in[4],
                       dfg_type *out)
{
    const dfg_ir_node *node = &l->g->nodes[n];
    for (int32_t i = 0; i < node->n_inputs; i++)
        in[i] = node->inputs[i] >= 0 ? l->g->values[node->inputs[i]].type
                                     : (dfg_type){DFG_F32, -1, {0}, 0};
    *out = l->g->values[node->outputs[0]].type;
}

/* The conv's layouts as oneDNN wants them (want_x/want_y stay -1 where
 * oneDNN does not take it; plain, and foreign set, where it wants a
 * format dfg has no layout for). */
static void query_conv(layouts *l, int32_t n)
{
    const dfg_ir_node *node = &l->g->nodes[n];
    dfg_type in[4], out;
    /* oneDNN takes a conv whose weights do not change (dnnl_conv.c). */
    if (node->n_inputs < 2 || node->n_inputs > 4 || node->n_outputs != 1 ||
        node->inputs[1] < 0 || !dfg_value_is_stored(l->g, node->inputs[1]))
        return;
    conv_types(l, n, in, &out);
    int32_t x, y;
    if (l->target) {
        int32_t want = l->target->conv_layout(&node->attrs, in,
                                              node->n_inputs, &out);
        int32_t w = node->inputs[1];
        if (l->readers[w] != 1 || !l->g->values[w].data ||
            l->g->values[w].is_output)
            want = DFG_LAYOUT_PLAIN; /* the filter is permuted in place */
        l->want_x[n] = l->want_y[n] = want;
        if (want != DFG_LAYOUT_PLAIN)
            l->block = want;
        return;
    }
    if (dfg_cpu_conv_layouts(&node->attrs, in, node->n_inputs, &out, 1, &x,
                             &y) != 0)
        return;
    l->foreign[n] = x < 0 || y < 0;
    l->want_x[n] = x >= 0 ? x : DFG_LAYOUT_PLAIN;
    l->want_y[n] = y >= 0 ? y : DFG_LAYOUT_PLAIN;
    if (l->block == DFG_LAYOUT_PLAIN && !l->foreign[n])
        l->block = l->want_x[n] != DFG_LAYOUT_PLAIN ? l->want_x[n]
                                                     : l->want_y[n];
}

/* The FLOPs of conv node n (its op's rule, src/ir/op_flops.c). */
static double conv_work(const layouts *l, int32_t n)
{
    const dfg_ir_node *node = &l->g->nodes[n];
    dfg_type in[4], out;
    conv_types(l, n, in, &out);
    return (double)dfg_op_get(node->op)->flops(&node->attrs, in,
                                               node->n_inputs, &out, 1);
}

/* 1 if oneDNN chose the blocked layout for conv n's x and y itself. */
static int chose(const layouts *l, int32_t n, int32_t layout)
{
    return is_conv(l, n) && !l->foreign[n] && l->want_x[n] == layout &&
           l->want_y[n] == layout;
}

/* 1 if foreign conv n runs in the blocked layout (padded where pad) on a
 * jit kernel, with its x and y in *x and *y. */
static int takes_in(const layouts *l, int32_t n, int32_t layout, int pad,
                    int32_t *x, int32_t *y)
{
    const dfg_ir_node *node = &l->g->nodes[n];
    dfg_type in[4], out;
    if (!l->foreign[n])
        return 0;
    conv_types(l, n, in, &out);
    return dfg_cpu_conv_layouts_in(&node->attrs, in, node->n_inputs, &out, 1,
                                   layout, pad, x, y) == 0;
}

/* The work of conv n with x in layout x and y in layout y, padding
 * included: a dense conv's multiplies grow with the stored channels of
 * both, a depthwise one's with y's. */
static double padded_work(const layouts *l, int32_t n, int32_t x, int32_t y)
{
    const dfg_ir_node *node = &l->g->nodes[n];
    dfg_type in[4], out;
    conv_types(l, n, in, &out);
    in[0].layout = x;
    out.layout = y;
    double grow = (double)dfg_layout_channels(&out) / (double)out.shape[1];
    if (node->attrs.group <= 1)
        grow *= (double)dfg_layout_channels(&in[0]) / (double)in[0].shape[1];
    return conv_work(l, n) * grow;
}

/* Where oneDNN wants its own format for some convs (AVX-512's brgemm
 * convs, nhwc): the widest blocked layout whose jit kernels take, with no
 * reorder, at least WIDE_SHARE of the most conv work any candidate's take
 * becomes the block, and those convs want it where a jit kernel takes
 * them in it. A conv for which oneDNN chose the widest blocked layout
 * itself (a grouped one, whose group's channels fill its blocks) counts
 * for it. A wider block's kernels run more lanes per instruction, so it
 * wins unless the convs it leaves to reorders (channel counts such as 24
 * and 40 that fill 8 lanes but not 16) carry a large share of the work. */
#define WIDE_SHARE (7.0 / 8.0)

/* The widest layout padded, where its blocks leave such convs to
 * reorders: taken when its jit kernels then take WIDE_SHARE of the most
 * conv work and the padding adds at most PAD_SHARE to the work they do,
 * on a CPU whose wide vectors multiply no more floats a second than two
 * narrow ones (the wider kernels then pay for the padded channels; the
 * measurements are in docs/BENCHMARKS.md and the notes of issue 30).
 * Where they multiply s times more (dfg_cpu_wide_vector_speedup), the
 * padded work over s may reach 1 + PAD_SHARE of the unpadded. */
#define PAD_SHARE (1.0 / 8.0)

/* Where the convs the padded wide layout leaves to reorders (grouped ones
 * whose groups of 24 channels fill 8 lanes but no 16: RegNet's) carry more
 * than 1 - WIDE_SHARE of the work, it is still taken when it is estimated
 * faster: the padded work over the wide vectors' speedup, plus the work
 * left to reorders at LEFT_COST times its own, within the most conv work
 * a candidate takes. On a CPU whose wide vectors multiply no more floats
 * a second than two narrow ones it never is. */
#define LEFT_COST 1.5

static void choose_foreign_block(layouts *l)
{
    int32_t candidates[2], best = DFG_LAYOUT_PLAIN;
    int32_t n_candidates = dfg_cpu_blocked_layouts(candidates);
    double work[2] = {0.0, 0.0}, most = 0.0, padded = 0.0, added = 0.0;
    for (int32_t c = 0; c < n_candidates; c++) {
        int32_t x, y;
        for (int32_t n = 0; n < l->n_nodes; n++)
            if (takes_in(l, n, candidates[c], 0, &x, &y) ||
                (c == 0 && chose(l, n, candidates[c])))
                work[c] += conv_work(l, n);
        most = work[c] > most ? work[c] : most;
    }
    /* candidates run widest first (dfg_cpu_blocked_layouts). */
    for (int32_t c = n_candidates - 1; c >= 0; c--)
        if (work[c] > 0.0 && work[c] >= WIDE_SHARE * most)
            best = candidates[c];
    if (n_candidates > 1 && best != candidates[0])
        for (int32_t n = 0; n < l->n_nodes; n++) {
            int32_t x, y;
            if (takes_in(l, n, candidates[0], 1, &x, &y)) {
                padded += conv_work(l, n);
                added += padded_work(l, n, x, y) - conv_work(l, n);
            } else if (chose(l, n, candidates[0]))
                padded += conv_work(l, n);
        }
    double speedup = dfg_cpu_wide_vector_speedup();
    double allowed = speedup * (1.0 + PAD_SHARE) - 1.0;
    int left_pays = (padded + added) / speedup +
                        (most - padded) * LEFT_COST <= most;
    if (padded > 0.0 && (padded >= WIDE_SHARE * most || left_pays) &&
        added <= allowed * padded) {
        best = candidates[0];
        l->pad = 1;
    }
    l->block = best;
    for (int32_t n = 0; best != DFG_LAYOUT_PLAIN && n < l->n_nodes; n++) {
        int32_t x, y;
        if (takes_in(l, n, best, l->pad, &x, &y)) {
            l->want_x[n] = x;
            l->want_y[n] = y;
        }
    }
}

/* 1 if a value of type may take the chosen block (padded where the
 * padded layout was chosen). */
static int fits(const layouts *l, const dfg_type *type)
{
    return l->pad ? dfg_layout_pads_cheaply(type, l->block)
                  : dfg_layout_fills(type, l->block);
}

/* 1 if agnostic node n may run over padding: it keeps padding finite, or
 * no operand of it would be padded. */
static int agnostic_pads(const layouts *l, const dfg_ir_node *node,
                         const dfg_type *in, const dfg_type *out)
{
    if (!l->pad || (node->op != DFG_OP_CONCAT &&
                    dfg_op_pads_finitely(node->op)))
        return 1;
    for (int32_t i = 0; i < node->n_inputs; i++)
        if (!dfg_layout_fills(&in[i], l->block))
            return 0;
    return dfg_layout_fills(out, l->block);
}

/* Whether node n runs with every operand in one layout, blocked ones
 * included. */
static int uniform_node(const layouts *l, int32_t n)
{
    const dfg_ir_node *node = &l->g->nodes[n];
    dfg_type in[DFG_MAX_SPLIT * 2];
    if (node->dead || node->n_outputs != 1 ||
        node->n_inputs > DFG_MAX_SPLIT * 2)
        return 0;
    for (int32_t i = 0; i < node->n_inputs; i++) {
        if (node->inputs[i] < 0)
            return 0;
        in[i] = l->g->values[node->inputs[i]].type;
    }
    const dfg_type *out = &l->g->values[node->outputs[0]].type;
    if (l->target)
        return out->rank == 4 && dfg_layout_fits(out, l->block) &&
               (node->op == DFG_OP_MAX_POOL || node->op == DFG_OP_BATCH_NORM ||
                node->op == DFG_OP_AVERAGE_POOL ||
                dfg_op_layout_agnostic(node->op, &node->attrs, in,
                                       node->n_inputs, out));
    if (out->rank != 4 || out->dtype != DFG_F32)
        return 0;
    if (node->op == DFG_OP_MAX_POOL || node->op == DFG_OP_AVERAGE_POOL ||
        node->op == DFG_OP_GLOBAL_AVERAGE_POOL)
        return fits(l, out) &&
               dfg_cpu_pool_takes_blocked(node->op, &node->attrs, &in[0], out,
                                          l->block);
    if (node->op == DFG_OP_BATCH_NORM)
        return dfg_cpu_batch_norm_takes_blocked(in, node->n_inputs, out,
                                                l->block);
    if (dfg_layout_per_channel_full(node->op, in, node->n_inputs, out) >= 0)
        return fits(l, out) &&
               dfg_cpu_binary_takes_blocked(node->op, in, out, l->block);
    return (dfg_op_layout_agnostic(node->op, &node->attrs, in,
                                   node->n_inputs, out) &&
            agnostic_pads(l, node, in, out)) ||
           dfg_op_layout_rows(node->op, &node->attrs, out->rank);
}

static int uniform(const layouts *l, int32_t n) { return l->uniform[n]; }

/* The layout reader n wants for its input i if v's group is blocked (a
 * batch norm's statistics stay plain). */
static int wants_blocked(const layouts *l, int32_t n, int32_t i)
{
    if (is_conv(l, n))
        return (i == 0 || i == 3) &&
               (!l->target || l->want_x[n] != DFG_LAYOUT_PLAIN);
    return uniform(l, n) &&
           (i == 0 || l->g->nodes[n].op != DFG_OP_BATCH_NORM);
}

/* Groups, and which of them may be blocked. */
static void make_groups(layouts *l)
{
    dfg_graph *g = l->g;
    for (int32_t v = 0; v < l->n_values; v++)
        l->group[v] = v;
    for (int32_t n = 0; n < l->n_nodes; n++) {
        const dfg_ir_node *node = &g->nodes[n];
        if (node->dead)
            continue;
        if (uniform(l, n)) {
            for (int32_t i = 0; i < node->n_inputs; i++)
                if (wants_blocked(l, n, i))
                    unite(l, node->inputs[i], node->outputs[0]);
        } else if (is_conv(l, n)) {
            if (node->n_inputs > 3 && node->inputs[3] >= 0)
                unite(l, node->inputs[3], node->outputs[0]);
            /* The target's conv takes x and y in one layout. */
            if (l->target && l->want_x[n] != DFG_LAYOUT_PLAIN)
                unite(l, node->inputs[0], node->outputs[0]);
        }
    }
    for (int32_t v = 0; v < l->n_values; v++)
        l->blockable[v] = 1;
    for (int32_t v = 0; v < l->n_values; v++)
        if (!fits(l, &g->values[v].type) ||
            g->values[v].is_output)
            l->blockable[find(l, v)] = 0;
}


static int writes_blocked(const layouts *l, int32_t v)
{
    int32_t p = l->g->values[v].producer;
    if (p >= 0 && l->target && is_conv(l, p))
        return l->want_y[p] != DFG_LAYOUT_PLAIN; /* only the rule's convs */
    return p >= 0 && !l->g->nodes[p].dead && (is_conv(l, p) || uniform(l, p));
}

/* A port or reorder of a [N, C, 1, 1] tensor costs next to nothing (its
 * blocked bytes are its plain ones): it counts neither way. */
static void add_score(layouts *l, int32_t v, int32_t points)
{
    const dfg_type *t = &l->g->values[v].type;
    if (t->rank != 4 || t->shape[2] * t->shape[3] > 1)
        l->score[find(l, v)] += points;
}

/* A group whose score ties is blocked where a depthwise conv reads or
 * writes it blocked and only conv ports want it plain (no reorder step
 * either way): a conv reorders within its step whichever way it goes, and
 * on the CPU a depthwise conv's kernel for oneDNN's own format (AVX-512's
 * nhwc brgemm one) runs several times as long as its blocked jit one. */
#define TIE_DEPTHWISE 1 /* a depthwise conv reads or writes it blocked */
#define TIE_REORDER 2   /* a reorder step counted against it */

static int depthwise(const layouts *l, const dfg_ir_node *node)
{
    const dfg_type *x = &l->g->values[node->inputs[0]].type;
    return node->attrs.group > 1 && x->rank == 4 &&
           x->shape[1] == node->attrs.group;
}

/* benefit - cost of blocking each group (layout_assign.c's header). */
static void score_groups(layouts *l)
{
    dfg_graph *g = l->g;
    for (int32_t n = 0; n < l->n_nodes; n++) {
        const dfg_ir_node *node = &g->nodes[n];
        if (node->dead || !is_conv(l, n))
            continue;
        add_score(l, node->inputs[0], l->want_x[n] == l->block ? 1 : -1);
        if (depthwise(l, node)) {
            if (l->want_x[n] == l->block)
                l->tie[find(l, node->inputs[0])] |= TIE_DEPTHWISE;
            if (l->want_y[n] == l->block)
                l->tie[find(l, node->outputs[0])] |= TIE_DEPTHWISE;
        }
        add_score(l, node->outputs[0], l->want_y[n] == l->block ? 1 : -1);
        if (node->n_inputs > 3 && node->inputs[3] >= 0)
            add_score(l, node->inputs[3], l->want_y[n] == l->block ? 1 : -1);
    }
    /* One reorder per value whose producer and some reader disagree. */
    uint8_t *counted = l->counted;
    for (int32_t n = 0; n < l->n_nodes; n++) {
        const dfg_ir_node *node = &g->nodes[n];
        for (int32_t i = 0; !node->dead && i < node->n_inputs; i++) {
            int32_t v = node->inputs[i];
            if (v < 0 || writes_blocked(l, v) == wants_blocked(l, n, i) ||
                counted[v])
                continue;
            counted[v] = 1;
            add_score(l, v, -1);
            l->tie[find(l, v)] |= TIE_REORDER;
        }
    }
}

/* v reordered to layout, made once, recorded before node n. */
static dfg_status reorder_of(layouts *l, int32_t v, int32_t layout,
                             int32_t n, int32_t *out)
{
    dfg_graph *g = l->g;
    int32_t *cached = &l->copy[v * 2 + (layout != DFG_LAYOUT_PLAIN)];
    if (*cached >= 0) {
        *out = *cached;
        return DFG_OK;
    }
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.layout = layout;
    char name[300];
    snprintf(name, sizeof name, "%.270s.%s", g->values[v].name,
             dfg_layout_name(layout));
    l->before[g->n_nodes - l->n_nodes] = n;
    dfg_status st = dfg_graph_add_node(g, DFG_OP_REORDER, name, &v, 1, &attrs,
                                       1, out);
    if (st == DFG_OK)
        *cached = *out;
    return st;
}

/* Each reader that wants the other layout reads a reorder. */
static dfg_status rewire(layouts *l, int32_t *n_reorders)
{
    dfg_graph *g = l->g;
    dfg_status st = DFG_OK;
    for (int32_t n = 0; n < l->n_nodes && st == DFG_OK; n++) {
        for (int32_t i = 0; i < g->nodes[n].n_inputs && st == DFG_OK; i++) {
            int32_t v = g->nodes[n].inputs[i], copy;
            if (g->nodes[n].dead || v < 0 || !l->blockable[find(l, v)])
                continue;
            int32_t want = wants_blocked(l, n, i) ? l->block
                                                  : DFG_LAYOUT_PLAIN;
            if (g->values[v].type.layout == want)
                continue;
            int32_t before = g->n_nodes;
            st = reorder_of(l, v, want, n, &copy);
            if (st == DFG_OK) {
                g->nodes[n].inputs[i] = copy;
                *n_reorders += g->n_nodes > before;
            }
        }
    }
    return st;
}

/* [K, C, RS] elements of e bytes (2 or 4) from `from` to [K, RS, C]. */
static void permute_krsc(uint8_t *to, const uint8_t *from, int64_t k,
                         int64_t c, int64_t rs, size_t e)
{
    for (int64_t ki = 0; ki < k; ki++)
        for (int64_t ci = 0; ci < c; ci++) {
            const uint8_t *src = from + (size_t)((ki * c + ci) * rs) * e;
            uint8_t *dst = to + (size_t)(ki * rs * c + ci) * e;
            size_t pitch = (size_t)c * e;
            for (int64_t p = 0; p < rs; p++)
                memcpy(dst + (size_t)p * pitch, src + (size_t)p * e, e);
        }
}

/* The filter of each conv whose x is in the target's layout, permuted
 * from [K, C, R, S] to KRSC (its only reader is that conv: query_conv). */
static dfg_status permute_filters(layouts *l)
{
    dfg_graph *g = l->g;
    for (int32_t n = 0; n < l->n_nodes; n++) {
        const dfg_ir_node *node = &g->nodes[n];
        if (node->dead || !is_conv(l, n) || node->inputs[0] < 0 ||
            g->values[node->inputs[0]].type.layout != DFG_LAYOUT_NHWC)
            continue;
        dfg_ir_value *w = &g->values[node->inputs[1]];
        int64_t k = w->type.shape[0], c = w->type.shape[1],
                rs = w->type.shape[2] * w->type.shape[3];
        size_t size = (size_t)dfg_type_bytes(&w->type);
        size_t e = size / (size_t)(k * c * rs);
        dfg_shared_bytes *owner = dfg_shared_bytes_alloc(&g->allocator, size);
        if (!owner)
            return dfg_error(DFG_ERR_OUT_OF_MEMORY, "layouts: out of memory");
        permute_krsc(dfg_shared_bytes_fill(owner), w->data, k, c, rs, e);
        dfg_shared_bytes_release(w->data_owner);
        w->data_owner = owner;
        w->data = dfg_shared_bytes_data(owner);
        w->type.layout = DFG_LAYOUT_NHWC;
    }
    return DFG_OK;
}

/* Every live node's operands follow the layout rule (our invariant). */
static dfg_status check_nodes(const dfg_graph *g)
{
    for (int32_t n = 0; n < g->n_nodes; n++) {
        const dfg_ir_node *node = &g->nodes[n];
        dfg_type in[DFG_MAX_SPLIT * 2], out[DFG_MAX_SPLIT];
        if (node->dead || node->n_inputs > DFG_MAX_SPLIT * 2 ||
            node->n_outputs > DFG_MAX_SPLIT)
            continue;
        for (int32_t i = 0; i < node->n_inputs; i++)
            in[i] = node->inputs[i] >= 0 ? g->values[node->inputs[i]].type
                                         : (dfg_type){DFG_F32, -1, {0}, 0};
        for (int32_t i = 0; i < node->n_outputs; i++)
            out[i] = g->values[node->outputs[i]].type;
        if (dfg_layout_check(node->op, &node->attrs, in, node->n_inputs, out,
                             node->n_outputs) != DFG_OK)
            return dfg_error_prefix(DFG_ERR_INTERNAL, "layouts: node '%s' (%s)",
                                    node->name, dfg_op_get(node->op)->name);
    }
    return DFG_OK;
}

static dfg_status assign(layouts *l, dfg_pass_report *report)
{
    dfg_graph *g = l->g;
    if (l->target)
        dfg_graph_count_readers(g, l->readers);
    for (int32_t n = 0; n < l->n_nodes; n++)
        if (!g->nodes[n].dead && g->nodes[n].op == DFG_OP_CONV2D)
            query_conv(l, n);
    int any_foreign = 0;
    for (int32_t n = 0; n < l->n_nodes; n++)
        any_foreign |= l->foreign[n];
    if (any_foreign && !l->target)
        choose_foreign_block(l);
    if (l->block == DFG_LAYOUT_PLAIN)
        return DFG_OK;
    for (int32_t n = 0; n < l->n_nodes; n++)
        l->uniform[n] = (uint8_t)uniform_node(l, n);
    make_groups(l);
    score_groups(l);
    for (int32_t v = 0; v < l->n_values; v++) {
        int32_t root = find(l, v);
        int tie_blocked = !l->target && l->score[root] == 0 &&
                          l->tie[root] == TIE_DEPTHWISE;
        l->blockable[root] =
            l->blockable[root] && (l->score[root] > 0 || tie_blocked);
    }
    for (int32_t v = 0; v < l->n_values; v++)
        if (l->blockable[find(l, v)] && writes_blocked(l, v)) {
            g->values[v].type.layout = l->block;
            report->values_blocked++;
        }
    dfg_status st = rewire(l, &report->reorders);
    if (st == DFG_OK && l->target)
        st = permute_filters(l);
    if (st == DFG_OK && g->n_nodes > l->n_nodes)
        st = dfg_graph_place_appended(g, l->n_nodes, l->before);
    return st == DFG_OK ? check_nodes(g) : st;
}

dfg_status dfg_pass_assign_layouts(dfg_graph *g, const dfg_target *target,
                                   dfg_pass_report *report)
{
    memset(report, 0, sizeof *report);
    report->pass = "layouts";
    layouts l = {.g = g, .n_values = g->n_values, .n_nodes = g->n_nodes,
                 .target = target && target->conv_layout ? target : NULL};
    size_t nv = (size_t)g->n_values + 1, nn = (size_t)g->n_nodes + 1;
    size_t most_reorders = 1;
    for (int32_t n = 0; n < g->n_nodes; n++)
        most_reorders += (size_t)g->nodes[n].n_inputs;
    l.group = dfg_calloc(&g->allocator, nv, sizeof *l.group);
    l.score = dfg_calloc(&g->allocator, nv, sizeof *l.score);
    l.blockable = dfg_calloc(&g->allocator, nv, 1);
    l.copy = dfg_calloc(&g->allocator, nv * 2, sizeof *l.copy);
    l.counted = dfg_calloc(&g->allocator, nv, 1);
    l.tie = dfg_calloc(&g->allocator, nv, 1);
    l.want_x = dfg_calloc(&g->allocator, nn, sizeof *l.want_x);
    l.want_y = dfg_calloc(&g->allocator, nn, sizeof *l.want_y);
    l.uniform = dfg_calloc(&g->allocator, nn, 1);
    l.foreign = dfg_calloc(&g->allocator, nn, 1);
    l.before = dfg_calloc(&g->allocator, most_reorders, sizeof *l.before);
    l.readers = dfg_calloc(&g->allocator, nv, sizeof *l.readers);
    dfg_status st = l.group && l.score && l.blockable && l.copy &&
                            l.counted && l.tie && l.want_x && l.want_y && l.uniform &&
                            l.foreign && l.before && l.readers
                        ? DFG_OK
                        : dfg_error(DFG_ERR_OUT_OF_MEMORY,
                                    "layouts: out of memory");
    if (st == DFG_OK) {
        for (int32_t n = 0; n < g->n_nodes; n++)
            l.want_x[n] = l.want_y[n] = -1;
        for (size_t v = 0; v < nv * 2; v++)
            l.copy[v] = -1;
        st = assign(&l, report);
    }
    dfg_free(&g->allocator, l.group);
    dfg_free(&g->allocator, l.score);
    dfg_free(&g->allocator, l.blockable);
    dfg_free(&g->allocator, l.copy);
    dfg_free(&g->allocator, l.counted);
    dfg_free(&g->allocator, l.tie);
    dfg_free(&g->allocator, l.want_x);
    dfg_free(&g->allocator, l.want_y);
    dfg_free(&g->allocator, l.uniform);
    dfg_free(&g->allocator, l.foreign);
    dfg_free(&g->allocator, l.before);
    dfg_free(&g->allocator, l.readers);
    return st;
}
