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
 * several groups (depthwise: small weights) keep the pair. */
#include "remat.h"

#include "error.h"
#include "memory.h"

static dfg_op fused_op(dfg_op update)
{
    return update == DFG_OP_SGD_UPDATE    ? DFG_OP_CONV2D_WEIGHT_SGD_UPDATE
           : update == DFG_OP_ADAM_UPDATE ? DFG_OP_CONV2D_WEIGHT_ADAM_UPDATE
                                          : DFG_OP_CONV2D_WEIGHT_ADAMW_UPDATE;
}

/* The conv2d_grad_weight node whose gradient only update u reads, or -1. */
static int32_t fusable_gradient(const dfg_graph *g, const int32_t *readers,
                                const dfg_ir_node *u)
{
    if (u->dead || dfg_op_updated_weight_input(u->op) != 0 || u->n_inputs != 4)
        return -1;
    const dfg_ir_value *grad = &g->values[u->inputs[1]];
    if (grad->kind != DFG_VALUE_NODE_OUTPUT || grad->is_output ||
        readers[u->inputs[1]] != 1)
        return -1;
    const dfg_ir_node *p = &g->nodes[grad->producer];
    return !p->dead && p->op == DFG_OP_CONV2D_GRAD_WEIGHT &&
                   p->attrs.group == 1
               ? grad->producer
               : -1;
}

/* Update u becomes the fused op over conv2d_grad_weight p's operands. */
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

dfg_status dfg_fuse_weight_updates(dfg_graph *g, int32_t *n_fused)
{
    *n_fused = 0;
    int32_t *readers = dfg_calloc(&g->allocator, (size_t)g->n_values + 1,
                                  sizeof *readers);
    if (!readers)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "fusing weight updates: out of memory");
    for (int32_t n = 0; n < g->n_nodes; n++)
        for (int32_t i = 0; !g->nodes[n].dead && i < g->nodes[n].n_inputs; i++)
            if (g->nodes[n].inputs[i] >= 0)
                readers[g->nodes[n].inputs[i]]++;
    dfg_status st = DFG_OK;
    for (int32_t n = 0; n < g->n_nodes && st == DFG_OK; n++) {
        int32_t p = fusable_gradient(g, readers, &g->nodes[n]);
        if (p >= 0) {
            st = fuse(g, &g->nodes[n], &g->nodes[p]);
            *n_fused += st == DFG_OK;
        }
    }
    dfg_free(&g->allocator, readers);
    return st;
}
