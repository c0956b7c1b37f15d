/* relu's gradient as one op over relu's output, under a memory budget
 * (remat.c runs it after the fused weight updates).
 *
 * relu's vector-Jacobian rule (passes/training/vjp_elementwise.c) is
 * where(greater(y, 0), dy, 0): a byte mask of y's size, then the gradient
 * in a tensor of its own, since where writes no operand in place. At
 * resnet18's 224x224 peak under a budget (layer1's backward) that is the
 * mask and a second block-sized tensor beside dy. relu_grad(y, dy) reads
 * y itself and may write over dy: no mask, no second tensor. The rule
 * stays as it is without a budget, so the unconstrained arena a budget's
 * percentage is taken of does not move. The same values bit for bit: dy
 * where y > 0, else 0. Kept only where a trial plan's arena shrinks: the
 * mask lets y die before relu's backward where y is recomputed or its
 * bytes are wanted there (the bundled cnn at 50%: 535,296 B with every
 * rule rewritten, over its 530,048 B budget, though the arena after the
 * rewrite alone was the same). */
#include "passes/remat/remat.h"

/* 1 if v is a constant f32 scalar 0. */
static int is_zero(const dfg_graph *g, int32_t v)
{
    const dfg_ir_value *c = &g->values[v];
    return c->kind == DFG_VALUE_CONSTANT && c->type.dtype == DFG_F32 &&
           dfg_type_numel(&c->type) == 1 && c->data &&
           *(const float *)c->data == 0.0f;
}

/* relu's output y when node is where(greater(y, 0), dy, 0) over f32
 * tensors of one shape, or -1. */
static int32_t compared_output(const dfg_graph *g, const dfg_ir_node *node)
{
    if (node->dead || node->op != DFG_OP_WHERE || node->n_inputs != 3 ||
        !is_zero(g, node->inputs[2]))
        return -1;
    const dfg_ir_value *mask = &g->values[node->inputs[0]];
    if (mask->kind != DFG_VALUE_NODE_OUTPUT)
        return -1;
    const dfg_ir_node *compare = &g->nodes[mask->producer];
    if (compare->dead || compare->op != DFG_OP_GREATER ||
        !is_zero(g, compare->inputs[1]))
        return -1;
    int32_t y = compare->inputs[0];
    const dfg_type *ty = &g->values[y].type;
    const dfg_type *tdy = &g->values[node->inputs[1]].type;
    const dfg_type *tdx = &g->values[node->outputs[0]].type;
    return ty->dtype == DFG_F32 && dfg_type_equal(ty, tdy) &&
                   dfg_type_equal(ty, tdx)
               ? y
               : -1;
}

/* Every such where becomes relu_grad(y, dy); masks no node reads any more
 * are dropped. *n: how many. */
static dfg_status rewrite_all(dfg_graph *g, int32_t *n)
{
    *n = 0;
    for (int32_t w = 0; w < g->n_nodes; w++) {
        dfg_ir_node *node = &g->nodes[w];
        int32_t y = compared_output(g, node);
        if (y < 0)
            continue;
        node->inputs[0] = y;
        node->n_inputs = 2;
        node->op = DFG_OP_RELU_GRAD;
        dfg_attrs_init(&node->attrs);
        (*n)++;
    }
    dfg_pass_report dce;
    return *n > 0 ? dfg_pass_dce(g, &dce) : DFG_OK;
}

dfg_status dfg_relu_grads(dfg_graph *g, const dfg_compile_options *o,
                          int64_t *arena, int32_t *n_rewritten)
{
    dfg_graph *t = NULL;
    int64_t now = 0;
    dfg_status st = dfg_graph_clone(g, &g->allocator, &t);
    if (st == DFG_OK)
        st = rewrite_all(t, n_rewritten);
    if (st == DFG_OK && *n_rewritten > 0)
        st = dfg_remat_trial_arena(t, o, &now);
    dfg_graph_destroy(t);
    if (st != DFG_OK || *n_rewritten == 0 || now >= *arena) {
        *n_rewritten = 0;
        return st;
    }
    *arena = now;
    return rewrite_all(g, n_rewritten);
}
