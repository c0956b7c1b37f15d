/* Shape rules of the ops added for the ONNX front end: arg_max / arg_min,
 * gather_elements, scatter_nd, resize and top_k (the unary math ops and
 * mod use the unary and binary rules), and resize's FLOP count. */
#include <math.h>

#include "ir/op_table.h"
#include "ir/shape_rules.h"
#include "util/error.h"

/* arg_max, arg_min: the index (i64) of the extreme along attrs.axis, the
 * axis kept as size 1 when attrs.keepdims. */
dfg_status dfg_shape_arg_reduce(const dfg_attrs *a, const dfg_type *in,
                                int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_in, (void)n_out;
    int32_t axis;
    dfg_status st = dfg_shape_axis(a->axis, in[0].rank, "axis", &axis);
    if (st != DFG_OK)
        return st;
    if (in[0].shape[axis] == 0)
        return dfg_error(DFG_ERR_SHAPE, "axis %d is empty: no extreme to "
                         "index", (int)axis);
    out[0].dtype = DFG_I64;
    out[0].rank = 0;
    for (int32_t d = 0; d < in[0].rank; d++) {
        if (d != axis)
            out[0].shape[out[0].rank++] = in[0].shape[d];
        else if (a->keepdims)
            out[0].shape[out[0].rank++] = 1;
    }
    return DFG_OK;
}

static dfg_status integer_indices(const dfg_type *indices)
{
    if (indices->dtype != DFG_I32 && indices->dtype != DFG_I64)
        return dfg_error(DFG_ERR_DTYPE,
                         "input 1 (indices) has dtype %s, expected i32 or i64",
                         dfg_dtype_name(indices->dtype));
    return DFG_OK;
}

/* gather_elements: out[p] = data[p with p[axis] = indices[p]]; the output
 * has the indices' shape, which fits inside data's off the axis. */
dfg_status dfg_shape_gather_elements(const dfg_attrs *a, const dfg_type *in,
                                     int32_t n_in, dfg_type *out,
                                     int32_t n_out)
{
    (void)n_in, (void)n_out;
    int32_t axis;
    dfg_status st = integer_indices(&in[1]);
    if (st == DFG_OK)
        st = dfg_shape_axis(a->axis, in[0].rank, "axis", &axis);
    if (st != DFG_OK)
        return st;
    if (in[1].rank != in[0].rank)
        return dfg_error(DFG_ERR_SHAPE, "indices have rank %d, data %d",
                         (int)in[1].rank, (int)in[0].rank);
    for (int32_t d = 0; d < in[0].rank; d++)
        if (d != axis && in[1].shape[d] > in[0].shape[d])
            return dfg_error(DFG_ERR_SHAPE,
                             "indices %s exceed data %s on axis %d",
                             dfg_dims_format(in[1].rank, in[1].shape).text,
                             dfg_dims_format(in[0].rank, in[0].shape).text,
                             (int)d);
    out[0] = in[1];
    out[0].dtype = in[0].dtype;
    return DFG_OK;
}

/* scatter_nd: data [d0..dr), indices [i0..iq-1, k] with k <= r, updates
 * [i0..iq-1, dk..dr); the output is data's type. */
dfg_status dfg_shape_scatter_nd(const dfg_attrs *a, const dfg_type *in,
                                int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)a, (void)n_in, (void)n_out;
    const dfg_type *data = &in[0], *indices = &in[1], *updates = &in[2];
    dfg_status st = integer_indices(indices);
    if (st == DFG_OK)
        st = dfg_shape_same_dtype(in, 0, 2);
    if (st != DFG_OK)
        return st;
    if (indices->rank < 1)
        return dfg_error(DFG_ERR_SHAPE, "indices must have rank >= 1");
    int64_t k = indices->shape[indices->rank - 1];
    int32_t want = indices->rank - 1 + data->rank - (int32_t)k;
    int ok = k >= 1 && k <= data->rank && updates->rank == want;
    for (int32_t d = 0; ok && d < indices->rank - 1; d++)
        ok = updates->shape[d] == indices->shape[d];
    for (int32_t d = (int32_t)k; ok && d < data->rank; d++)
        ok = updates->shape[indices->rank - 1 + d - k] == data->shape[d];
    if (!ok)
        return dfg_error(DFG_ERR_SHAPE,
                         "data %s, indices %s and updates %s do not fit "
                         "(updates must be indices.shape[:-1] + "
                         "data.shape[indices.shape[-1]:])",
                         dfg_dims_format(data->rank, data->shape).text,
                         dfg_dims_format(indices->rank, indices->shape).text,
                         dfg_dims_format(updates->rank, updates->shape).text);
    out[0] = *data;
    return DFG_OK;
}

static int is_float(dfg_dtype dtype)
{
    return ((DFG_TYPES_FLOAT >> dtype) & 1u) != 0;
}

/* resize: the output has input 0's dtype and attrs.shape; the sampling
 * attributes must name known modes, and scales (if given) be positive. */
dfg_status dfg_shape_resize(const dfg_attrs *a, const dfg_type *in,
                            int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_in, (void)n_out;
    const dfg_type *x = &in[0];
    if (x->rank < 1)
        return dfg_error(DFG_ERR_SHAPE, "resize needs rank >= 1");
    if ((uint32_t)a->resize_mode >= DFG_RESIZE_MODE_COUNT ||
        (uint32_t)a->coordinates >= DFG_RESIZE_COORDINATES_COUNT ||
        (uint32_t)a->nearest_rounding >= DFG_RESIZE_NEAREST_COUNT ||
        (a->exclude_outside != 0 && a->exclude_outside != 1) ||
        !isfinite(a->cubic_coeff_a))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "resize_mode %d, coordinates %d, nearest_rounding %d, "
                         "exclude_outside %d, cubic_coeff_a %g",
                         (int)a->resize_mode, (int)a->coordinates,
                         (int)a->nearest_rounding, (int)a->exclude_outside,
                         (double)a->cubic_coeff_a);
    if (a->resize_mode != DFG_RESIZE_NEAREST && !is_float(x->dtype))
        return dfg_error(DFG_ERR_DTYPE, "linear and cubic resize need a float "
                         "input, not %s", dfg_dtype_name(x->dtype));
    if (a->n_shape != x->rank || (a->n_scales != 0 && a->n_scales != x->rank))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "%d output sizes and %d scales for an input of rank "
                         "%d (sizes: one per axis; scales: none or one per "
                         "axis)", (int)a->n_shape, (int)a->n_scales,
                         (int)x->rank);
    *out = *x;
    for (int32_t d = 0; d < x->rank; d++) {
        int64_t size = a->shape[d];
        if (size < 0 || size > DFG_MAX_ELEMENTS || (x->shape[d] == 0 && size))
            return dfg_error(DFG_ERR_SHAPE, "output size %lld on axis %d of "
                             "input %s", (long long)size, (int)d,
                             dfg_dims_format(x->rank, x->shape).text);
        if (a->n_scales && !(a->scales[d] > 0.0f && isfinite(a->scales[d])))
            return dfg_error(DFG_ERR_INVALID_ARGUMENT, "scale %g on axis %d",
                             (double)a->scales[d], (int)d);
        out->shape[d] = size;
    }
    return dfg_shape_check_size(out);
}

/* top_k: values (input 0's dtype) and indices (i64), both the input's
 * shape with attrs.k along attrs.axis. */
dfg_status dfg_shape_top_k(const dfg_attrs *a, const dfg_type *in,
                           int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_in, (void)n_out;
    int32_t axis;
    dfg_status st = dfg_shape_axis(a->axis, in[0].rank, "axis", &axis);
    if (st != DFG_OK)
        return st;
    if (a->k < 0 || a->k > in[0].shape[axis] ||
        (a->largest != 0 && a->largest != 1) ||
        (a->sorted != 0 && a->sorted != 1))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "k %lld, largest %d, sorted %d on axis %d of %s (k "
                         "must lie in [0, %lld])", (long long)a->k,
                         (int)a->largest, (int)a->sorted, (int)axis,
                         dfg_dims_format(in[0].rank, in[0].shape).text,
                         (long long)in[0].shape[axis]);
    out[0] = in[0];
    out[0].shape[axis] = a->k;
    out[1] = out[0];
    out[1].dtype = DFG_I64;
    return DFG_OK;
}

/* resize: a multiply-add per tap; an axis that changes size reads 2
 * (linear) or 4 (cubic) taps. nearest moves data only. */
int64_t dfg_flops_resize(const dfg_attrs *a, const dfg_type *in, int32_t n_in,
                         const dfg_type *out, int32_t n_out)
{
    (void)n_in, (void)n_out;
    if (a->resize_mode == DFG_RESIZE_NEAREST)
        return 0;
    int64_t per_element = 2;
    int64_t per_axis = a->resize_mode == DFG_RESIZE_CUBIC ? 4 : 2;
    for (int32_t d = 0; d < out->rank; d++)
        if (out->shape[d] != in->shape[d])
            per_element *= per_axis; /* at most 2 * 4^8 */
    int64_t flops, n = dfg_type_numel(out);
    return dfg_mul_checked(n < 0 ? 0 : n, per_element, &flops) == 0
               ? flops : INT64_MAX;
}
