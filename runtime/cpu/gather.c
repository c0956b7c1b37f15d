/* gather: out[pre.., idx.., post..] = data[pre.., indices[idx..], post..]
 * with i32 or i64 indices; negative indices count from the end. Every
 * index is checked before anything is read: an out-of-range one is an
 * error, never an out-of-bounds read. */
#include <string.h>

#include "error.h"
#include "kernels.h"
#include "parallel.h"

static int64_t index_at(const void *indices, dfg_dtype dtype, int64_t i)
{
    return dtype == DFG_I32 ? ((const int32_t *)indices)[i]
                            : ((const int64_t *)indices)[i];
}

dfg_status dfg_cpu_gather(const dfg_kernel_args *args)
{
    const dfg_type *data = &args->in_types[0], *idx = &args->in_types[1];
    const dfg_type *out = &args->out_types[0];
    char sd[96], si[96], so[96];
    if (idx->dtype != DFG_I32 && idx->dtype != DFG_I64)
        return dfg_error(DFG_ERR_DTYPE, "gather: indices have dtype %s, "
                         "expected i32 or i64", dfg_dtype_name(idx->dtype));
    int64_t axis = args->attrs->axis;
    if (axis < 0)
        axis += data->rank;
    int ok = axis >= 0 && axis < data->rank &&
             out->rank == data->rank + idx->rank - 1;
    int64_t outer = 1, inner = 1;
    for (int32_t d = 0; ok && d < data->rank; d++) {
        if (d < axis) {
            ok = out->shape[d] == data->shape[d];
            outer *= data->shape[d];
        } else if (d > axis) {
            ok = out->shape[d + idx->rank - 1] == data->shape[d];
            inner *= data->shape[d];
        }
    }
    for (int32_t d = 0; ok && d < idx->rank; d++)
        ok = out->shape[axis + d] == idx->shape[d];
    if (!ok)
        return dfg_error(DFG_ERR_SHAPE, "gather: data %s, indices %s and "
                         "output %s do not fit along axis %d",
                         dfg_type_format(data, sd, sizeof sd),
                         dfg_type_format(idx, si, sizeof si),
                         dfg_type_format(out, so, sizeof so),
                         (int)args->attrs->axis);
    int64_t dim = data->shape[axis], n = dfg_type_numel(idx);
    for (int64_t i = 0; i < n; i++) {
        int64_t k = index_at(args->in[1], idx->dtype, i);
        if (k < -dim || k >= dim)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "gather: index %lld (entry %lld of indices %s) "
                             "is out of range for axis %d of size %lld",
                             (long long)k, (long long)i,
                             dfg_type_format(idx, si, sizeof si),
                             (int)axis, (long long)dim);
    }
    size_t row = (size_t)inner * dfg_dtype_size(data->dtype);
    const char *src = args->in[0];
    char *dst = args->out[0];
#pragma omp parallel for if (outer * n * inner >= DFG_CPU_PARALLEL_MIN_ELEMENTS)
    for (int64_t t = 0; t < outer * n; t++) {
        int64_t o = t / n, i = t % n;
        int64_t k = index_at(args->in[1], idx->dtype, i);
        if (k < 0)
            k += dim;
        memcpy(dst + (size_t)t * row, src + (size_t)(o * dim + k) * row, row);
    }
    return DFG_OK;
}
