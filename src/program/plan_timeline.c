#include "program/plan_timeline.h"

#include "program/program_views.h"
#include "util/error.h"
#include "util/memory.h"

int dfg_tensor_in_arena(const dfg_program *p, int32_t tensor)
{
    return tensor >= 0 && tensor < p->n_tensors &&
           p->tensors[tensor].region == DFG_REGION_ARENA;
}

static void mark_producers(const dfg_program *p, int32_t *producer)
{
    for (int32_t i = 0; i < p->n_tensors; i++)
        producer[i] = -1;
    for (int32_t s = 0; s < p->n_steps; s++) {
        const dfg_program_step *step = &p->steps[s];
        for (int32_t o = 0; o < step->n_outputs; o++)
            if (step->outputs[o] >= 0 && step->outputs[o] < p->n_tensors)
                producer[step->outputs[o]] = s;
        if (step->workspace >= 0 && step->workspace < p->n_tensors)
            producer[step->workspace] = s;
    }
}

void dfg_plan_live_bytes(const dfg_program *p, const uint8_t *written,
                         int64_t alignment, int64_t *live_bytes)
{
    int64_t *delta = live_bytes;
    for (int32_t s = 0; s < p->n_steps; s++)
        delta[s] = 0;
    for (int32_t i = 0; i < p->n_tensors; i++) {
        int32_t first, last;
        if (!dfg_program_held_steps(p, written, i, &first, &last) ||
            last < 0 || first >= p->n_steps || last < first)
            continue;
        int64_t bytes = dfg_align_up(p->tensors[i].bytes, alignment);
        first = first > 0 ? first : 0;
        delta[first] += bytes;
        if (last + 1 < p->n_steps)
            delta[last + 1] -= bytes;
    }
    int64_t live = 0;
    for (int32_t s = 0; s < p->n_steps; s++) {
        live += delta[s];
        delta[s] = live;
    }
}

int32_t dfg_plan_peak_step(const int64_t *live_bytes, int32_t n_steps)
{
    int32_t peak = -1;
    for (int32_t s = 0; s < n_steps; s++)
        if (peak < 0 || live_bytes[s] > live_bytes[peak])
            peak = s;
    return peak;
}

dfg_status dfg_plan_timeline_build(const dfg_program *p, const char *who,
                                   dfg_plan_timeline *t)
{
    *t = (dfg_plan_timeline){.n_steps = p->n_steps, .peak_step = -1};
    t->live_bytes = dfg_calloc(&p->allocator, (size_t)p->n_steps + 1,
                               sizeof *t->live_bytes);
    t->producer = dfg_calloc(&p->allocator, (size_t)p->n_tensors + 1,
                             sizeof *t->producer);
    if (!t->live_bytes || !t->producer) {
        dfg_plan_timeline_free(p, t);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "%s: out of memory for %d "
                         "steps and %d tensors", who, p->n_steps, p->n_tensors);
    }
    mark_producers(p, t->producer);
    uint8_t *written = dfg_calloc(&p->allocator, (size_t)p->n_tensors + 1, 1);
    if (!written) {
        dfg_plan_timeline_free(p, t);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "%s: out of memory for %d "
                         "tensors", who, p->n_tensors);
    }
    dfg_program_mark_written(p, written);
    int64_t alignment = p->stats.alignment > 0 ? (int64_t)p->stats.alignment : 1;
    dfg_plan_live_bytes(p, written, alignment, t->live_bytes);
    dfg_free(&p->allocator, written);
    t->peak_step = dfg_plan_peak_step(t->live_bytes, p->n_steps);
    t->peak_bytes = t->peak_step >= 0 ? t->live_bytes[t->peak_step] : 0;
    t->extent_bytes = t->peak_bytes;
    if (p->region_bytes[DFG_REGION_ARENA] > t->extent_bytes)
        t->extent_bytes = p->region_bytes[DFG_REGION_ARENA];
    for (int32_t i = 0; i < p->n_tensors; i++) {
        if (!dfg_tensor_in_arena(p, i))
            continue;
        t->n_arena++;
        int64_t end = p->tensors[i].offset + p->tensors[i].bytes;
        if (end > t->extent_bytes)
            t->extent_bytes = end;
    }
    return DFG_OK;
}

void dfg_plan_timeline_free(const dfg_program *p, dfg_plan_timeline *t)
{
    dfg_free(&p->allocator, t->live_bytes);
    dfg_free(&p->allocator, t->producer);
    t->live_bytes = NULL;
    t->producer = NULL;
}

const char *dfg_plan_timeline_op(const dfg_program *p,
                                 const dfg_plan_timeline *t, int32_t tensor)
{
    int32_t step = t->producer[tensor];
    if (step < 0)
        return "graph input";
    const dfg_op_info *info = dfg_op_get(p->steps[step].op);
    return info ? info->name : "?";
}
