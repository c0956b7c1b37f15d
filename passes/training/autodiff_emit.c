/* The graph builder of the vector-Jacobian rules (passes/training/autodiff.h):
 * thin, error-sticky wrappers over dfg_graph_add_node. Backward nodes are
 * named after the forward node they differentiate ("fc1/grad/mul_57"),
 * so plans and error messages say where each one comes from. */
#include "passes/training/autodiff.h"

#include <stdio.h>
#include <string.h>
#include "math/elementwise.h"
#include "util/error.h"

void dfg_ad_op_outputs(dfg_ad *ad, dfg_op op, const dfg_attrs *attrs,
                       const int32_t *inputs, int32_t n_inputs,
                       int32_t n_outputs, int32_t *outputs)
{
    for (int32_t i = 0; i < n_outputs; i++)
        outputs[i] = -1;
    if (ad->status != DFG_OK)
        return;
    for (int32_t i = 0; i < n_inputs; i++)
        if (inputs[i] < -1)
            return;
    char name[256];
    snprintf(name, sizeof name, "%.180s/grad/%s_%d",
             ad->graph->nodes[ad->node].name, dfg_op_get(op)->name,
             (int)ad->graph->n_nodes);
    ad->status = dfg_graph_add_node(ad->graph, op, name, inputs, n_inputs,
                                    attrs, n_outputs, outputs);
    for (int32_t i = 0; ad->status != DFG_OK && i < n_outputs; i++)
        outputs[i] = -1;
}

int32_t dfg_ad_op(dfg_ad *ad, dfg_op op, const dfg_attrs *attrs,
                  const int32_t *inputs, int32_t n_inputs)
{
    int32_t out;
    dfg_ad_op_outputs(ad, op, attrs, inputs, n_inputs, 1, &out);
    return out;
}

int32_t dfg_ad_unary(dfg_ad *ad, dfg_op op, int32_t x)
{
    return x < 0 ? -1 : dfg_ad_op(ad, op, NULL, &x, 1);
}

int32_t dfg_ad_binary(dfg_ad *ad, dfg_op op, int32_t a, int32_t b)
{
    if (a < 0 || b < 0)
        return -1;
    int32_t in[2] = {a, b};
    return dfg_ad_op(ad, op, NULL, in, 2);
}

int32_t dfg_ad_where(dfg_ad *ad, int32_t cond, int32_t a, int32_t b)
{
    if (cond < 0 || a < 0 || b < 0)
        return -1;
    int32_t in[3] = {cond, a, b};
    return dfg_ad_op(ad, DFG_OP_WHERE, NULL, in, 3);
}

int32_t dfg_ad_scalar(dfg_ad *ad, float value)
{
    if (ad->status != DFG_OK)
        return -1;
    char name[256];
    snprintf(name, sizeof name, "%.180s/grad/constant_%d",
             ad->graph->nodes[ad->node].name, (int)ad->graph->n_values);
    dfg_value handle;
    uint16_t narrow = ad->dtype == DFG_BF16 ? dfg_f32_to_bf16(value)
                                            : dfg_f32_to_f16(value);
    ad->status = dfg_graph_constant(
        ad->graph, name, ad->dtype, 0, NULL,
        ad->dtype == DFG_F32 ? (const void *)&value : (const void *)&narrow,
        &handle);
    return ad->status == DFG_OK ? dfg_graph_index(ad->graph, handle) : -1;
}

int32_t dfg_ad_cast(dfg_ad *ad, int32_t x, dfg_dtype dtype)
{
    if (x < 0 || dfg_ad_type(ad, x).dtype == dtype)
        return x;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.to = dtype;
    return dfg_ad_op(ad, DFG_OP_CAST, &attrs, &x, 1);
}

dfg_type dfg_ad_type(const dfg_ad *ad, int32_t value)
{
    if (value < 0)
        return (dfg_type){DFG_F32, -1, {0}, 0};
    return ad->graph->values[value].type;
}

static int32_t with_shape(dfg_ad *ad, dfg_op op, int32_t x,
                          const dfg_type *like)
{
    if (x < 0)
        return -1;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.n_shape = like->rank;
    memcpy(attrs.shape, like->shape, sizeof attrs.shape);
    return dfg_ad_op(ad, op, &attrs, &x, 1);
}

int32_t dfg_ad_reshape(dfg_ad *ad, int32_t x, const dfg_type *like)
{
    dfg_type t = dfg_ad_type(ad, x);
    if (x >= 0 && dfg_type_equal(&t, like))
        return x;
    return with_shape(ad, DFG_OP_RESHAPE, x, like);
}

int32_t dfg_ad_expand(dfg_ad *ad, int32_t x, const dfg_type *like)
{
    dfg_type t = dfg_ad_type(ad, x);
    if (x >= 0 && dfg_type_equal(&t, like))
        return x;
    return with_shape(ad, DFG_OP_EXPAND, x, like);
}

int32_t dfg_ad_reduce(dfg_ad *ad, dfg_op op, int32_t x, int32_t n_axes,
                      const int64_t *axes, int keepdims)
{
    if (x < 0)
        return -1;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.n_axes = n_axes;
    memcpy(attrs.axes, axes, (size_t)n_axes * sizeof *axes);
    attrs.keepdims = keepdims;
    return dfg_ad_op(ad, op, &attrs, &x, 1);
}

int32_t dfg_ad_sum_to(dfg_ad *ad, int32_t g, const dfg_type *operand)
{
    if (g < 0)
        return -1;
    dfg_type t = dfg_ad_type(ad, g);
    int32_t lead = t.rank - operand->rank;
    int64_t axes[DFG_MAX_RANK];
    int32_t n_axes = 0;
    for (int32_t d = 0; d < t.rank; d++)
        if (d < lead || (operand->shape[d - lead] == 1 && t.shape[d] != 1))
            axes[n_axes++] = d;
    int32_t sum = n_axes ? dfg_ad_reduce(ad, DFG_OP_REDUCE_SUM, g, n_axes,
                                         axes, 1)
                         : g;
    return dfg_ad_reshape(ad, sum, operand);
}

dfg_attrs dfg_ad_attrs_with_shape(const dfg_attrs *attrs, const dfg_type *t)
{
    dfg_attrs out = *attrs;
    out.n_shape = t->rank;
    memcpy(out.shape, t->shape, sizeof out.shape);
    return out;
}
