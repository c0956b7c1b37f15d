/* Shape rules of the ops added for the ONNX front end: arg_max / arg_min,
 * gather_elements and scatter_nd (the unary math ops and mod use the
 * unary and binary rules). */
#include "error.h"
#include "op_table.h"
#include "shape_rules.h"

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
