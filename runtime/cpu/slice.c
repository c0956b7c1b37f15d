/* slice: any steps, negative ones included, with ONNX's clamping of starts
 * and ends (dfg_slice_range, shared with the shape rule so that the data
 * matches the shape). */
#include "error.h"
#include "kernels.h"
#include "shape_rules.h"
#include "strided_copy.h"

dfg_status dfg_cpu_slice(const dfg_kernel_args *args)
{
    const dfg_attrs *a = args->attrs;
    const dfg_type *in = &args->in_types[0], *out = &args->out_types[0];
    int32_t axes[DFG_MAX_RANK];
    if (out->rank != in->rank || a->n_axes < 0 || a->n_axes > in->rank)
        return dfg_error(DFG_ERR_SHAPE, "slice: input rank %d, output rank "
                         "%d, %d axes", (int)in->rank, (int)out->rank,
                         (int)a->n_axes);
    dfg_status st = dfg_shape_axes(a->axes, a->n_axes, in->rank, axes);
    if (st != DFG_OK)
        return dfg_error_prefix(st, "slice");
    int64_t in_strides[DFG_MAX_RANK], count[DFG_MAX_RANK];
    dfg_cpu_contiguous_strides(in->rank, in->shape, in_strides);
    dfg_strided src = {(char *)args->in[0], {0}};
    dfg_strided dst = {args->out[0], {0}};
    for (int32_t d = 0; d < in->rank; d++) {
        src.strides[d] = in_strides[d];
        count[d] = in->shape[d];
    }
    int64_t base = 0;
    for (int32_t i = 0; i < a->n_axes; i++) {
        int32_t d = axes[i];
        if (a->steps[i] == 0)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "slice: steps[%d] is 0", (int)i);
        int64_t first;
        dfg_slice_range(in->shape[d], a->starts[i], a->ends[i], a->steps[i],
                        &first, &count[d]);
        if (count[d] > 0)
            base += first * in_strides[d];
        /* A step is only walked when two or more elements are read, and
         * then |step| < dim: the product cannot overflow. */
        src.strides[d] = count[d] > 1 ? a->steps[i] * in_strides[d] : 0;
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
    size_t size = dfg_dtype_size(in->dtype);
    src.base += base * (int64_t)size;
    /* A contiguous slice the planner made a view already sits there. */
    if (src.base == dst.base)
        return DFG_OK;
    dfg_cpu_contiguous_strides(out->rank, out->shape, dst.strides);
    dfg_cpu_strided_copy(out->rank, out->shape, &src, &dst, size);
    return DFG_OK;
}
