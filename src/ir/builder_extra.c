/* The typed builder's wrappers of the ops added for the ONNX front end
 * (include/dfg/builder.h): they fill dfg_attrs and call dfg_graph_node(),
 * which checks everything else. */
#include "dfg/builder.h"

#include <string.h>

#include "util/error.h"

#define DFG_UNARY_EXTRA(fn)                                                \
    dfg_status dfg_##fn(dfg_graph *g, dfg_value x, dfg_value *out)         \
    {                                                                      \
        return dfg_graph_node(g, #fn, NULL, &x, 1, NULL, out, 1);          \
    }
DFG_UNARY_EXTRA(floor)
DFG_UNARY_EXTRA(ceil)
DFG_UNARY_EXTRA(round)
DFG_UNARY_EXTRA(sin)
DFG_UNARY_EXTRA(cos)
DFG_UNARY_EXTRA(tan)
DFG_UNARY_EXTRA(asin)
DFG_UNARY_EXTRA(acos)
DFG_UNARY_EXTRA(atan)
DFG_UNARY_EXTRA(sinh)
DFG_UNARY_EXTRA(cosh)
DFG_UNARY_EXTRA(asinh)
DFG_UNARY_EXTRA(acosh)
DFG_UNARY_EXTRA(atanh)
#undef DFG_UNARY_EXTRA

dfg_status dfg_mod(dfg_graph *g, dfg_value a, dfg_value b, dfg_value *out)
{
    const dfg_value in[2] = {a, b};
    return dfg_graph_node(g, "mod", NULL, in, 2, NULL, out, 1);
}

dfg_status dfg_fmod(dfg_graph *g, dfg_value a, dfg_value b, dfg_value *out)
{
    const dfg_value in[2] = {a, b};
    return dfg_graph_node(g, "fmod", NULL, in, 2, NULL, out, 1);
}

static dfg_status arg_reduce(dfg_graph *g, const char *op, dfg_value x,
                             int32_t axis, int32_t keepdims, dfg_value *out)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.axis = axis;
    a.keepdims = keepdims;
    return dfg_graph_node(g, op, NULL, &x, 1, &a, out, 1);
}

dfg_status dfg_arg_max(dfg_graph *g, dfg_value x, int32_t axis,
                       int32_t keepdims, dfg_value *out)
{
    return arg_reduce(g, "arg_max", x, axis, keepdims, out);
}

dfg_status dfg_arg_min(dfg_graph *g, dfg_value x, int32_t axis,
                       int32_t keepdims, dfg_value *out)
{
    return arg_reduce(g, "arg_min", x, axis, keepdims, out);
}

dfg_status dfg_gather_elements(dfg_graph *g, dfg_value data,
                               dfg_value indices, int32_t axis,
                               dfg_value *out)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.axis = axis;
    const dfg_value in[2] = {data, indices};
    return dfg_graph_node(g, "gather_elements", NULL, in, 2, &a, out, 1);
}

dfg_status dfg_scatter_nd(dfg_graph *g, dfg_value data, dfg_value indices,
                          dfg_value updates, dfg_value *out)
{
    const dfg_value in[3] = {data, indices, updates};
    return dfg_graph_node(g, "scatter_nd", NULL, in, 3, NULL, out, 1);
}

dfg_status dfg_resize(dfg_graph *g, dfg_value x, int32_t rank,
                      const int64_t *sizes, const dfg_resize_params *params,
                      dfg_value *out)
{
    if (rank < 1 || rank > DFG_MAX_RANK || !sizes)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "resize: %d sizes%s, expected 1 to %d", (int)rank,
                         sizes ? "" : " (NULL)", DFG_MAX_RANK);
    dfg_attrs a;
    dfg_attrs_init(&a);
    memcpy(a.shape, sizes, (size_t)rank * sizeof *sizes);
    a.n_shape = rank;
    if (params) {
        a.resize_mode = params->mode;
        a.coordinates = params->coordinates;
        a.nearest_rounding = params->nearest_rounding;
        if (params->cubic_coeff_a != 0.0f)
            a.cubic_coeff_a = params->cubic_coeff_a;
        a.exclude_outside = params->exclude_outside;
        if (params->scales_or_null) {
            memcpy(a.scales, params->scales_or_null,
                   (size_t)rank * sizeof *a.scales);
            a.n_scales = rank;
        }
    }
    return dfg_graph_node(g, "resize", NULL, &x, 1, &a, out, 1);
}

dfg_status dfg_top_k(dfg_graph *g, dfg_value x, int64_t k, int32_t axis,
                     int32_t largest, int32_t sorted, dfg_value *values,
                     dfg_value *indices)
{
    if (!values || !indices)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "top_k: values and indices must not be NULL");
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.k = k;
    a.axis = axis;
    a.largest = largest;
    a.sorted = sorted;
    dfg_value outs[2];
    dfg_status st = dfg_graph_node(g, "top_k", NULL, &x, 1, &a, outs, 2);
    if (st == DFG_OK) {
        *values = outs[0];
        *indices = outs[1];
    }
    return st;
}

dfg_status dfg_dropout(dfg_graph *g, dfg_value x, float p, dfg_value *out)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.alpha = p;
    return dfg_graph_node(g, "dropout", NULL, &x, 1, &a, out, 1);
}
