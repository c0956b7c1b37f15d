/* gather_elements: out[p] = data[p with p[axis] = indices[p]], any dtype
 * (copied as bytes). An index outside its axis is an error, never a read
 * outside the buffer. */
#include <string.h>

#include "util/error.h"
#include "runtime/cpu/movement/index_read.h"
#include "runtime/cpu/kernels_extra.h"

dfg_status dfg_cpu_gather_elements(const dfg_kernel_args *args)
{
    const dfg_type *data = &args->in_types[0], *idx = &args->in_types[1];
    int32_t rank = data->rank;
    int32_t axis = args->attrs->axis < 0 ? args->attrs->axis + rank
                                         : args->attrs->axis;
    size_t size = dfg_dtype_size(data->dtype);
    int64_t data_strides[DFG_MAX_RANK], n = dfg_type_numel(idx);
    int64_t step = 1;
    for (int32_t d = rank - 1; d >= 0; d--) {
        data_strides[d] = step;
        step *= data->shape[d];
    }
    const char *src = args->in[0];
    char *dst = args->out[0];
    int64_t pos[DFG_MAX_RANK] = {0};
    for (int64_t e = 0; e < n; e++) {
        int64_t k = dfg_cpu_index(args->in[1], idx->dtype, e, data->shape[axis]);
        if (k < 0)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "gather_elements: index %lld is outside axis %d "
                             "of size %lld", (long long)e, (int)axis,
                             (long long)data->shape[axis]);
        int64_t offset = 0;
        for (int32_t d = 0; d < rank; d++)
            offset += (d == axis ? k : pos[d]) * data_strides[d];
        memcpy(dst + e * (int64_t)size, src + offset * (int64_t)size, size);
        for (int32_t d = rank - 1; d >= 0 && ++pos[d] == idx->shape[d]; d--)
            pos[d] = 0;
    }
    return DFG_OK;
}
