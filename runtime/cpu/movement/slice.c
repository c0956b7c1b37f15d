/* slice: any steps, negative ones included, with ONNX's clamping of starts
 * and ends (dfg_slice_range, shared with the shape rule so that the data
 * matches the shape; the walk is dfg_slice_geometry's). */
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/movement/strided_copy.h"

dfg_status dfg_cpu_slice(const dfg_kernel_args *args)
{
    const dfg_type *in = &args->in_types[0];
    dfg_copy_geometry g;
    dfg_status st = dfg_slice_geometry(args->attrs, in, &args->out_types[0],
                                       &g);
    if (st != DFG_OK)
        return st;
    size_t size = dfg_dtype_size(in->dtype);
    /* A contiguous slice the planner made a view already sits there. */
    if ((const char *)args->in[0] + g.src_at * (int64_t)size ==
        (const char *)args->out[0])
        return DFG_OK;
    dfg_cpu_copy_geometry_run(&g, args->in[0], args->out[0], size);
    return DFG_OK;
}
