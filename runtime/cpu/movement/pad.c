/* pad, constant mode: the output is filled with pad_value (converted to
 * the dtype as cast does), then the input is copied into its interior.
 * attrs.pads holds the begins of every axis, then the ends. */
#include <string.h>

#include "runtime/cpu/elementwise/dtype_access.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/movement/strided_copy.h"

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
    dfg_copy_geometry g;
    dfg_status st = dfg_pad_geometry(args->attrs, in, out, &g);
    if (st != DFG_OK)
        return st;
    size_t size = dfg_dtype_size(in->dtype);
    uint64_t value = 0; /* one element of the dtype, at most 8 bytes */
    dfg_store_f32(&value, in->dtype, 0, 1, &args->attrs->pad_value);
    fill_elements(args->out[0], &value, size, dfg_type_numel(out));
    dfg_cpu_copy_geometry_run(&g, args->in[0], args->out[0], size);
    return DFG_OK;
}
