/* expand: numpy broadcast of the input to the output's shape, a strided
 * copy whose strides are 0 along the broadcast dims. */
#include "util/error.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/movement/strided_copy.h"

dfg_status dfg_cpu_expand(const dfg_kernel_args *args)
{
    const dfg_type *in = &args->in_types[0];
    dfg_copy_geometry g;
    dfg_status st = dfg_expand_geometry(in, &args->out_types[0], &g);
    if (st != DFG_OK)
        return dfg_error_prefix(st, "expand");
    dfg_cpu_copy_geometry_run(&g, args->in[0], args->out[0],
                              dfg_dtype_size(in->dtype));
    return DFG_OK;
}
