#include "program/program_views.h"

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

void dfg_program_mark_written(const dfg_program *p, uint8_t *written)
{
    for (int32_t i = 0; i < p->n_tensors; i++)
        written[i] = 0;
    for (int32_t s = 0; s < p->n_steps; s++) {
        const dfg_program_step *st = &p->steps[s];
        if (st->workspace >= 0 && st->workspace < p->n_tensors)
            written[st->workspace] = 1;
        int valid = st->n_outputs >= 0 && (st->n_outputs == 0 || st->outputs);
        for (int32_t o = 0; valid && o < st->n_outputs; o++)
            valid = st->outputs[o] >= 0 && st->outputs[o] < p->n_tensors;
        int32_t in = st->n_inputs > 0 && st->inputs ? st->inputs[0] : -1;
        if (!valid || in >= p->n_tensors || dfg_program_step_is_view(p, st))
            continue;
        for (int32_t o = 0; o < st->n_outputs; o++)
            written[st->outputs[o]] = 1;
    }
}

int dfg_program_is_assembled(const dfg_program *p, const uint8_t *written,
                             int32_t i)
{
    const dfg_program_tensor *t = &p->tensors[i];
    return t->region == DFG_REGION_ARENA && t->alias_of < 0 &&
           t->kind != DFG_TENSOR_INPUT && !written[i];
}

int dfg_program_held_steps(const dfg_program *p, const uint8_t *written,
                           int32_t i, int32_t *first, int32_t *last)
{
    const dfg_program_tensor *t = &p->tensors[i];
    *first = t->first_step;
    *last = t->last_step;
    if (t->region != DFG_REGION_ARENA)
        return 0;
    if (t->alias_of < 0)
        return 1;
    int32_t r = t->alias_of;
    if (r >= p->n_tensors || !written[i] ||
        !dfg_program_is_assembled(p, written, r) ||
        t->first_step >= p->tensors[r].first_step)
        return 0;
    *last = p->tensors[r].first_step - 1;
    return 1;
}
