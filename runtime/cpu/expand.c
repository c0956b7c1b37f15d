/* expand: numpy broadcast of the input to the output's shape, a strided
 * copy whose strides are 0 along the broadcast dims. */
#include "error.h"
#include "kernels.h"
#include "strided_copy.h"

dfg_status dfg_cpu_expand(const dfg_kernel_args *args)
{
    const dfg_type *in = &args->in_types[0], *out = &args->out_types[0];
    int64_t in_strides[DFG_MAX_RANK];
    dfg_cpu_contiguous_strides(in->rank, in->shape, in_strides);
    dfg_strided src = {(char *)args->in[0], {0}};
    dfg_strided dst = {args->out[0], {0}};
    int32_t lead = out->rank - in->rank;
    if (lead < 0)
        goto mismatch;
    for (int32_t d = 0; d < out->rank; d++) {
        int64_t dim = d >= lead ? in->shape[d - lead] : 1;
        if (dim != 1 && dim != out->shape[d])
            goto mismatch;
        src.strides[d] = dim == 1 ? 0 : in_strides[d - lead];
    }
    dfg_cpu_contiguous_strides(out->rank, out->shape, dst.strides);
    dfg_cpu_strided_copy(out->rank, out->shape, &src, &dst,
                         dfg_dtype_size(in->dtype));
    return DFG_OK;
mismatch:;
    char si[96], so[96];
    return dfg_error(DFG_ERR_SHAPE, "expand: input %s does not broadcast to "
                     "%s", dfg_type_format(in, si, sizeof si),
                     dfg_type_format(out, so, sizeof so));
}
