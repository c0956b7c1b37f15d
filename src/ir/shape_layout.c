/* Shape rules of the data-movement ops: reshape, flatten, transpose,
 * concat, split, slice, squeeze, unsqueeze, expand, gather and pad. */
#include <string.h>

#include "ir/op_table.h"
#include "ir/shape_rules.h"
#include "util/error.h"

/* Attribute counts index fixed arrays: reject any that would read past
 * them before looking at the entries. */
static dfg_status check_count(const char *what, int32_t n, int32_t max)
{
    if (n < 0 || n > max)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "%s = %d is out of range (0 to %d)", what, (int)n,
                         (int)max);
    return DFG_OK;
}

/* attrs->axes[0..n_axes) normalised against rank (each in range, none
 * twice). */
static dfg_status attr_axes(const dfg_attrs *a, int32_t rank, int32_t *axes)
{
    dfg_status st = check_count("n_axes", a->n_axes, rank);
    return st == DFG_OK ? dfg_shape_axes(a->axes, a->n_axes, rank, axes) : st;
}

/* Product of dims[0..n); -1 past DFG_MAX_ELEMENTS. */
static int64_t dims_product(const int64_t *dims, int32_t n)
{
    dfg_type t = {DFG_F32, n, {0}, 0};
    memcpy(t.shape, dims, (size_t)n * sizeof *dims);
    return dfg_type_numel(&t);
}

dfg_status dfg_shape_reshape(const dfg_attrs *a, const dfg_type *in,
                             int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_in, (void)n_out;
    dfg_status st = check_count("n_shape", a->n_shape, DFG_MAX_RANK);
    if (st != DFG_OK)
        return st;
    out[0].dtype = in[0].dtype;
    out[0].rank = a->n_shape;
    int32_t inferred = -1;
    for (int32_t i = 0; i < a->n_shape; i++) {
        int64_t d = a->shape[i];
        if (d == -1 && inferred < 0) {
            inferred = i;
            d = 1;
        } else if (d == 0 && i < in[0].rank) {
            d = in[0].shape[i];
        } else if (d <= 0) {
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "shape[%d] = %lld: entries must be positive, 0 "
                             "(copy input dim, within rank %d) or a single -1",
                             (int)i, (long long)d, (int)in[0].rank);
        }
        out[0].shape[i] = d;
    }
    int64_t want = dfg_type_numel(&in[0]);
    int64_t known = dfg_type_numel(&out[0]);
    if (known < 0)
        return dfg_shape_check_size(&out[0]);
    if (inferred >= 0) {
        if (known == 0 || want % known != 0)
            return dfg_error(DFG_ERR_SHAPE,
                             "cannot infer shape[%d]: %lld elements are not "
                             "a multiple of the other dims' product %lld",
                             (int)inferred, (long long)want, (long long)known);
        out[0].shape[inferred] = want / known;
        known = want;
    }
    if (known != want)
        return dfg_error(DFG_ERR_SHAPE,
                         "shape %s holds %lld elements, the input %lld",
                         dfg_dims_format(out[0].rank, out[0].shape).text,
                         (long long)known, (long long)want);
    return DFG_OK;
}

dfg_status dfg_shape_flatten(const dfg_attrs *a, const dfg_type *in,
                             int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_in, (void)n_out;
    /* Unlike the other axis attributes, axis == rank is valid here (every
     * dim goes to the outer one). */
    int64_t axis = a->axis < 0 ? (int64_t)a->axis + in[0].rank : a->axis;
    if (axis < 0 || axis > in[0].rank)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "axis %d is out of range for rank %d (expects %d to "
                         "%d)", (int)a->axis, (int)in[0].rank,
                         -(int)in[0].rank, (int)in[0].rank);
    out[0].dtype = in[0].dtype;
    out[0].rank = 2;
    out[0].shape[0] = dims_product(in[0].shape, (int32_t)axis);
    out[0].shape[1] = dims_product(in[0].shape + axis,
                                   in[0].rank - (int32_t)axis);
    return dfg_shape_check_size(&out[0]);
}

dfg_status dfg_shape_transpose(const dfg_attrs *a, const dfg_type *in,
                               int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_in, (void)n_out;
    int32_t rank = in[0].rank;
    if (a->n_shape != 0 && a->n_shape != rank)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "perm has %d entries, expected %d (the rank) or 0",
                         (int)a->n_shape, (int)rank);
    unsigned seen = 0;
    out[0] = in[0];
    for (int32_t i = 0; i < rank; i++) {
        int64_t p = a->n_shape ? a->shape[i] : rank - 1 - i;
        if (p < 0 || p >= rank || (seen & (1u << p)))
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "perm %s is not a permutation of 0..%d",
                             dfg_dims_format(rank, a->shape).text,
                             (int)rank - 1);
        seen |= 1u << p;
        out[0].shape[i] = in[0].shape[p];
    }
    return DFG_OK;
}

dfg_status dfg_shape_concat(const dfg_attrs *a, const dfg_type *in,
                            int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_out;
    int32_t axis;
    dfg_status st = dfg_shape_axis(a->axis, in[0].rank, "axis", &axis);
    if (st != DFG_OK)
        return st;
    out[0] = in[0];
    for (int32_t i = 1; i < n_in; i++) {
        if (in[i].rank < 0)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT, "input %d is absent",
                             (int)i);
        if ((st = dfg_shape_same_dtype(in, 0, i)) != DFG_OK)
            return st;
        int same = in[i].rank == in[0].rank;
        for (int32_t d = 0; same && d < in[0].rank; d++)
            same = d == axis || in[i].shape[d] == in[0].shape[d];
        if (!same)
            return dfg_error(DFG_ERR_SHAPE,
                             "input %d has shape %s, expected input 0's %s "
                             "except along axis %d", (int)i,
                             dfg_dims_format(in[i].rank, in[i].shape).text,
                             dfg_dims_format(in[0].rank, in[0].shape).text,
                             (int)axis);
        if (dfg_add_dims(out[0].shape[axis], in[i].shape[axis],
                         &out[0].shape[axis]) != 0)
            return dfg_error(DFG_ERR_OVERFLOW,
                             "the concatenated axis %d exceeds 2^48", (int)axis);
    }
    return dfg_shape_check_size(&out[0]);
}

dfg_status dfg_shape_split(const dfg_attrs *a, const dfg_type *in,
                           int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_in;
    int32_t axis;
    dfg_status st = dfg_shape_axis(a->axis, in[0].rank, "axis", &axis);
    if (st != DFG_OK)
        return st;
    int64_t dim = in[0].shape[axis];
    if (a->n_split == 0 && dim % n_out != 0)
        return dfg_error(DFG_ERR_SHAPE,
                         "axis %d of size %lld does not split evenly into %d "
                         "outputs (give the sizes in split)", (int)axis,
                         (long long)dim, (int)n_out);
    if (a->n_split != 0 && a->n_split != n_out)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "n_split = %d sizes given for %d outputs",
                         (int)a->n_split, (int)n_out);
    int64_t total = 0;
    for (int32_t i = 0; i < n_out; i++) {
        int64_t size = a->n_split ? a->split[i] : dim / n_out;
        if (size < 0 || dfg_add_dims(total, size, &total) != 0)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "split[%d] = %lld is negative or too large",
                             (int)i, (long long)size);
        out[i] = in[0];
        out[i].shape[axis] = size;
    }
    if (total != dim)
        return dfg_error(DFG_ERR_SHAPE,
                         "split sizes sum to %lld, axis %d has size %lld",
                         (long long)total, (int)axis, (long long)dim);
    return DFG_OK;
}

dfg_status dfg_shape_slice(const dfg_attrs *a, const dfg_type *in,
                           int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_in, (void)n_out;
    int32_t axes[DFG_MAX_RANK];
    dfg_status st = attr_axes(a, in[0].rank, axes);
    if (st != DFG_OK)
        return st;
    out[0] = in[0];
    for (int32_t i = 0; i < a->n_axes; i++) {
        if (a->steps[i] == 0)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "steps[%d] is 0 (axis %d)", (int)i, (int)axes[i]);
        int64_t first;
        dfg_slice_range(in[0].shape[axes[i]], a->starts[i], a->ends[i],
                        a->steps[i], &first, &out[0].shape[axes[i]]);
    }
    return DFG_OK;
}

dfg_status dfg_shape_squeeze(const dfg_attrs *a, const dfg_type *in,
                             int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_in, (void)n_out;
    int32_t axes[DFG_MAX_RANK];
    dfg_status st = attr_axes(a, in[0].rank, axes);
    if (st != DFG_OK)
        return st;
    unsigned drop = 0;
    for (int32_t i = 0; i < a->n_axes; i++) {
        if (in[0].shape[axes[i]] != 1)
            return dfg_error(DFG_ERR_SHAPE,
                             "axis %d has size %lld, only size-1 axes can be "
                             "squeezed", (int)axes[i],
                             (long long)in[0].shape[axes[i]]);
        drop |= 1u << axes[i];
    }
    /* No axes: drop every size-1 axis, as ONNX does. */
    for (int32_t d = 0; a->n_axes == 0 && d < in[0].rank; d++)
        if (in[0].shape[d] == 1)
            drop |= 1u << d;
    out[0].dtype = in[0].dtype;
    out[0].rank = 0;
    for (int32_t d = 0; d < in[0].rank; d++)
        if (!(drop & (1u << d)))
            out[0].shape[out[0].rank++] = in[0].shape[d];
    return DFG_OK;
}

dfg_status dfg_shape_unsqueeze(const dfg_attrs *a, const dfg_type *in,
                               int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_in, (void)n_out;
    int32_t axes[DFG_MAX_RANK];
    dfg_status st = check_count("n_axes", a->n_axes, DFG_MAX_RANK - in[0].rank);
    if (st != DFG_OK)
        return st;
    int32_t rank = in[0].rank + a->n_axes;
    if ((st = dfg_shape_axes(a->axes, a->n_axes, rank, axes)) != DFG_OK)
        return st;
    unsigned inserted = 0;
    for (int32_t i = 0; i < a->n_axes; i++)
        inserted |= 1u << axes[i];
    out[0].dtype = in[0].dtype;
    out[0].rank = rank;
    for (int32_t d = 0, src = 0; d < rank; d++)
        out[0].shape[d] = (inserted & (1u << d)) ? 1 : in[0].shape[src++];
    return DFG_OK;
}

dfg_status dfg_shape_expand(const dfg_attrs *a, const dfg_type *in,
                            int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_in, (void)n_out;
    dfg_status st = check_count("n_shape", a->n_shape, DFG_MAX_RANK);
    if (st != DFG_OK)
        return st;
    for (int32_t i = 0; i < a->n_shape; i++)
        if (a->shape[i] < 0)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "shape[%d] = %lld is negative", (int)i,
                             (long long)a->shape[i]);
    st = dfg_shape_broadcast(in[0].rank, in[0].shape, a->n_shape, a->shape,
                             &out[0]);
    out[0].dtype = in[0].dtype;
    return st == DFG_OK ? dfg_shape_check_size(&out[0]) : st;
}

dfg_status dfg_shape_gather(const dfg_attrs *a, const dfg_type *in,
                            int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_in, (void)n_out;
    const dfg_type *data = &in[0], *indices = &in[1];
    if (indices->dtype != DFG_I32 && indices->dtype != DFG_I64)
        return dfg_error(DFG_ERR_DTYPE,
                         "input 1 (indices) has dtype %s, expected i32 or i64",
                         dfg_dtype_name(indices->dtype));
    int32_t axis;
    dfg_status st = dfg_shape_axis(a->axis, data->rank, "axis", &axis);
    if (st != DFG_OK)
        return st;
    int32_t rank = data->rank + indices->rank - 1;
    if (rank > DFG_MAX_RANK)
        return dfg_error(DFG_ERR_SHAPE,
                         "the output would have rank %d (data %d + indices %d "
                         "- 1), more than %d", (int)rank, (int)data->rank,
                         (int)indices->rank, DFG_MAX_RANK);
    out[0].dtype = data->dtype;
    out[0].rank = 0;
    for (int32_t d = 0; d < axis; d++)
        out[0].shape[out[0].rank++] = data->shape[d];
    for (int32_t d = 0; d < indices->rank; d++)
        out[0].shape[out[0].rank++] = indices->shape[d];
    for (int32_t d = axis + 1; d < data->rank; d++)
        out[0].shape[out[0].rank++] = data->shape[d];
    return dfg_shape_check_size(&out[0]);
}

dfg_status dfg_shape_pad(const dfg_attrs *a, const dfg_type *in,
                         int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_in, (void)n_out;
    int32_t rank = in[0].rank;
    out[0] = in[0];
    for (int32_t d = 0; d < rank; d++) {
        int64_t begin = a->pads[d], end = a->pads[rank + d];
        if (begin < 0 || end < 0)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "pads for axis %d are (%lld, %lld); negative pads "
                             "are not supported", (int)d, (long long)begin,
                             (long long)end);
        if (dfg_add_dims(out[0].shape[d], begin, &out[0].shape[d]) != 0 ||
            dfg_add_dims(out[0].shape[d], end, &out[0].shape[d]) != 0)
            return dfg_error(DFG_ERR_OVERFLOW,
                             "padded axis %d exceeds 2^48 (pads %lld, %lld)",
                             (int)d, (long long)begin, (long long)end);
    }
    return dfg_shape_check_size(&out[0]);
}

dfg_status dfg_shape_put_rows(const dfg_attrs *a, const dfg_type *in,
                              int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_out;
    const dfg_type *part = &in[n_in - 1];
    if (a->n_axes != 1 || a->axes[0] != 2 || part->rank != 4)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "put_rows writes the rows "
                         "(axes {2}) of a 4-D part, not %d axes of a rank %d "
                         "one", (int)a->n_axes, (int)part->rank);
    int64_t at = a->starts[0], rows;
    if (n_in == 2) {
        if (in[0].rank != 4 || in[0].dtype != part->dtype ||
            in[0].layout != part->layout || in[0].shape[0] != part->shape[0] ||
            in[0].shape[1] != part->shape[1] ||
            in[0].shape[3] != part->shape[3])
            return dfg_error(DFG_ERR_SHAPE, "put_rows: the part's type is "
                             "not the whole's but for its rows");
        rows = in[0].shape[2];
    } else if (a->n_shape == 1) {
        rows = a->shape[0];
    } else {
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "put_rows without a whole "
                         "needs its rows (shape, 1 entry), not %d entries",
                         (int)a->n_shape);
    }
    if (at < 0 || rows < 0 || at > rows || part->shape[2] > rows - at)
        return dfg_error(DFG_ERR_SHAPE, "put_rows: %lld rows at row %lld do "
                         "not fit in %lld", (long long)part->shape[2],
                         (long long)at, (long long)rows);
    out[0] = *part;
    out[0].shape[2] = rows;
    return dfg_shape_check_size(&out[0]);
}
