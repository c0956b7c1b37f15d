/* The all-reduce ops (src/ops.def) hand the bucket to the session's
 * communicator (include/dfg/collective.h); the bucket's bytes are the
 * gradients' own, so nothing is copied. Without a communicator there is
 * one rank and the average is the gradient itself. */
#include "kernels.h"

dfg_status dfg_cpu_all_reduce_start(const dfg_kernel_args *args)
{
    const dfg_collective *c = args->collective;
    if (!c || !c->all_reduce_start)
        return DFG_OK;
    return c->all_reduce_start(c->context, args->attrs->axis,
                               (float *)args->out[0],
                               args->out_types[0].shape[0], NULL);
}

dfg_status dfg_cpu_all_reduce_wait(const dfg_kernel_args *args)
{
    const dfg_collective *c = args->collective;
    if (!c || !c->all_reduce_wait)
        return DFG_OK;
    return c->all_reduce_wait(c->context, args->attrs->axis, NULL);
}
