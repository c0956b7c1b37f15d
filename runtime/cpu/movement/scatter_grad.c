/* The backward ops of slice and gather: the output gradient goes back to
 * where the forward op read (f32, checked by the shape rules).
 *   slice_grad(dy): dx of attrs.shape is 0 except the sliced elements,
 *     which take dy (one strided copy, the forward slice's walk reversed);
 *   gather_grad(dy, indices): d(data) of attrs.shape accumulates each dy
 *     row at its index (an index read twice gets both rows). */
#include <string.h>

#include "util/error.h"
#include "runtime/cpu/kernels.h"
#include "ir/shape_rules.h"
#include "runtime/cpu/movement/strided_copy.h"

dfg_status dfg_cpu_slice_grad(const dfg_kernel_args *args)
{
    const dfg_attrs *a = args->attrs;
    const dfg_type *dx = &args->out_types[0], *dy = &args->in_types[0];
    int32_t axes[DFG_MAX_RANK];
    dfg_status st = dfg_shape_axes(a->axes, a->n_axes, dx->rank, axes);
    if (st != DFG_OK)
        return dfg_error_prefix(st, "slice_grad");
    memset(args->out[0], 0, (size_t)dfg_type_bytes(dx));
    if (dfg_type_numel(dy) == 0)
        return DFG_OK;
    int64_t strides[DFG_MAX_RANK];
    dfg_contiguous_strides(dx->rank, dx->shape, strides);
    dfg_strided dst = {args->out[0], {0}}, src = {(char *)args->in[0], {0}};
    memcpy(dst.strides, strides, sizeof strides);
    int64_t base = 0;
    for (int32_t i = 0; i < a->n_axes; i++) {
        int64_t first, count;
        dfg_slice_range(dx->shape[axes[i]], a->starts[i], a->ends[i],
                        a->steps[i], &first, &count);
        base += first * strides[axes[i]];
        dst.strides[axes[i]] = a->steps[i] * strides[axes[i]];
    }
    dst.base += base * (int64_t)sizeof(float);
    dfg_contiguous_strides(dy->rank, dy->shape, src.strides);
    dfg_cpu_strided_copy(dy->rank, dy->shape, &src, &dst, sizeof(float));
    return DFG_OK;
}

dfg_status dfg_cpu_gather_grad(const dfg_kernel_args *args)
{
    const dfg_type *data = &args->out_types[0], *idx = &args->in_types[1];
    int32_t axis;
    dfg_status st = dfg_shape_axis(args->attrs->axis, data->rank, "axis", &axis);
    if (st != DFG_OK)
        return dfg_error_prefix(st, "gather_grad");
    int64_t outer = 1, inner = 1, dim = data->shape[axis];
    for (int32_t d = 0; d < data->rank; d++) {
        if (d < axis)
            outer *= data->shape[d];
        else if (d > axis)
            inner *= data->shape[d];
    }
    int64_t n = dfg_type_numel(idx);
    const float *dy = args->in[0];
    float *dx = args->out[0];
    memset(dx, 0, (size_t)dfg_type_bytes(data));
    for (int64_t i = 0; i < n; i++) {
        int64_t k = idx->dtype == DFG_I32 ? ((const int32_t *)args->in[1])[i]
                                          : ((const int64_t *)args->in[1])[i];
        if (k < -dim || k >= dim)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "gather_grad: index %lld (entry %lld) is out of "
                             "range for axis %d of size %lld", (long long)k,
                             (long long)i, (int)axis, (long long)dim);
    }
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < n; i++) {
            int64_t k = idx->dtype == DFG_I32
                            ? ((const int32_t *)args->in[1])[i]
                            : ((const int64_t *)args->in[1])[i];
            if (k < 0)
                k += dim;
            const float *row = dy + (o * n + i) * inner;
            float *target = dx + (o * dim + k) * inner;
            for (int64_t j = 0; j < inner; j++)
                target[j] += row[j];
        }
    return DFG_OK;
}
