/* transpose: output dim i is input dim perm[i] (perm reversed when the
 * attribute is empty); the strides come from dfg_transpose_geometry. */
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/movement/strided_copy.h"

dfg_status dfg_cpu_transpose(const dfg_kernel_args *args)
{
    const dfg_type *in = &args->in_types[0];
    dfg_copy_geometry g;
    dfg_status st = dfg_transpose_geometry(args->attrs, in,
                                           &args->out_types[0], &g);
    if (st != DFG_OK)
        return st;
    dfg_cpu_copy_geometry_run(&g, args->in[0], args->out[0],
                              dfg_dtype_size(in->dtype));
    return DFG_OK;
}
