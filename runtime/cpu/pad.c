/* pad, constant mode: the output is filled with pad_value (converted to
 * the dtype as cast does), then the input is copied into its interior.
 * attrs.pads holds the begins of every axis, then the ends. */
#include <string.h>

#include "dtype_access.h"
#include "error.h"
#include "kernels.h"
#include "strided_copy.h"

/* Fills n elements of size bytes at dst with the element at value,
 * doubling the filled prefix with each memcpy. */
static void fill_elements(char *dst, const void *value, size_t size, int64_t n)
{
    if (n <= 0)
        return;
    memcpy(dst, value, size);
    size_t done = size, total = (size_t)n * size;
    while (done < total) {
        size_t chunk = done < total - done ? done : total - done;
        memcpy(dst + done, dst, chunk);
        done += chunk;
    }
}

dfg_status dfg_cpu_pad(const dfg_kernel_args *args)
{
    const dfg_type *in = &args->in_types[0], *out = &args->out_types[0];
    const int64_t *pads = args->attrs->pads;
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
    size_t size = dfg_dtype_size(in->dtype);
    uint64_t value = 0; /* one element of the dtype, at most 8 bytes */
    dfg_store_f32(&value, in->dtype, 0, 1, &args->attrs->pad_value);
    fill_elements(args->out[0], &value, size, dfg_type_numel(out));
    dfg_strided src = {(char *)args->in[0], {0}};
    dfg_strided dst = {args->out[0], {0}};
    dfg_cpu_contiguous_strides(rank, in->shape, src.strides);
    dfg_cpu_contiguous_strides(rank, out->shape, dst.strides);
    for (int32_t d = 0; d < rank; d++)
        dst.base += pads[d] * dst.strides[d] * (int64_t)size;
    dfg_cpu_strided_copy(rank, in->shape, &src, &dst, size);
    return DFG_OK;
}
