/* slice: any steps, negative ones included, with ONNX's clamping of starts
 * and ends (dfg_slice_range, shared with the shape rule so that the data
 * matches the shape; the walk is dfg_slice_geometry's). */
#include "runtime/cpu/kernels.h"
#include "ir/layout_rule.h"
#include "runtime/cpu/movement/strided_copy.h"

dfg_status dfg_cpu_slice(const dfg_kernel_args *args)
{
    /* Rows of a blocked tensor: the rows of its view
     * (dfg_op_layout_rows). */
    dfg_type in_view = dfg_layout_rows_view(&args->in_types[0]);
    dfg_type out_view = dfg_layout_rows_view(&args->out_types[0]);
    const dfg_type *in = &in_view;
    dfg_copy_geometry g;
    dfg_status st = dfg_slice_geometry(args->attrs, in, &out_view, &g);
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
