/* Data-movement geometry shared by the backends (see layout_geometry.h). */
#include "ir/geometry/layout_geometry.h"

#include <string.h>

#include "ir/shape_rules.h"
#include "util/error.h"

void dfg_contiguous_strides(int32_t rank, const int64_t *dims,
                            int64_t *strides)
{
    int64_t s = 1;
    for (int32_t d = rank - 1; d >= 0; d--) {
        strides[d] = s;
        s *= dims[d];
    }
}

int32_t dfg_copy_dims_merge(int32_t rank, const int64_t *dims,
                            const int64_t *src_strides,
                            const int64_t *dst_strides, int64_t *merged_dims,
                            int64_t *merged_src, int64_t *merged_dst)
{
    int32_t r = 0;
    for (int32_t i = 0; i < rank; i++) {
        if (dims[i] == 1)
            continue;
        if (r > 0 && merged_src[r - 1] == src_strides[i] * dims[i] &&
            merged_dst[r - 1] == dst_strides[i] * dims[i]) {
            merged_dims[r - 1] *= dims[i];
        } else {
            merged_dims[r] = dims[i];
            r++;
        }
        merged_src[r - 1] = src_strides[i];
        merged_dst[r - 1] = dst_strides[i];
    }
    if (r == 0) {
        merged_dims[0] = 1, merged_src[0] = 0, merged_dst[0] = 0;
        r = 1;
    }
    return r;
}

/* The geometry of a copy of dims from src_strides to a contiguous
 * destination. */
static void copy_to_contiguous(int32_t rank, const int64_t *dims,
                               const int64_t *src_strides, int64_t src_at,
                               dfg_copy_geometry *g)
{
    memset(g, 0, sizeof *g);
    g->rank = rank;
    memcpy(g->dims, dims, (size_t)rank * sizeof *dims);
    memcpy(g->src_strides, src_strides, (size_t)rank * sizeof *src_strides);
    dfg_contiguous_strides(rank, dims, g->dst_strides);
    g->src_at = src_at;
}

dfg_status dfg_transpose_geometry(const dfg_attrs *attrs, const dfg_type *in,
                                  const dfg_type *out, dfg_copy_geometry *g)
{
    int32_t rank = in->rank;
    if (out->rank != rank || (attrs->n_shape != 0 && attrs->n_shape != rank))
        return dfg_error(DFG_ERR_SHAPE, "transpose: rank %d input, rank %d "
                         "output, %d perm entries", (int)rank,
                         (int)out->rank, (int)attrs->n_shape);
    int64_t in_strides[DFG_MAX_RANK], src[DFG_MAX_RANK];
    dfg_contiguous_strides(rank, in->shape, in_strides);
    unsigned seen = 0;
    for (int32_t i = 0; i < rank; i++) {
        int64_t p = attrs->n_shape ? attrs->shape[i] : rank - 1 - i;
        if (p < 0 || p >= rank || (seen & (1u << p)) ||
            out->shape[i] != in->shape[p])
            return dfg_error(DFG_ERR_SHAPE, "transpose: perm entry %d = %lld "
                             "does not map the input onto the output",
                             (int)i, (long long)p);
        seen |= 1u << p;
        src[i] = in_strides[p];
    }
    copy_to_contiguous(rank, out->shape, src, 0, g);
    return DFG_OK;
}

dfg_status dfg_slice_geometry(const dfg_attrs *attrs, const dfg_type *in,
                              const dfg_type *out, dfg_copy_geometry *g)
{
    int32_t axes[DFG_MAX_RANK];
    if (out->rank != in->rank || attrs->n_axes < 0 || attrs->n_axes > in->rank)
        return dfg_error(DFG_ERR_SHAPE, "slice: input rank %d, output rank "
                         "%d, %d axes", (int)in->rank, (int)out->rank,
                         (int)attrs->n_axes);
    dfg_status st = dfg_shape_axes(attrs->axes, attrs->n_axes, in->rank, axes);
    if (st != DFG_OK)
        return dfg_error_prefix(st, "slice");
    int64_t strides[DFG_MAX_RANK], src[DFG_MAX_RANK], count[DFG_MAX_RANK];
    dfg_contiguous_strides(in->rank, in->shape, strides);
    for (int32_t d = 0; d < in->rank; d++) {
        src[d] = strides[d];
        count[d] = in->shape[d];
    }
    int64_t src_at = 0;
    for (int32_t i = 0; i < attrs->n_axes; i++) {
        int32_t d = axes[i];
        if (attrs->steps[i] == 0)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT, "slice: steps[%d] is 0",
                             (int)i);
        int64_t first;
        dfg_slice_range(in->shape[d], attrs->starts[i], attrs->ends[i],
                        attrs->steps[i], &first, &count[d]);
        if (count[d] > 0)
            src_at += first * strides[d];
        /* A step is only walked when two or more elements are read, and
         * then |step| < dim: the product cannot overflow. */
        src[d] = count[d] > 1 ? attrs->steps[i] * strides[d] : 0;
    }
    for (int32_t d = 0; d < in->rank; d++)
        if (count[d] != out->shape[d]) {
            char si[96], so[96];
            return dfg_error(DFG_ERR_SHAPE, "slice: the attributes select "
                             "%lld elements along axis %d of %s, the output "
                             "%s has %lld", (long long)count[d], (int)d,
                             dfg_type_format(in, si, sizeof si),
                             dfg_type_format(out, so, sizeof so),
                             (long long)out->shape[d]);
        }
    copy_to_contiguous(out->rank, out->shape, src, src_at, g);
    return DFG_OK;
}

dfg_status dfg_expand_geometry(const dfg_type *in, const dfg_type *out,
                               dfg_copy_geometry *g)
{
    int64_t in_strides[DFG_MAX_RANK], src[DFG_MAX_RANK];
    int32_t lead = out->rank - in->rank;
    int ok = lead >= 0 && in->dtype == out->dtype;
    if (ok)
        dfg_contiguous_strides(in->rank, in->shape, in_strides);
    for (int32_t d = 0; ok && d < out->rank; d++) {
        int64_t dim = d >= lead ? in->shape[d - lead] : 1;
        ok = dim == 1 || dim == out->shape[d];
        src[d] = dim == 1 ? 0 : in_strides[d - lead];
    }
    if (!ok) {
        char si[96], so[96];
        return dfg_error(DFG_ERR_SHAPE, "input %s does not broadcast to %s",
                         dfg_type_format(in, si, sizeof si),
                         dfg_type_format(out, so, sizeof so));
    }
    copy_to_contiguous(out->rank, out->shape, src, 0, g);
    return DFG_OK;
}

dfg_status dfg_pad_geometry(const dfg_attrs *attrs, const dfg_type *in,
                            const dfg_type *out, dfg_copy_geometry *g)
{
    const int64_t *pads = attrs->pads;
    int32_t rank = in->rank;
    int ok = out->rank == rank && out->dtype == in->dtype;
    for (int32_t d = 0; ok && d < rank; d++)
        ok = pads[d] >= 0 && pads[rank + d] >= 0 &&
             pads[d] <= out->shape[d] && pads[rank + d] <= out->shape[d] &&
             out->shape[d] - pads[d] - pads[rank + d] == in->shape[d];
    if (!ok) {
        char si[96], so[96];
        return dfg_error(DFG_ERR_SHAPE, "pad: input %s with the pads does not "
                         "give the output %s",
                         dfg_type_format(in, si, sizeof si),
                         dfg_type_format(out, so, sizeof so));
    }
    memset(g, 0, sizeof *g);
    g->rank = rank;
    memcpy(g->dims, in->shape, (size_t)rank * sizeof *in->shape);
    dfg_contiguous_strides(rank, in->shape, g->src_strides);
    dfg_contiguous_strides(rank, out->shape, g->dst_strides);
    for (int32_t d = 0; d < rank; d++)
        g->dst_at += pads[d] * g->dst_strides[d];
    return DFG_OK;
}

dfg_status dfg_parts_check(const char *op, const dfg_type *whole,
                           const dfg_type *parts, int32_t n, int64_t axis,
                           int32_t *axis_out)
{
    int64_t ax = axis < 0 ? axis + whole->rank : axis;
    if (ax < 0 || ax >= whole->rank)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "%s: axis %lld is out of "
                         "range for rank %d", op, (long long)axis,
                         (int)whole->rank);
    int64_t total = 0;
    for (int32_t i = 0; i < n; i++) {
        int same = parts[i].rank == whole->rank &&
                   parts[i].dtype == whole->dtype;
        for (int32_t d = 0; same && d < whole->rank; d++)
            same = d == ax || parts[i].shape[d] == whole->shape[d];
        if (!same) {
            char sp[96], sw[96];
            return dfg_error(DFG_ERR_SHAPE, "%s: part %d %s does not fit %s "
                             "along axis %lld", op, (int)i,
                             dfg_type_format(&parts[i], sp, sizeof sp),
                             dfg_type_format(whole, sw, sizeof sw),
                             (long long)ax);
        }
        total += parts[i].shape[ax];
    }
    if (total != whole->shape[ax])
        return dfg_error(DFG_ERR_SHAPE, "%s: parts sum to %lld along axis "
                         "%lld, the whole has %lld", op, (long long)total,
                         (long long)ax, (long long)whole->shape[ax]);
    *axis_out = (int32_t)ax;
    return DFG_OK;
}

void dfg_part_geometry(const dfg_type *whole, int32_t axis, int64_t at,
                       int64_t part_len, int to_whole, dfg_copy_geometry *g)
{
    int64_t outer = 1, inner = 1;
    for (int32_t d = 0; d < axis; d++)
        outer *= whole->shape[d];
    for (int32_t d = axis + 1; d < whole->rank; d++)
        inner *= whole->shape[d];
    const int64_t whole_strides[2] = {whole->shape[axis] * inner, 1};
    const int64_t part_strides[2] = {part_len * inner, 1};
    memset(g, 0, sizeof *g);
    g->rank = 2;
    g->dims[0] = outer;
    g->dims[1] = part_len * inner;
    memcpy(g->src_strides, to_whole ? part_strides : whole_strides,
           sizeof part_strides);
    memcpy(g->dst_strides, to_whole ? whole_strides : part_strides,
           sizeof part_strides);
    if (to_whole)
        g->dst_at = at * inner;
    else
        g->src_at = at * inner;
}

dfg_status dfg_gather_geometry_make(const dfg_attrs *attrs,
                                    const dfg_type *data,
                                    const dfg_type *indices,
                                    const dfg_type *out,
                                    dfg_gather_geometry *g)
{
    char sd[96], si[96], so[96];
    if (indices->dtype != DFG_I32 && indices->dtype != DFG_I64)
        return dfg_error(DFG_ERR_DTYPE, "gather: indices have dtype %s, "
                         "expected i32 or i64", dfg_dtype_name(indices->dtype));
    int64_t axis = attrs->axis < 0 ? attrs->axis + data->rank : attrs->axis;
    int ok = axis >= 0 && axis < data->rank && out->dtype == data->dtype &&
             out->rank == data->rank + indices->rank - 1;
    int64_t outer = 1, inner = 1;
    for (int32_t d = 0; ok && d < data->rank; d++) {
        if (d < axis) {
            ok = out->shape[d] == data->shape[d];
            outer *= data->shape[d];
        } else if (d > axis) {
            ok = out->shape[d + indices->rank - 1] == data->shape[d];
            inner *= data->shape[d];
        }
    }
    for (int32_t d = 0; ok && d < indices->rank; d++)
        ok = out->shape[axis + d] == indices->shape[d];
    if (!ok)
        return dfg_error(DFG_ERR_SHAPE, "gather: data %s, indices %s and "
                         "output %s do not fit along axis %d",
                         dfg_type_format(data, sd, sizeof sd),
                         dfg_type_format(indices, si, sizeof si),
                         dfg_type_format(out, so, sizeof so), (int)attrs->axis);
    *g = (dfg_gather_geometry){(int32_t)axis, outer, data->shape[axis], inner,
                               dfg_type_numel(indices)};
    return DFG_OK;
}
