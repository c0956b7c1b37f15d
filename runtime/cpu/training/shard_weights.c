/* The sharded optimizer's weight ops (src/ir/ops.def, docs/data-parallel.md):
 * this rank's shard of a bucket's weights, laid out as their gradients are
 * in the bucket (src/math/bucket_layout.h), and, after its update, every
 * rank's shard gathered back into the weights. */
#include "runtime/cpu/kernels.h"

#include <string.h>
#include "math/bucket_layout.h"

/* Copies between the bucket layout's floats [first, first + n) (`flat`)
 * and the weights inputs [from, n_inputs): to_flat, or back. */
static void copy_layout(const dfg_kernel_args *args, int32_t from,
                        float *flat, int64_t first, int64_t n, int to_flat)
{
    int64_t end = 0, alignment = args->attrs->shape[1];
    for (int32_t i = from; i < args->n_inputs; i++) {
        int64_t count = dfg_type_numel(&args->in_types[i]);
        int64_t at = dfg_bucket_place(end, alignment) / 4;
        end = (at + count) * 4;
        int64_t lo = at > first ? at : first;
        int64_t hi = at + count < first + n ? at + count : first + n;
        if (lo >= hi)
            continue;
        float *weight = (float *)args->in[i] + (lo - at);
        if (to_flat)
            memcpy(flat + (lo - first), weight, (size_t)(hi - lo) * 4);
        else
            memcpy(weight, flat + (lo - first), (size_t)(hi - lo) * 4);
    }
}

dfg_status dfg_cpu_shard_weights(const dfg_kernel_args *args)
{
    dfg_status st = dfg_cpu_check_shard_ranks(args);
    if (st != DFG_OK)
        return st;
    int64_t shard = args->attrs->shape[0];
    float *out = args->out[0];
    memset(out, 0, (size_t)shard * 4);
    copy_layout(args, 0, out, args->collective->rank * shard, shard, 1);
    return DFG_OK;
}

dfg_status dfg_cpu_all_gather_weights(const dfg_kernel_args *args)
{
    dfg_status st = dfg_cpu_check_shard_ranks(args);
    if (st != DFG_OK)
        return st;
    const dfg_collective *c = args->collective;
    int64_t shard = args->attrs->shape[0];
    float *gathered = (float *)args->in[2];
    memcpy(gathered + c->rank * shard, args->in[0], (size_t)shard * 4);
    st = c->all_gather(c->context, args->attrs->axis, gathered, shard, NULL);
    if (st != DFG_OK)
        return st;
    copy_layout(args, 3, gathered, 0, shard * c->ranks, 0);
    memcpy(args->out[0], args->in[1], 4);
    return DFG_OK;
}
