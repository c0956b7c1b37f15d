/* Vector-Jacobian rules of the data-movement ops: each moves the gradient
 * back to where the forward op read it. */
#include "passes/training/autodiff.h"

/* reshape, flatten, squeeze, unsqueeze, identity: the same elements in
 * the same order. */
void dfg_vjp_view(dfg_ad *ad, const dfg_ir_node *node, const int32_t *dy,
                  int32_t *dx)
{
    dfg_type tx = dfg_ad_type(ad, node->inputs[0]);
    dx[0] = dfg_ad_reshape(ad, dy[0], &tx);
}

/* The inverse permutation. */
void dfg_vjp_transpose(dfg_ad *ad, const dfg_ir_node *node, const int32_t *dy,
                       int32_t *dx)
{
    int32_t rank = dfg_ad_type(ad, node->inputs[0]).rank;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.n_shape = rank;
    for (int32_t d = 0; d < rank; d++) {
        int64_t from = node->attrs.n_shape ? node->attrs.shape[d] : rank - 1 - d;
        if (from < 0)
            from += rank;
        attrs.shape[from] = d;
    }
    dx[0] = dfg_ad_op(ad, DFG_OP_TRANSPOSE, &attrs, &dy[0], 1);
}

static int32_t slice_axis(dfg_ad *ad, int32_t g, int64_t axis, int64_t start,
                          int64_t end)
{
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.n_axes = 1;
    attrs.axes[0] = axis;
    attrs.starts[0] = start;
    attrs.ends[0] = end;
    attrs.steps[0] = 1;
    return g < 0 ? -1 : dfg_ad_op(ad, DFG_OP_SLICE, &attrs, &g, 1);
}

/* Each input gets its own range of the gradient along the axis. */
void dfg_vjp_concat(dfg_ad *ad, const dfg_ir_node *node, const int32_t *dy,
                    int32_t *dx)
{
    int32_t rank = dfg_ad_type(ad, node->inputs[0]).rank;
    int64_t axis = node->attrs.axis < 0 ? node->attrs.axis + rank
                                        : node->attrs.axis;
    int64_t start = 0;
    for (int32_t i = 0; i < node->n_inputs; i++) {
        int64_t len = dfg_ad_type(ad, node->inputs[i]).shape[axis];
        dx[i] = slice_axis(ad, dy[0], axis, start, start + len);
        start += len;
    }
}

/* The outputs' gradients side by side again; an output nobody used
 * contributes zeros. */
void dfg_vjp_split(dfg_ad *ad, const dfg_ir_node *node, const int32_t *dy,
                   int32_t *dx)
{
    int32_t parts[DFG_MAX_SPLIT];
    for (int32_t i = 0; i < node->n_outputs; i++) {
        dfg_type t = dfg_ad_type(ad, node->outputs[i]);
        parts[i] = dy[i] >= 0 ? dy[i]
                              : dfg_ad_expand(ad, dfg_ad_scalar(ad, 0.0f), &t);
    }
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.axis = node->attrs.axis;
    dx[0] = dfg_ad_op(ad, DFG_OP_CONCAT, &attrs, parts, node->n_outputs);
}

void dfg_vjp_slice(dfg_ad *ad, const dfg_ir_node *node, const int32_t *dy,
                   int32_t *dx)
{
    dfg_type tx = dfg_ad_type(ad, node->inputs[0]);
    dfg_attrs attrs = dfg_ad_attrs_with_shape(&node->attrs, &tx);
    dx[0] = dfg_ad_op(ad, DFG_OP_SLICE_GRAD, &attrs, &dy[0], 1);
}

void dfg_vjp_expand(dfg_ad *ad, const dfg_ir_node *node, const int32_t *dy,
                    int32_t *dx)
{
    dfg_type tx = dfg_ad_type(ad, node->inputs[0]);
    dx[0] = dfg_ad_sum_to(ad, dy[0], &tx);
}

/* The data's gradient; the indices have none. */
void dfg_vjp_gather(dfg_ad *ad, const dfg_ir_node *node, const int32_t *dy,
                    int32_t *dx)
{
    dfg_type data = dfg_ad_type(ad, node->inputs[0]);
    dfg_attrs attrs = dfg_ad_attrs_with_shape(&node->attrs, &data);
    int32_t in[2] = {dy[0], node->inputs[1]};
    dx[0] = dfg_ad_op(ad, DFG_OP_GATHER_GRAD, &attrs, in, 2);
}

/* The unpadded middle of the gradient. */
void dfg_vjp_pad(dfg_ad *ad, const dfg_ir_node *node, const int32_t *dy,
                 int32_t *dx)
{
    dfg_type tx = dfg_ad_type(ad, node->inputs[0]);
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.n_axes = tx.rank;
    for (int32_t d = 0; d < tx.rank; d++) {
        attrs.axes[d] = d;
        attrs.starts[d] = node->attrs.pads[d];
        attrs.ends[d] = node->attrs.pads[d] + tx.shape[d];
        attrs.steps[d] = 1;
    }
    dx[0] = dy[0] < 0 ? -1 : dfg_ad_op(ad, DFG_OP_SLICE, &attrs, &dy[0], 1);
}
