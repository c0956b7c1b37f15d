/* Gradient buckets read off a program's steps (program_buckets.h). */
#include "program/program_buckets.h"

int32_t dfg_program_tensor_owner(const dfg_program *p, int32_t t)
{
    for (int32_t hops = 0; t >= 0 && p->tensors[t].alias_of >= 0 &&
                           hops < p->n_tensors; hops++)
        t = p->tensors[t].alias_of;
    return t;
}

int dfg_program_bucket_at(const dfg_program *p, int32_t step,
                          dfg_bucket_view *out)
{
    const dfg_program_step *st = &p->steps[step];
    if (st->op != DFG_OP_ALL_REDUCE_START || st->n_outputs != 1)
        return 0;
    *out = (dfg_bucket_view){.index = st->attrs.axis,
                             .tensor = st->outputs[0],
                             .start_step = step,
                             .wait_step = -1,
                             .n_gradients = st->n_inputs,
                             .shard_ranks = st->attrs.group};
    for (int32_t i = 0; i < st->n_inputs; i++) {
        int32_t g = st->inputs[i];
        if (g < 0)
            continue;
        out->gradient_bytes += p->tensors[g].bytes;
        out->copied += dfg_program_tensor_owner(p, g) != out->tensor;
    }
    for (int32_t s = step + 1; s < p->n_steps && out->wait_step < 0; s++)
        if (p->steps[s].op == DFG_OP_ALL_REDUCE_WAIT &&
            p->steps[s].n_inputs > 0 && p->steps[s].inputs[0] == out->tensor)
            out->wait_step = s;
    return 1;
}
