/* transpose: output dim i is input dim perm[i] (perm reversed when the
 * attribute is empty). */
#include "error.h"
#include "kernels.h"
#include "strided_copy.h"

dfg_status dfg_cpu_transpose(const dfg_kernel_args *args)
{
    const dfg_attrs *a = args->attrs;
    const dfg_type *in = &args->in_types[0], *out = &args->out_types[0];
    int32_t rank = in->rank;
    if (out->rank != rank || (a->n_shape != 0 && a->n_shape != rank))
        return dfg_error(DFG_ERR_SHAPE, "transpose: rank %d input, rank %d "
                         "output, %d perm entries", (int)rank,
                         (int)out->rank, (int)a->n_shape);
    int64_t in_strides[DFG_MAX_RANK];
    dfg_cpu_contiguous_strides(rank, in->shape, in_strides);
    dfg_strided src = {(char *)args->in[0], {0}};
    dfg_strided dst = {args->out[0], {0}};
    unsigned seen = 0;
    for (int32_t i = 0; i < rank; i++) {
        int64_t p = a->n_shape ? a->shape[i] : rank - 1 - i;
        if (p < 0 || p >= rank || (seen & (1u << p)) ||
            out->shape[i] != in->shape[p])
            return dfg_error(DFG_ERR_SHAPE, "transpose: perm entry %d = %lld "
                             "does not map the input onto the output",
                             (int)i, (long long)p);
        seen |= 1u << p;
        src.strides[i] = in_strides[p];
    }
    dfg_cpu_contiguous_strides(rank, out->shape, dst.strides);
    dfg_cpu_strided_copy(rank, out->shape, &src, &dst,
                         dfg_dtype_size(in->dtype));
    return DFG_OK;
}
