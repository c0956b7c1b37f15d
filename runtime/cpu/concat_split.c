/* concat and split: each part is a slab of the whole along axis, copied
 * as [outer, part_len * inner] rows into (or out of) rows of
 * [outer, whole_len * inner]. */
#include "error.h"
#include "kernels.h"
#include "strided_copy.h"

/* Checks that parts[0..n) fit the whole along axis (same rank and dtype,
 * same dims elsewhere, lengths summing to the whole's); names the op. */
static dfg_status check_parts(const char *op, const dfg_type *whole,
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

/* Copies part (of length part_len along axis) to or from the whole, at
 * position `at` along axis. */
static void move_part(const dfg_type *whole, char *whole_data, int32_t axis,
                      int64_t at, int64_t part_len, char *part_data,
                      int to_whole)
{
    int64_t outer = 1, inner = 1;
    for (int32_t d = 0; d < axis; d++)
        outer *= whole->shape[d];
    for (int32_t d = axis + 1; d < whole->rank; d++)
        inner *= whole->shape[d];
    size_t size = dfg_dtype_size(whole->dtype);
    const int64_t dims[2] = {outer, part_len * inner};
    dfg_strided w = {whole_data + (size_t)(at * inner) * size,
                     {whole->shape[axis] * inner, 1}};
    dfg_strided p = {part_data, {part_len * inner, 1}};
    if (to_whole)
        dfg_cpu_strided_copy(2, dims, &p, &w, size);
    else
        dfg_cpu_strided_copy(2, dims, &w, &p, size);
}

dfg_status dfg_cpu_concat(const dfg_kernel_args *args)
{
    const dfg_type *whole = &args->out_types[0];
    int32_t axis;
    dfg_status st = check_parts("concat", whole, args->in_types,
                                args->n_inputs, args->attrs->axis, &axis);
    if (st != DFG_OK)
        return st;
    int64_t at = 0;
    for (int32_t i = 0; i < args->n_inputs; i++) {
        int64_t len = args->in_types[i].shape[axis];
        move_part(whole, args->out[0], axis, at, len, (char *)args->in[i], 1);
        at += len;
    }
    return DFG_OK;
}

dfg_status dfg_cpu_split(const dfg_kernel_args *args)
{
    const dfg_type *whole = &args->in_types[0];
    int32_t axis;
    dfg_status st = check_parts("split", whole, args->out_types,
                                args->n_outputs, args->attrs->axis, &axis);
    if (st != DFG_OK)
        return st;
    int64_t at = 0;
    for (int32_t i = 0; i < args->n_outputs; i++) {
        int64_t len = args->out_types[i].shape[axis];
        move_part(whole, (char *)args->in[0], axis, at, len, args->out[i], 0);
        at += len;
    }
    return DFG_OK;
}
