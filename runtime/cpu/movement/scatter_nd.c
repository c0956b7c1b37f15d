/* scatter_nd: the output is data with the slices that indices name
 * replaced by updates (ONNX reduction "none"), any dtype. An index tuple
 * outside data is an error, never a write outside the buffer. */
#include <string.h>

#include "util/error.h"
#include "runtime/cpu/movement/index_read.h"
#include "runtime/cpu/kernels_extra.h"

dfg_status dfg_cpu_scatter_nd(const dfg_kernel_args *args)
{
    const dfg_type *data = &args->in_types[0], *idx = &args->in_types[1];
    size_t size = dfg_dtype_size(data->dtype);
    int64_t k = idx->shape[idx->rank - 1];
    int64_t slice = 1, tuples = 1;
    for (int32_t d = (int32_t)k; d < data->rank; d++)
        slice *= data->shape[d];
    for (int32_t d = 0; d < idx->rank - 1; d++)
        tuples *= idx->shape[d];
    int64_t strides[DFG_MAX_RANK];
    int64_t step = 1;
    for (int32_t d = data->rank - 1; d >= 0; d--) {
        strides[d] = step;
        step *= data->shape[d];
    }
    char *out = args->out[0];
    if (args->out[0] != args->in[0])
        memcpy(out, args->in[0], (size_t)dfg_type_bytes(data));
    const char *updates = args->in[2];
    int64_t slice_bytes = slice * (int64_t)size;
    for (int64_t t = 0; t < tuples; t++) {
        int64_t offset = 0;
        for (int64_t j = 0; j < k; j++) {
            int64_t v = dfg_cpu_index(args->in[1], idx->dtype, t * k + j,
                                      data->shape[j]);
            if (v < 0)
                return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                                 "scatter_nd: index tuple %lld is outside "
                                 "the data", (long long)t);
            offset += v * strides[j];
        }
        memcpy(out + offset * (int64_t)size, updates + t * slice_bytes,
               (size_t)slice_bytes);
    }
    return DFG_OK;
}
