/* gather: out[pre.., idx.., post..] = data[pre.., indices[idx..], post..]
 * with i32 or i64 indices; negative indices count from the end. Every
 * index is checked before anything is read: an out-of-range one is an
 * error, never an out-of-bounds read. */
#include <string.h>

#include "util/error.h"
#include "runtime/cpu/kernels.h"
#include "ir/geometry/layout_geometry.h"
#include "runtime/cpu/parallel.h"

static int64_t index_at(const void *indices, dfg_dtype dtype, int64_t i)
{
    return dtype == DFG_I32 ? ((const int32_t *)indices)[i]
                            : ((const int64_t *)indices)[i];
}

dfg_status dfg_cpu_gather(const dfg_kernel_args *args)
{
    const dfg_type *data = &args->in_types[0], *idx = &args->in_types[1];
    char si[96];
    dfg_gather_geometry g;
    dfg_status st = dfg_gather_geometry_make(args->attrs, data, idx,
                                             &args->out_types[0], &g);
    if (st != DFG_OK)
        return st;
    int64_t dim = g.dim, n = g.n_indices, outer = g.outer, inner = g.inner;
    for (int64_t i = 0; i < n; i++) {
        int64_t k = index_at(args->in[1], idx->dtype, i);
        if (k < -dim || k >= dim)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "gather: index %lld (entry %lld of indices %s) "
                             "is out of range for axis %d of size %lld",
                             (long long)k, (long long)i,
                             dfg_type_format(idx, si, sizeof si),
                             (int)g.axis, (long long)dim);
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
