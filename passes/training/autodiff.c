/* Reverse-mode differentiation: the driver (passes/training/autodiff.h).
 *
 * 1. needs[v]: v is one of the wrt values or computed from one; only those
 *    values get gradients (the rest is constant as far as the loss cares).
 * 2. The loss's gradient is seeded with 1; the nodes are then walked in
 *    reverse recorded (topological) order, and each node with a gradient
 *    on some output hands its output gradients to its op's rule, which
 *    appends the nodes computing its input gradients.
 * 3. A value read by several nodes receives the sum of their gradients,
 *    added as each one arrives (so at most two partial gradients of a
 *    value are live at a time).
 * Rules compute every input gradient they can; those nobody needs are
 * removed by dead-code elimination, which runs after this pass. */
#include "passes/training/autodiff.h"

#include <string.h>
#include "util/error.h"
#include "util/memory.h"

static dfg_vjp_rule const rules[DFG_OP_COUNT] = {
    [DFG_OP_ADD] = dfg_vjp_binary,
    [DFG_OP_SUB] = dfg_vjp_binary,
    [DFG_OP_MUL] = dfg_vjp_binary,
    [DFG_OP_DIV] = dfg_vjp_binary,
    [DFG_OP_POW] = dfg_vjp_binary,
    [DFG_OP_MAX] = dfg_vjp_binary,
    [DFG_OP_MIN] = dfg_vjp_binary,
    [DFG_OP_NEG] = dfg_vjp_unary,
    [DFG_OP_ABS] = dfg_vjp_unary,
    [DFG_OP_EXP] = dfg_vjp_unary,
    [DFG_OP_LOG] = dfg_vjp_unary,
    [DFG_OP_SQRT] = dfg_vjp_unary,
    [DFG_OP_RECIPROCAL] = dfg_vjp_unary,
    [DFG_OP_RELU] = dfg_vjp_unary,
    [DFG_OP_LEAKY_RELU] = dfg_vjp_unary,
    [DFG_OP_SIGMOID] = dfg_vjp_unary,
    [DFG_OP_TANH] = dfg_vjp_unary,
    [DFG_OP_GELU] = dfg_vjp_unary,
    [DFG_OP_ERF] = dfg_vjp_unary,
    [DFG_OP_CLIP] = dfg_vjp_unary,
    [DFG_OP_CAST] = dfg_vjp_unary,
    [DFG_OP_WHERE] = dfg_vjp_where,
    [DFG_OP_MATMUL] = dfg_vjp_matmul,
    [DFG_OP_GEMM] = dfg_vjp_gemm,
    [DFG_OP_CONV2D] = dfg_vjp_conv2d,
    [DFG_OP_MAX_POOL] = dfg_vjp_pool,
    [DFG_OP_AVERAGE_POOL] = dfg_vjp_pool,
    [DFG_OP_GLOBAL_AVERAGE_POOL] = dfg_vjp_global_average_pool,
    [DFG_OP_BATCH_NORM] = dfg_vjp_batch_norm,
    [DFG_OP_SOFTMAX] = dfg_vjp_softmax,
    [DFG_OP_LOG_SOFTMAX] = dfg_vjp_softmax,
    [DFG_OP_LAYER_NORM] = dfg_vjp_layer_norm,
    [DFG_OP_REDUCE_SUM] = dfg_vjp_reduce,
    [DFG_OP_REDUCE_MEAN] = dfg_vjp_reduce,
    [DFG_OP_REDUCE_MAX] = dfg_vjp_reduce,
    [DFG_OP_RESHAPE] = dfg_vjp_view,
    [DFG_OP_FLATTEN] = dfg_vjp_view,
    [DFG_OP_SQUEEZE] = dfg_vjp_view,
    [DFG_OP_UNSQUEEZE] = dfg_vjp_view,
    [DFG_OP_IDENTITY] = dfg_vjp_view,
    [DFG_OP_TRANSPOSE] = dfg_vjp_transpose,
    [DFG_OP_CONCAT] = dfg_vjp_concat,
    [DFG_OP_SPLIT] = dfg_vjp_split,
    [DFG_OP_SLICE] = dfg_vjp_slice,
    [DFG_OP_EXPAND] = dfg_vjp_expand,
    [DFG_OP_GATHER] = dfg_vjp_gather,
    [DFG_OP_PAD] = dfg_vjp_pad,
    [DFG_OP_SOFTMAX_CROSS_ENTROPY] = dfg_vjp_softmax_cross_entropy,
    [DFG_OP_BATCH_NORM_TRAIN] = dfg_vjp_batch_norm_train,
    [DFG_OP_DROPOUT] = dfg_vjp_view,
    [DFG_OP_DROPOUT_TRAIN] = dfg_vjp_dropout_train,
};

dfg_vjp_rule dfg_vjp_rule_for(dfg_op op)
{
    return (unsigned)op < DFG_OP_COUNT ? rules[op] : NULL;
}

/* needs[v] for every value: the wrt values (f32) and every floating-point
 * value computed from them, in whatever float dtype it is stored. */
static dfg_status mark_needs(const dfg_graph *g, const int32_t *wrt,
                             int32_t n_wrt, uint8_t *needs)
{
    for (int32_t i = 0; i < n_wrt; i++) {
        if (wrt[i] < 0 || wrt[i] >= g->n_values)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "autodiff: value %d is not in the graph",
                             (int)wrt[i]);
        if (g->values[wrt[i]].type.dtype != DFG_F32)
            return dfg_error(DFG_ERR_DTYPE,
                             "autodiff: '%s' has dtype %s; gradients are "
                             "computed in f32", g->values[wrt[i]].name,
                             dfg_dtype_name(g->values[wrt[i]].type.dtype));
        needs[wrt[i]] = 1;
    }
    for (int32_t n = 0; n < g->n_nodes; n++) {
        const dfg_ir_node *node = &g->nodes[n];
        int any = 0;
        for (int32_t i = 0; !node->dead && i < node->n_inputs; i++)
            any |= node->inputs[i] >= 0 && needs[node->inputs[i]];
        /* An index or a mask output: no gradient flows. */
        for (int32_t i = 0; any && i < node->n_outputs; i++)
            needs[node->outputs[i]] =
                dfg_dtype_is_float(g->values[node->outputs[i]].type.dtype);
    }
    return DFG_OK;
}

/* grad[v] += g, as a new add node when v already has a gradient; in the
 * dtype of the gradient already there (a value read in two dtypes gets
 * gradients in both). */
static void accumulate(dfg_ad *ad, int32_t *grad, int32_t v, int32_t g)
{
    if (g < 0)
        return;
    if (grad[v] < 0) {
        grad[v] = g;
        return;
    }
    dfg_dtype dtype = dfg_ad_type(ad, grad[v]).dtype;
    if (dfg_ad_type(ad, g).dtype != dtype)
        g = dfg_ad_cast(ad, g, dtype);
    grad[v] = dfg_ad_binary(ad, DFG_OP_ADD, grad[v], g);
}

/* The dtype of the node's first float output: its gradients' and so its
 * rule's constants' dtype. */
static dfg_dtype gradient_dtype(const dfg_graph *g, const dfg_ir_node *node)
{
    for (int32_t i = 0; i < node->n_outputs; i++) {
        dfg_dtype dtype = g->values[node->outputs[i]].type.dtype;
        if (dfg_dtype_is_float(dtype))
            return dtype;
    }
    return DFG_F32;
}

static dfg_status differentiate_node(dfg_ad *ad, int32_t n, const uint8_t *needs,
                                     int32_t *grad)
{
    /* A copy: adding nodes moves the node array (not the operand arrays). */
    dfg_ir_node node = ad->graph->nodes[n];
    int32_t dy[DFG_MAX_SPLIT], dx[DFG_MAX_SPLIT * 2];
    int any_dy = 0, any_need = 0;
    for (int32_t i = 0; i < node.n_outputs && i < DFG_MAX_SPLIT; i++) {
        dy[i] = grad[node.outputs[i]];
        any_dy |= dy[i] >= 0;
    }
    for (int32_t i = 0; i < node.n_inputs; i++)
        any_need |= node.inputs[i] >= 0 && needs[node.inputs[i]];
    if (node.dead || !any_dy || !any_need)
        return DFG_OK;
    dfg_vjp_rule rule = dfg_vjp_rule_for(node.op);
    if (!rule)
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "autodiff: node '%s' (%s) lies between a trained "
                         "value and the loss, and %s is not differentiable "
                         "(docs/training.md)", node.name,
                         dfg_op_get(node.op)->name, dfg_op_get(node.op)->name);
    if (node.n_inputs > DFG_MAX_SPLIT * 2)
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "autodiff: node '%s' (%s) has %d inputs, at most %d "
                         "are differentiated", node.name,
                         dfg_op_get(node.op)->name, (int)node.n_inputs,
                         DFG_MAX_SPLIT * 2);
    for (int32_t i = 0; i < node.n_inputs; i++)
        dx[i] = -1;
    ad->node = n;
    ad->dtype = gradient_dtype(ad->graph, &node);
    rule(ad, &node, dy, dx);
    for (int32_t i = 0; i < node.n_inputs && ad->status == DFG_OK; i++)
        if (node.inputs[i] >= 0 && needs[node.inputs[i]])
            accumulate(ad, grad, node.inputs[i], dx[i]);
    if (ad->status != DFG_OK)
        return dfg_error_prefix(ad->status, "autodiff of node '%s' (%s)",
                                node.name, dfg_op_get(node.op)->name);
    return DFG_OK;
}

dfg_status dfg_autodiff(dfg_graph *graph, int32_t loss, const int32_t *wrt,
                        int32_t n_wrt, int32_t *grads)
{
    if (loss < 0 || loss >= graph->n_values)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "autodiff: the loss is not a value of the graph");
    const dfg_type loss_type = graph->values[loss].type;
    if (loss_type.dtype != DFG_F32 || dfg_type_numel(&loss_type) != 1)
        return dfg_error(DFG_ERR_SHAPE,
                         "autodiff: the loss '%s' must be one f32 element",
                         graph->values[loss].name);
    int32_t producer = graph->values[loss].producer;
    int32_t n_forward = graph->n_nodes;
    size_t n_values = (size_t)graph->n_values + 1;
    uint8_t *needs = dfg_calloc(&graph->allocator, n_values, 1);
    int32_t *grad = dfg_calloc(&graph->allocator, n_values, sizeof *grad);
    if (!needs || !grad) {
        dfg_free(&graph->allocator, needs);
        dfg_free(&graph->allocator, grad);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
    }
    dfg_status st = mark_needs(graph, wrt, n_wrt, needs);
    for (size_t v = 0; v < n_values; v++)
        grad[v] = -1;
    dfg_ad ad = {graph, DFG_OK, producer >= 0 ? producer : 0, DFG_F32};
    if (st == DFG_OK && needs[loss] && producer >= 0) {
        int32_t one = dfg_ad_scalar(&ad, 1.0f);
        grad[loss] = dfg_ad_reshape(&ad, one, &loss_type);
        st = ad.status;
    }
    /* Backward nodes are appended past n_forward; the walk never sees
     * them. The grad array covers the values that existed before, which
     * are the only ones the walk asks about. */
    for (int32_t n = producer; st == DFG_OK && n >= 0 && n < n_forward; n--)
        st = differentiate_node(&ad, n, needs, grad);
    for (int32_t i = 0; st == DFG_OK && i < n_wrt; i++)
        grads[i] = wrt[i] == loss ? grad[loss] : grad[wrt[i]];
    dfg_free(&graph->allocator, needs);
    dfg_free(&graph->allocator, grad);
    return st;
}
