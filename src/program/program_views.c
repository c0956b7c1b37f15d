#include "program_views.h"

int dfg_program_tensors_overlap(const dfg_program_tensor *a,
                                const dfg_program_tensor *b)
{
    return a->region == b->region && a->offset < b->offset + b->bytes &&
           b->offset < a->offset + a->bytes;
}

int dfg_program_step_is_view(const dfg_program *p, const dfg_program_step *st)
{
    dfg_alias_kind alias = dfg_op_get(st->op)->alias;
    if (alias != DFG_ALIAS_VIEW && alias != DFG_ALIAS_VIEW_IF_CONTIGUOUS)
        return 0;
    if (st->n_inputs < 1 || st->inputs[0] < 0 || st->n_outputs != 1)
        return 0;
    const dfg_program_tensor *in = &p->tensors[st->inputs[0]];
    const dfg_program_tensor *out = &p->tensors[st->outputs[0]];
    return in->region == out->region && out->offset >= in->offset &&
           out->offset + out->bytes <= in->offset + in->bytes;
}
