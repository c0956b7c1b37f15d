/* The plan verifier's check of gradient buckets (docs/data-parallel.md),
 * on the program's steps and tensor table alone: each all_reduce_start
 * step's output (the bucket) is one arena range with bytes of its own;
 * its gradients lie inside it back to back, each on the alignment right
 * after the previous one, and are the bucket's own bytes (aliases of it),
 * so none is copied to be communicated; the matching all_reduce_wait
 * reads the bucket and hands on outputs in the gradients' bytes (with a
 * sharded optimizer: this rank's shard at the bucket's start, and the
 * weights gathered through the bucket's bytes). */
#include "program/program.h"
#include "program/program_buckets.h"
#include "program/program_verify_buckets.h"
#include "util/error.h"

static dfg_status bad(const dfg_program_step *st, const char *what)
{
    return dfg_error(DFG_ERR_PLAN, "program check: bucket step '%s' (%s): %s",
                     st->name ? st->name : "?", dfg_op_get(st->op)->name, what);
}

static dfg_status check_start(const dfg_program *p, const dfg_program_step *st,
                              int64_t alignment)
{
    if (st->n_outputs != 1 || st->n_inputs < 1)
        return bad(st, "needs gradients and one bucket");
    int32_t b = st->outputs[0];
    const dfg_program_tensor *bucket = &p->tensors[b];
    if (bucket->region != DFG_REGION_ARENA || bucket->alias_of >= 0)
        return bad(st, "the bucket is not an arena range of its own");
    int64_t end = 0;
    for (int32_t i = 0; i < st->n_inputs; i++) {
        int32_t g = st->inputs[i];
        if (g < 0 || dfg_program_tensor_owner(p, g) != b)
            return bad(st, "a gradient is not in the bucket's bytes (it "
                           "would have to be copied)");
        int64_t at = (end + alignment - 1) / alignment * alignment;
        const dfg_program_tensor *t = &p->tensors[g];
        if (t->offset != bucket->offset + at)
            return dfg_error(DFG_ERR_PLAN,
                             "program check: bucket step '%s': gradient '%s' "
                             "is at arena offset %lld, not %lld (the bucket's "
                             "ranges must follow each other)", st->name,
                             t->name, (long long)t->offset,
                             (long long)(bucket->offset + at));
        end = at + t->bytes;
    }
    if (end > bucket->bytes)
        return bad(st, "the gradients run past the bucket's end");
    return DFG_OK;
}

/* Sharded (attrs.group ranks): the one output is this rank's shard at the
 * bucket's start, 1/group of it. */
static dfg_status check_shard_wait(const dfg_program *p,
                                   const dfg_program_step *st)
{
    int32_t b = st->inputs[0], out = st->outputs[0];
    if (st->n_outputs != 1 || dfg_program_tensor_owner(p, out) != b ||
        p->tensors[out].offset != p->tensors[b].offset ||
        p->tensors[out].bytes * st->attrs.group != p->tensors[b].bytes)
        return bad(st, "the averaged shard is not 1/ranks of the bucket at "
                       "its start");
    return DFG_OK;
}

/* The gather of a sharded optimizer writes the weights (inputs 3...)
 * through the bucket (input 2): all ranks' shards, in its own bytes. */
static dfg_status check_gather(const dfg_program *p, const dfg_program_step *st)
{
    if (st->n_inputs < 4 || st->inputs[0] < 0 || st->inputs[2] < 0 ||
        st->attrs.group < 2)
        return bad(st, "needs the shard, its norm, the bucket and weights");
    const dfg_program_tensor *shard = &p->tensors[st->inputs[0]];
    const dfg_program_tensor *bucket = &p->tensors[st->inputs[2]];
    if (bucket->region != DFG_REGION_ARENA || bucket->alias_of >= 0 ||
        bucket->bytes != shard->bytes * st->attrs.group)
        return bad(st, "the gather's bucket is not an arena range of its own "
                       "holding every rank's shard");
    for (int32_t i = 3; i < st->n_inputs; i++)
        if (st->inputs[i] < 0 ||
            p->tensors[st->inputs[i]].region != DFG_REGION_WEIGHTS)
            return bad(st, "a gathered weight is not in the weights region");
    return DFG_OK;
}

static dfg_status check_wait(const dfg_program *p, const dfg_program_step *st)
{
    if (st->n_inputs >= 2 && st->inputs[0] >= 0 && st->attrs.group > 1)
        return check_shard_wait(p, st);
    if (st->n_inputs < 2 || st->n_outputs != st->n_inputs - 1 ||
        st->inputs[0] < 0)
        return bad(st, "needs the bucket, its gradients and their outputs");
    int32_t b = st->inputs[0];
    for (int32_t i = 0; i < st->n_outputs; i++) {
        int32_t g = st->inputs[i + 1], out = st->outputs[i];
        if (g < 0 || dfg_program_tensor_owner(p, out) != b || dfg_program_tensor_owner(p, g) != b ||
            p->tensors[out].offset != p->tensors[g].offset ||
            p->tensors[out].bytes != p->tensors[g].bytes)
            return bad(st, "an averaged gradient is not in its gradient's "
                           "bytes inside the bucket");
    }
    return DFG_OK;
}

dfg_status dfg_program_verify_buckets(const dfg_program *p, int64_t alignment)
{
    dfg_status status = DFG_OK;
    for (int32_t i = 0; i < p->n_steps && status == DFG_OK; i++) {
        const dfg_program_step *st = &p->steps[i];
        if (st->op == DFG_OP_ALL_REDUCE_START)
            status = check_start(p, st, alignment);
        else if (st->op == DFG_OP_ALL_REDUCE_WAIT)
            status = check_wait(p, st);
        else if (st->op == DFG_OP_ALL_GATHER_WEIGHTS)
            status = check_gather(p, st);
    }
    return status;
}
