/* Weight gradients computed in slices inside their optimizer update, the
 * first strategy of a training step over its memory budget (remat.c).
 *
 * A conv's weight gradient lives from conv2d_grad_weight to its update:
 * resnet18's 512x512x3x3 kernels make 9 MiB gradients, more than a third
 * of its whole arena at 32x32. Where the gradient's only reader is its
 * update (no accumulation over micro-batches, no all-reduce of
 * data-parallel training: those keep the whole gradient), the pair
 * becomes one conv2d_weight_*_update(dy, x, w, control, state) at the
 * update's place, which computes the gradient a slice of output channels
 * at a time into its workspace and applies each slice at once
 * (runtime/cpu/training/weight_grad_update.c). The same sums in the same order, no
 * extra FLOPs: only dy and x live on to the update (it runs after the
 * last reader of w, usually conv2d_grad_input, next to it). Convs of
 * several groups (depthwise: small weights) keep the pair.
 *
 * A fused op holds a slice and its columns, never more than the pair's
 * gradient and workspace (weight_update_geometry.h), but dy and x live
 * on to it and the schedule changes: all are fused on a copy, kept when
 * its trial plan's arena is not larger. (One at a time, each of
 * resnet18's fusions grows the arena at 32x32: its peak is elsewhere,
 * and the order and placement move; together they lower it.)
 *
 * Then the update may run before its conv's input gradient: the update
 * writes w in place and conv2d_grad_input reads w, so as recorded the
 * input gradient (dx, as large as x) is made while x waits for the
 * update. Where w is smaller than x, the input gradients read a copy of
 * w (a cast to w's own dtype: the same bits) made where the first of them
 * was, and each moves on to just before its first reader, after the
 * update: x (and relu's mask of it) may die before dx is born, at the
 * cost of w's bytes. Kept when the trial plan's arena is smaller (the
 * bundled cnn: 1,060,096 -> 1,020,160 B here, and 969,472 -> 871,168 at
 * the end of a 50% budget; resnet18 at 32x32 gains nothing here, and
 * with the copies its 33% budget's recomputations reached a larger
 * arena, so "not larger" would not do). Once a budget is met, they are
 * tried again and kept on an equal arena (passes/remat/remat_merge.c). */
#include "passes/remat/remat.h"

#include <stdio.h>
#include "passes/training/training.h"
#include "util/error.h"
#include "util/memory.h"

static dfg_op fused_op(dfg_op update)
{
    return update == DFG_OP_SGD_UPDATE    ? DFG_OP_CONV2D_WEIGHT_SGD_UPDATE
           : update == DFG_OP_ADAM_UPDATE ? DFG_OP_CONV2D_WEIGHT_ADAM_UPDATE
                                          : DFG_OP_CONV2D_WEIGHT_ADAMW_UPDATE;
}

/* The readers of value v among live nodes. */
static int32_t readers_of(const dfg_graph *g, int32_t v)
{
    int32_t readers = 0;
    for (int32_t n = 0; n < g->n_nodes; n++)
        for (int32_t i = 0; !g->nodes[n].dead && i < g->nodes[n].n_inputs; i++)
            readers += g->nodes[n].inputs[i] == v;
    return readers;
}

/* The conv2d_grad_weight node whose gradient only update u reads, or -1. */
static int32_t fusable_gradient(const dfg_graph *g, const dfg_ir_node *u)
{
    if (u->dead || dfg_op_updated_weight_input(u->op) != 0 || u->n_inputs != 4)
        return -1;
    const dfg_ir_value *grad = &g->values[u->inputs[1]];
    if (grad->kind != DFG_VALUE_NODE_OUTPUT || grad->is_output ||
        readers_of(g, u->inputs[1]) != 1)
        return -1;
    const dfg_ir_node *p = &g->nodes[grad->producer];
    return !p->dead && p->op == DFG_OP_CONV2D_GRAD_WEIGHT &&
                   p->attrs.group == 1
               ? grad->producer
               : -1;
}

/* Update u becomes the fused op over conv2d_grad_weight p's operands;
 * p is left dead. */
static dfg_status fuse(dfg_graph *g, dfg_ir_node *u, dfg_ir_node *p)
{
    int32_t *inputs = dfg_calloc(&g->allocator, 5, sizeof *inputs);
    if (!inputs)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "fusing weight updates: out of memory");
    inputs[0] = p->inputs[0];
    inputs[1] = p->inputs[1];
    inputs[2] = u->inputs[0];
    inputs[3] = u->inputs[2];
    inputs[4] = u->inputs[3];
    dfg_free(&g->allocator, u->inputs);
    u->inputs = inputs;
    u->n_inputs = 5;
    u->op = fused_op(u->op);
    u->attrs = p->attrs;
    p->dead = 1;
    return DFG_OK;
}

/* Fuses every update whose gradient only it reads; *n_fused: how many. */
static dfg_status fuse_all(dfg_graph *g, int32_t *n_fused)
{
    *n_fused = 0;
    dfg_status st = DFG_OK;
    for (int32_t u = 0; u < g->n_nodes && st == DFG_OK; u++) {
        int32_t p = fusable_gradient(g, &g->nodes[u]);
        if (p >= 0) {
            st = fuse(g, &g->nodes[u], &g->nodes[p]);
            (*n_fused)++;
        }
    }
    return st;
}

static int is_fused(dfg_op op)
{
    return op == DFG_OP_CONV2D_WEIGHT_SGD_UPDATE ||
           op == DFG_OP_CONV2D_WEIGHT_ADAM_UPDATE ||
           op == DFG_OP_CONV2D_WEIGHT_ADAMW_UPDATE;
}

/* The first live conv2d_grad_input reading weight w, or -1. */
static int32_t first_input_gradient(const dfg_graph *g, int32_t w)
{
    for (int32_t n = 0; n < g->n_nodes; n++)
        if (!g->nodes[n].dead && g->nodes[n].op == DFG_OP_CONV2D_GRAD_INPUT &&
            g->nodes[n].inputs[1] == w)
            return n;
    return -1;
}

/* Fused update u's input gradients read a copy of its weight (a cast to
 * its own dtype, the same bits) made just before the first of them, where
 * the weight is smaller than the conv's input x; *before: that reader. */
static dfg_status copy_weight(dfg_graph *g, int32_t u, int32_t *before,
                              int *copied)
{
    int32_t w = g->nodes[u].inputs[2], x = g->nodes[u].inputs[1];
    *copied = 0;
    *before = first_input_gradient(g, w);
    if (*before < 0 || dfg_type_bytes(&g->values[w].type) >=
                           dfg_type_bytes(&g->values[x].type))
        return DFG_OK;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.to = g->values[w].type.dtype;
    char name[300];
    snprintf(name, sizeof name, "%.270s/before_update", g->values[w].name);
    int32_t copy;
    dfg_status st = dfg_graph_add_node(g, DFG_OP_CAST, name, &w, 1, &attrs,
                                       1, &copy);
    for (int32_t n = *before; st == DFG_OK && n < g->n_nodes; n++)
        if (!g->nodes[n].dead && g->nodes[n].op == DFG_OP_CONV2D_GRAD_INPUT &&
            g->nodes[n].inputs[1] == w)
            g->nodes[n].inputs[1] = copy;
    *copied = st == DFG_OK;
    return st;
}

/* The first live node after r, before end, that reads r's output, or
 * end. */
static int32_t first_reader_after(const dfg_graph *g, int32_t r, int32_t end)
{
    for (int32_t n = r + 1; n < end; n++)
        for (int32_t i = 0; !g->nodes[n].dead && i < g->nodes[n].n_inputs; i++)
            if (g->nodes[n].inputs[i] == g->nodes[r].outputs[0])
                return n;
    return end;
}

/* Every fused update whose weight is smaller than its conv's input gets
 * its input gradients reading a copy (copy_weight), each copy placed
 * where the first of them was, and each input gradient of a copy moved on
 * to just before its first reader (so, in the recorded order, after the
 * update and what reads the conv's input last); *n_copied: how many. */
static dfg_status copy_weights(dfg_graph *g, int32_t *n_copied)
{
    int32_t n_original = g->n_nodes;
    int32_t *before = dfg_calloc(&g->allocator, (size_t)n_original + 1,
                                 sizeof *before);
    int32_t *moved_to = dfg_calloc(&g->allocator, (size_t)n_original + 1,
                                   sizeof *moved_to);
    int32_t *order = dfg_calloc(&g->allocator, (size_t)n_original * 2 + 1,
                                sizeof *order);
    int32_t *first = dfg_calloc(&g->allocator, (size_t)n_original + 1,
                                sizeof *first);
    int32_t *next = dfg_calloc(&g->allocator, (size_t)n_original + 1,
                               sizeof *next);
    dfg_status st = before && moved_to && order && first && next
                        ? DFG_OK
                        : dfg_error(DFG_ERR_OUT_OF_MEMORY,
                                    "weight copies: out of memory");
    *n_copied = 0;
    for (int32_t u = 0; u < n_original && st == DFG_OK; u++) {
        int copied = 0;
        if (!g->nodes[u].dead && is_fused(g->nodes[u].op))
            st = copy_weight(g, u, &before[*n_copied], &copied);
        *n_copied += copied;
    }
    /* The input gradients reading a copy (the copies are nodes n_original
     * on) move on. */
    for (int32_t n = 0; st == DFG_OK && n < n_original; n++) {
        const dfg_ir_node *r = &g->nodes[n];
        moved_to[n] = !r->dead && r->op == DFG_OP_CONV2D_GRAD_INPUT &&
                              g->values[r->inputs[1]].kind ==
                                  DFG_VALUE_NODE_OUTPUT &&
                              g->values[r->inputs[1]].producer >= n_original
                          ? first_reader_after(g, n, n_original) : -1;
    }
    /* The nodes moved to m, in their order: a list through next[] from
     * first[m]. */
    for (int32_t m = 0; st == DFG_OK && m <= n_original; m++)
        first[m] = -1;
    for (int32_t r = n_original - 1; st == DFG_OK && r >= 0; r--)
        if (moved_to[r] >= 0) {
            next[r] = first[moved_to[r]];
            first[moved_to[r]] = r;
        }
    int32_t at = 0;
    for (int32_t m = 0; st == DFG_OK && m <= n_original; m++) {
        for (int32_t k = 0; k < *n_copied; k++)
            if (before[k] == m)
                order[at++] = n_original + k;
        for (int32_t r = first[m]; r >= 0; r = next[r])
            order[at++] = r;
        if (m < n_original && moved_to[m] < 0)
            order[at++] = m;
    }
    if (st == DFG_OK && *n_copied > 0)
        st = dfg_graph_reorder_nodes(g, order);
    dfg_free(&g->allocator, before);
    dfg_free(&g->allocator, moved_to);
    dfg_free(&g->allocator, order);
    dfg_free(&g->allocator, first);
    dfg_free(&g->allocator, next);
    return st;
}

dfg_status dfg_update_before_input_gradients(dfg_graph *g,
                                            const dfg_compile_options *o,
                                            int keep_equal, int64_t *arena)
{
    dfg_graph *t = NULL;
    int32_t n_copied = 0;
    int64_t now = 0;
    dfg_status st = dfg_graph_clone(g, &g->allocator, &t);
    if (st == DFG_OK)
        st = copy_weights(t, &n_copied);
    if (st == DFG_OK && n_copied > 0)
        st = dfg_remat_trial_arena(t, o, &now);
    dfg_graph_destroy(t);
    if (st != DFG_OK || n_copied == 0 || now > *arena ||
        (now == *arena && !keep_equal))
        return st;
    *arena = now;
    return copy_weights(g, &n_copied);
}

dfg_status dfg_fuse_weight_updates(dfg_graph *g, const dfg_compile_options *o,
                                   int64_t *arena, int32_t *n_fused)
{
    dfg_graph *t = NULL;
    int64_t now = 0;
    dfg_pass_report dce;
    dfg_status st = dfg_remat_trial_arena(g, o, arena);
    if (st == DFG_OK)
        st = dfg_graph_clone(g, &g->allocator, &t);
    if (st == DFG_OK)
        st = fuse_all(t, n_fused);
    if (st == DFG_OK && *n_fused > 0)
        st = dfg_pass_dce(t, &dce);
    if (st == DFG_OK && *n_fused > 0)
        st = dfg_remat_trial_arena(t, o, &now);
    dfg_graph_destroy(t);
    /* The same graph: the same fusions, when they shrink the arena. */
    if (st != DFG_OK || *n_fused == 0 || now > *arena) {
        *n_fused = 0;
        return st;
    }
    *arena = now;
    st = fuse_all(g, n_fused);
    if (st == DFG_OK)
        st = dfg_pass_dce(g, &dce);
    return st == DFG_OK ? dfg_update_before_input_gradients(g, o, 0, arena)
                         : st;
}
