#include "ir/shape_rules.h"

#include <stdio.h>

#include "util/error.h"

dfg_dims_text dfg_dims_format(int32_t rank, const int64_t *dims)
{
    dfg_dims_text t;
    size_t used = (size_t)snprintf(t.text, sizeof t.text, "[");
    for (int32_t i = 0; i < rank && i < DFG_MAX_RANK; i++)
        used += (size_t)snprintf(t.text + used, sizeof t.text - used, "%s%lld",
                                 i ? "," : "", (long long)dims[i]);
    snprintf(t.text + used, sizeof t.text - used, "]");
    return t;
}

dfg_status dfg_shape_axis(int64_t axis, int32_t rank, const char *what,
                          int32_t *out)
{
    if (axis < -(int64_t)rank || axis >= rank)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "%s %lld is out of range for rank %d (expects %d to %d)",
                         what, (long long)axis, (int)rank, -(int)rank,
                         (int)rank - 1);
    *out = (int32_t)(axis < 0 ? axis + rank : axis);
    return DFG_OK;
}

dfg_status dfg_shape_axes(const int64_t *axes, int32_t n, int32_t rank,
                          int32_t *out)
{
    unsigned seen = 0;
    for (int32_t i = 0; i < n; i++) {
        char what[32];
        snprintf(what, sizeof what, "axes[%d]", (int)i);
        dfg_status st = dfg_shape_axis(axes[i], rank, what, &out[i]);
        if (st != DFG_OK)
            return st;
        if (seen & (1u << out[i]))
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "axes[%d] = %lld names axis %d twice", (int)i,
                             (long long)axes[i], (int)out[i]);
        seen |= 1u << out[i];
    }
    return DFG_OK;
}

dfg_status dfg_shape_broadcast(int32_t rank_a, const int64_t *a, int32_t rank_b,
                               const int64_t *b, dfg_type *out)
{
    int32_t rank = rank_a > rank_b ? rank_a : rank_b;
    /* Walk from the last dim: numpy aligns shapes on the right. */
    for (int32_t i = 0; i < rank; i++) {
        int64_t da = i < rank_a ? a[rank_a - 1 - i] : 1;
        int64_t db = i < rank_b ? b[rank_b - 1 - i] : 1;
        if (da != db && da != 1 && db != 1)
            return dfg_error(DFG_ERR_SHAPE,
                             "shapes %s and %s do not broadcast: dim %d from "
                             "the end is %lld vs %lld",
                             dfg_dims_format(rank_a, a).text,
                             dfg_dims_format(rank_b, b).text, (int)i + 1,
                             (long long)da, (long long)db);
        out->shape[rank - 1 - i] = da == 1 ? db : da;
    }
    out->rank = rank;
    return DFG_OK;
}

dfg_status dfg_shape_same_dtype(const dfg_type *in, int32_t i, int32_t j)
{
    if (in[i].dtype != in[j].dtype)
        return dfg_error(DFG_ERR_DTYPE,
                         "input %d has dtype %s, expected %s like input %d",
                         (int)j, dfg_dtype_name(in[j].dtype),
                         dfg_dtype_name(in[i].dtype), (int)i);
    return DFG_OK;
}

dfg_status dfg_shape_rank(const dfg_type *in, int32_t i, int32_t rank)
{
    if (in[i].rank != rank)
        return dfg_error(DFG_ERR_SHAPE, "input %d has rank %d, expected %d",
                         (int)i, (int)in[i].rank, (int)rank);
    return DFG_OK;
}

dfg_status dfg_shape_check_size(const dfg_type *out)
{
    if (dfg_type_numel(out) < 0)
        return dfg_error(DFG_ERR_OVERFLOW,
                         "output shape %s has more than 2^48 elements",
                         dfg_dims_format(out->rank, out->shape).text);
    return DFG_OK;
}

void dfg_slice_range(int64_t dim, int64_t start, int64_t end, int64_t step,
                     int64_t *first, int64_t *count)
{
    /* Negative indices count from the end; clamp so that no arithmetic
     * below can overflow whatever the attribute values. */
    if (start < 0)
        start = start < -dim ? -dim - 1 : start + dim;
    if (end < 0)
        end = end < -dim ? -dim - 1 : end + dim;
    int64_t n = 0;
    if (step > 0) {
        start = start < 0 ? 0 : (start > dim ? dim : start);
        end = end < 0 ? 0 : (end > dim ? dim : end);
        int64_t stride = step > dim ? (dim > 0 ? dim : 1) : step;
        if (end > start)
            n = (end - start + stride - 1) / stride;
    } else {
        start = start < 0 ? -1 : (start > dim - 1 ? dim - 1 : start);
        end = end < -1 ? -1 : (end > dim - 1 ? dim - 1 : end);
        int64_t stride = step < -dim ? (dim > 0 ? dim : 1) : -step;
        if (start > end)
            n = (start - end + stride - 1) / stride;
    }
    *first = start;
    *count = n;
}
