/* The typed builder (include/dfg/builder.h): fills dfg_attrs and calls
 * dfg_graph_node(), which checks everything else. */
#include "dfg/builder.h"

#include <string.h>

#include "util/error.h"

static dfg_status record(dfg_graph *g, const char *op, const dfg_value *in,
                         int32_t n_in, const dfg_attrs *attrs, dfg_value *out,
                         int32_t n_out)
{
    return dfg_graph_node(g, op, NULL, in, n_in, attrs, out, n_out);
}

static dfg_status unary(dfg_graph *g, const char *op, dfg_value x,
                        const dfg_attrs *attrs, dfg_value *out)
{
    return record(g, op, &x, 1, attrs, out, 1);
}

static dfg_status binary(dfg_graph *g, const char *op, dfg_value a,
                         dfg_value b, dfg_value *out)
{
    const dfg_value in[2] = {a, b};
    return record(g, op, in, 2, NULL, out, 1);
}

/* Copies n entries of src into dst (capacity max), rejecting a count out
 * of range or a NULL array with entries, so no attribute array is read or
 * written out of bounds. */
static dfg_status copy_ints(const char *op, const char *what, int32_t n,
                            int32_t max, const int64_t *src, int64_t *dst)
{
    if (n < 0 || n > max)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "%s: %d %s given, expected 0 to %d", op, (int)n, what,
                         (int)max);
    if (n > 0 && !src)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "%s: %s is NULL but %d entries were promised", op,
                         what, (int)n);
    if (n > 0)
        memcpy(dst, src, (size_t)n * sizeof *src);
    return DFG_OK;
}

#define DFG_BINARY(fn)                                                     \
    dfg_status dfg_##fn(dfg_graph *g, dfg_value a, dfg_value b,            \
                        dfg_value *out)                                    \
    {                                                                      \
        return binary(g, #fn, a, b, out);                                  \
    }
DFG_BINARY(add)
DFG_BINARY(sub)
DFG_BINARY(mul)
DFG_BINARY(div)
DFG_BINARY(pow)
DFG_BINARY(max)
DFG_BINARY(min)
DFG_BINARY(equal)
DFG_BINARY(less)
DFG_BINARY(greater)
DFG_BINARY(matmul)
#undef DFG_BINARY

#define DFG_UNARY(fn)                                                      \
    dfg_status dfg_##fn(dfg_graph *g, dfg_value x, dfg_value *out)         \
    {                                                                      \
        return unary(g, #fn, x, NULL, out);                                \
    }
DFG_UNARY(neg)
DFG_UNARY(abs)
DFG_UNARY(exp)
DFG_UNARY(log)
DFG_UNARY(sqrt)
DFG_UNARY(reciprocal)
DFG_UNARY(relu)
DFG_UNARY(sigmoid)
DFG_UNARY(tanh)
DFG_UNARY(erf)
DFG_UNARY(identity)
DFG_UNARY(global_average_pool)
#undef DFG_UNARY

dfg_status dfg_where(dfg_graph *g, dfg_value cond, dfg_value x, dfg_value y,
                     dfg_value *out)
{
    const dfg_value in[3] = {cond, x, y};
    return record(g, "where", in, 3, NULL, out, 1);
}

dfg_status dfg_leaky_relu(dfg_graph *g, dfg_value x, float alpha,
                          dfg_value *out)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.alpha = alpha;
    return unary(g, "leaky_relu", x, &a, out);
}

dfg_status dfg_gelu(dfg_graph *g, dfg_value x, int32_t approximate,
                    dfg_value *out)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.approximate = approximate;
    return unary(g, "gelu", x, &a, out);
}

dfg_status dfg_clip(dfg_graph *g, dfg_value x, float min, float max,
                    dfg_value *out)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.clip_min = min;
    a.clip_max = max;
    return unary(g, "clip", x, &a, out);
}

dfg_status dfg_cast(dfg_graph *g, dfg_value x, dfg_dtype to, dfg_value *out)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.to = to;
    return unary(g, "cast", x, &a, out);
}

dfg_status dfg_gemm(dfg_graph *g, dfg_value a, dfg_value b, dfg_value c_or_none,
                    const dfg_gemm_params *params, dfg_value *out)
{
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    if (params) {
        attrs.alpha = params->alpha;
        attrs.beta = params->beta;
        attrs.trans_a = params->trans_a;
        attrs.trans_b = params->trans_b;
    }
    const dfg_value in[3] = {a, b, c_or_none};
    return record(g, "gemm", in, 3, &attrs, out, 1);
}

/* The window attributes shared by conv2d and the pools; 0 means 1. */
static void set_window(dfg_attrs *a, const int32_t strides[2],
                       const int32_t dilations[2], const int64_t pads[4])
{
    for (int i = 0; i < 2; i++) {
        a->strides[i] = strides[i] ? strides[i] : 1;
        a->dilations[i] = dilations[i] ? dilations[i] : 1;
    }
    memcpy(a->pads, pads, 4 * sizeof *pads);
}

dfg_status dfg_conv2d(dfg_graph *g, dfg_value x, dfg_value w,
                      dfg_value bias_or_none, const dfg_conv2d_params *params,
                      dfg_value *out)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    if (params) {
        set_window(&a, params->strides, params->dilations, params->pads);
        a.group = params->group ? params->group : 1;
    }
    const dfg_value in[3] = {x, w, bias_or_none};
    return record(g, "conv2d", in, 3, &a, out, 1);
}

static dfg_status pool(dfg_graph *g, const char *op, dfg_value x,
                       const dfg_pool_params *params, dfg_value *out)
{
    if (!params)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "%s: params is NULL (the kernel size is required)",
                         op);
    dfg_attrs a;
    dfg_attrs_init(&a);
    set_window(&a, params->strides, params->dilations, params->pads);
    a.kernel[0] = params->kernel[0];
    a.kernel[1] = params->kernel[1];
    a.ceil_mode = params->ceil_mode;
    a.count_include_pad = params->count_include_pad;
    return unary(g, op, x, &a, out);
}

dfg_status dfg_max_pool(dfg_graph *g, dfg_value x,
                        const dfg_pool_params *params, dfg_value *out)
{
    return pool(g, "max_pool", x, params, out);
}

dfg_status dfg_average_pool(dfg_graph *g, dfg_value x,
                            const dfg_pool_params *params, dfg_value *out)
{
    return pool(g, "average_pool", x, params, out);
}

dfg_status dfg_batch_norm(dfg_graph *g, dfg_value x, dfg_value scale,
                          dfg_value bias, dfg_value mean, dfg_value var,
                          float epsilon, dfg_value *out)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.epsilon = epsilon;
    const dfg_value in[5] = {x, scale, bias, mean, var};
    return record(g, "batch_norm", in, 5, &a, out, 1);
}

dfg_status dfg_layer_norm(dfg_graph *g, dfg_value x, dfg_value scale,
                          dfg_value bias_or_none, int32_t axis, float epsilon,
                          dfg_value *out)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.axis = axis;
    a.epsilon = epsilon;
    const dfg_value in[3] = {x, scale, bias_or_none};
    return record(g, "layer_norm", in, 3, &a, out, 1);
}

/* Ops whose only attribute is axis. */
static dfg_status with_axis(dfg_graph *g, const char *op, dfg_value x,
                            int32_t axis, dfg_value *out)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.axis = axis;
    return unary(g, op, x, &a, out);
}

dfg_status dfg_softmax(dfg_graph *g, dfg_value x, int32_t axis, dfg_value *out)
{
    return with_axis(g, "softmax", x, axis, out);
}

dfg_status dfg_log_softmax(dfg_graph *g, dfg_value x, int32_t axis,
                           dfg_value *out)
{
    return with_axis(g, "log_softmax", x, axis, out);
}

dfg_status dfg_flatten(dfg_graph *g, dfg_value x, int32_t axis, dfg_value *out)
{
    return with_axis(g, "flatten", x, axis, out);
}

/* Ops whose attribute is a list of axes (reductions, squeeze, unsqueeze). */
static dfg_status with_axes(dfg_graph *g, const char *op, dfg_value x,
                            int32_t n_axes, const int64_t *axes,
                            int32_t keepdims, dfg_value *out)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    dfg_status st = copy_ints(op, "axes", n_axes, DFG_MAX_RANK, axes, a.axes);
    if (st != DFG_OK)
        return st;
    a.n_axes = n_axes;
    a.keepdims = keepdims;
    return unary(g, op, x, &a, out);
}

dfg_status dfg_reduce_sum(dfg_graph *g, dfg_value x, int32_t n_axes,
                          const int64_t *axes, int32_t keepdims,
                          dfg_value *out)
{
    return with_axes(g, "reduce_sum", x, n_axes, axes, keepdims, out);
}

dfg_status dfg_reduce_mean(dfg_graph *g, dfg_value x, int32_t n_axes,
                           const int64_t *axes, int32_t keepdims,
                           dfg_value *out)
{
    return with_axes(g, "reduce_mean", x, n_axes, axes, keepdims, out);
}

dfg_status dfg_reduce_max(dfg_graph *g, dfg_value x, int32_t n_axes,
                          const int64_t *axes, int32_t keepdims,
                          dfg_value *out)
{
    return with_axes(g, "reduce_max", x, n_axes, axes, keepdims, out);
}

dfg_status dfg_squeeze(dfg_graph *g, dfg_value x, int32_t n_axes,
                       const int64_t *axes, dfg_value *out)
{
    return with_axes(g, "squeeze", x, n_axes, axes, 1, out);
}

dfg_status dfg_unsqueeze(dfg_graph *g, dfg_value x, int32_t n_axes,
                         const int64_t *axes, dfg_value *out)
{
    return with_axes(g, "unsqueeze", x, n_axes, axes, 1, out);
}

/* Ops whose attribute is a shape or a permutation (attrs.shape). */
static dfg_status with_shape(dfg_graph *g, const char *op, dfg_value x,
                             int32_t n, const int64_t *shape, dfg_value *out)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    dfg_status st = copy_ints(op, "shape", n, DFG_MAX_RANK, shape, a.shape);
    if (st != DFG_OK)
        return st;
    a.n_shape = n;
    return unary(g, op, x, &a, out);
}

dfg_status dfg_reshape(dfg_graph *g, dfg_value x, int32_t rank,
                       const int64_t *shape, dfg_value *out)
{
    return with_shape(g, "reshape", x, rank, shape, out);
}

dfg_status dfg_transpose(dfg_graph *g, dfg_value x, int32_t n_perm,
                         const int64_t *perm, dfg_value *out)
{
    return with_shape(g, "transpose", x, n_perm, perm, out);
}

dfg_status dfg_expand(dfg_graph *g, dfg_value x, int32_t rank,
                      const int64_t *shape, dfg_value *out)
{
    return with_shape(g, "expand", x, rank, shape, out);
}

dfg_status dfg_concat(dfg_graph *g, int32_t n_inputs, const dfg_value *inputs,
                      int32_t axis, dfg_value *out)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.axis = axis;
    return record(g, "concat", inputs, n_inputs, &a, out, 1);
}

dfg_status dfg_split(dfg_graph *g, dfg_value x, int32_t axis,
                     int32_t n_outputs, const int64_t *sizes_or_null,
                     dfg_value *outs)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.axis = axis;
    if (sizes_or_null) {
        dfg_status st = copy_ints("split", "sizes", n_outputs, DFG_MAX_SPLIT,
                                  sizes_or_null, a.split);
        if (st != DFG_OK)
            return st;
        a.n_split = n_outputs;
    }
    return record(g, "split", &x, 1, &a, outs, n_outputs);
}

dfg_status dfg_slice(dfg_graph *g, dfg_value x, int32_t n_axes,
                     const int64_t *axes, const int64_t *starts,
                     const int64_t *ends, const int64_t *steps_or_null,
                     dfg_value *out)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    dfg_status st = copy_ints("slice", "axes", n_axes, DFG_MAX_RANK, axes,
                              a.axes);
    if (st == DFG_OK)
        st = copy_ints("slice", "starts", n_axes, DFG_MAX_RANK, starts,
                       a.starts);
    if (st == DFG_OK)
        st = copy_ints("slice", "ends", n_axes, DFG_MAX_RANK, ends, a.ends);
    if (st != DFG_OK)
        return st;
    for (int32_t i = 0; i < n_axes; i++)
        a.steps[i] = steps_or_null ? steps_or_null[i] : 1;
    a.n_axes = n_axes;
    return unary(g, "slice", x, &a, out);
}

dfg_status dfg_gather(dfg_graph *g, dfg_value data, dfg_value indices,
                      int32_t axis, dfg_value *out)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.axis = axis;
    const dfg_value in[2] = {data, indices};
    return record(g, "gather", in, 2, &a, out, 1);
}

dfg_status dfg_pad(dfg_graph *g, dfg_value x, const int64_t *pads, float value,
                   dfg_value *out)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.pad_value = value;
    /* The pad count follows x's rank; an unknown x is left for
     * dfg_graph_node to report. */
    dfg_tensor_info info;
    if (g && dfg_graph_value_info(g, x, &info) == DFG_OK) {
        dfg_status st = copy_ints("pad", "pads", 2 * info.rank,
                                  2 * DFG_MAX_RANK, pads, a.pads);
        if (st != DFG_OK)
            return st;
    }
    return unary(g, "pad", x, &a, out);
}
