/* The all-reduce ops (src/ir/ops.def) hand the bucket to the session's
 * communicator (include/dfg/collective.h); the bucket's bytes are the
 * gradients' own, so nothing is copied. Without a communicator there is
 * one rank and the average is the gradient itself. With a sharded
 * optimizer (attrs.group ranks) the bucket is reduce-scattered instead,
 * which needs the communicator (runtime/cpu/training/shard_weights.c). */
#include "runtime/cpu/kernels.h"

#include <string.h>
#include "util/error.h"

dfg_status dfg_cpu_check_shard_ranks(const dfg_kernel_args *args)
{
    const dfg_collective *c = args->collective;
    if (!c || !c->reduce_scatter_start || !c->all_gather ||
        c->ranks != args->attrs->group || c->rank < 0 ||
        c->rank >= c->ranks)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "bucket %d: the program shards its optimizer over %d "
                         "ranks; the session's communicator has %d",
                         (int)args->attrs->axis, (int)args->attrs->group,
                         c ? (int)c->ranks : 0);
    return DFG_OK;
}

/* Zeros the bytes of the bucket that no gradient holds (the gaps the
 * alignment leaves and the end), which a shard's update reads. The plan
 * verifier checks that the gradients lie in the bucket in order; a
 * gradient that does not (a corrupt program) leaves its gap as it is. */
static void zero_gaps(const dfg_kernel_args *args)
{
    char *at = args->out[0];
    char *end = at + dfg_type_numel(&args->out_types[0]) * 4;
    for (int32_t i = 0; i < args->n_inputs; i++) {
        const char *gradient = args->in[i];
        const char *after = gradient + dfg_type_numel(&args->in_types[i]) * 4;
        if (gradient < at || after > end)
            continue;
        memset(at, 0, (size_t)(gradient - at));
        at = (char *)after;
    }
    memset(at, 0, (size_t)(end - at));
}

dfg_status dfg_cpu_all_reduce_start(const dfg_kernel_args *args)
{
    const dfg_collective *c = args->collective;
    int64_t floats = args->out_types[0].shape[0];
    if (args->attrs->group > 1) {
        dfg_status st = dfg_cpu_check_shard_ranks(args);
        if (st != DFG_OK)
            return st;
        zero_gaps(args);
        return c->reduce_scatter_start(c->context, args->attrs->axis,
                                       (float *)args->out[0],
                                       floats / args->attrs->group, NULL);
    }
    if (!c || !c->all_reduce_start)
        return DFG_OK;
    return c->all_reduce_start(c->context, args->attrs->axis,
                               (float *)args->out[0], floats, NULL);
}

dfg_status dfg_cpu_all_reduce_wait(const dfg_kernel_args *args)
{
    const dfg_collective *c = args->collective;
    if (args->attrs->group > 1) {
        dfg_status st = dfg_cpu_check_shard_ranks(args);
        if (st != DFG_OK)
            return st;
    } else if (!c || !c->all_reduce_wait)
        return DFG_OK;
    return c->all_reduce_wait(c->context, args->attrs->axis, NULL);
}
