/* concat and split: each part is a slab of the whole along axis, copied
 * as [outer, part_len * inner] rows into (or out of) rows of
 * [outer, whole_len * inner] (dfg_part_geometry). */
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/movement/strided_copy.h"

/* Copies parts[0..n) one after the other along axis into the whole
 * (to_whole, concat: src[i] into dst[0]) or out of it (split: src[0] into
 * dst[i]). */
static dfg_status move_parts(const char *op, const dfg_type *whole,
                             const dfg_type *parts, int32_t n,
                             int64_t axis_attr, int to_whole,
                             const void *const *src, void *const *dst)
{
    int32_t axis;
    dfg_status st = dfg_parts_check(op, whole, parts, n, axis_attr, &axis);
    if (st != DFG_OK)
        return st;
    size_t size = dfg_dtype_size(whole->dtype);
    int64_t at = 0;
    for (int32_t i = 0; i < n; i++) {
        int64_t len = parts[i].shape[axis];
        dfg_copy_geometry g;
        dfg_part_geometry(whole, axis, at, len, to_whole, &g);
        dfg_cpu_copy_geometry_run(&g, src[to_whole ? i : 0],
                                  dst[to_whole ? 0 : i], size);
        at += len;
    }
    return DFG_OK;
}

dfg_status dfg_cpu_concat(const dfg_kernel_args *args)
{
    return move_parts("concat", &args->out_types[0], args->in_types,
                      args->n_inputs, args->attrs->axis, 1, args->in,
                      args->out);
}

dfg_status dfg_cpu_split(const dfg_kernel_args *args)
{
    return move_parts("split", &args->in_types[0], args->out_types,
                      args->n_outputs, args->attrs->axis, 0, args->in,
                      args->out);
}
