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
 * (runtime/cpu/weight_grad_update.c). The same sums in the same order, no
 * extra FLOPs: only dy and x live on to the update (it runs after the
 * last reader of w, usually conv2d_grad_input, next to it). Convs of
 * several groups (depthwise: small weights) keep the pair.
 *
 * A fused op holds a slice and its columns, never more than the pair's
 * gradient and workspace (weight_update_geometry.h), but dy and x live
 * on to it and the schedule changes: all are fused on a copy, kept when
 * its trial plan's arena is not larger. (One at a time, each of
 * resnet18's fusions grows the arena at 32x32: its peak is elsewhere,
 * and the order and placement move; together they lower it.) */
#include "remat.h"

#include "error.h"
#include "memory.h"

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
    return st == DFG_OK ? dfg_pass_dce(g, &dce) : st;
}
