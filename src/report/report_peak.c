#include "report/report_peak.h"

#include <stdio.h>
#include <string.h>
#include "program/plan_timeline.h"
#include "program/program_views.h"
#include "util/memory.h"

/* The op's own workspace for step s (its workspace rule on the step's
 * operand types), or -1 when the rule cannot say; with least, the least
 * its kernel works with (dfg_op_least_workspace). */
static int64_t own_workspace(const dfg_program *p, int32_t s, int least)
{
    const dfg_program_step *st = &p->steps[s];
    const dfg_op_info *info = dfg_op_get(st->op);
    if (!info || !info->workspace)
        return 0;
    int32_t n = st->n_inputs + st->n_outputs;
    dfg_type *types = dfg_calloc(&p->allocator, (size_t)n + 1, sizeof *types);
    if (!types)
        return -1;
    for (int32_t j = 0; j < n; j++) {
        int32_t t = j < st->n_inputs ? st->inputs[j]
                                     : st->outputs[j - st->n_inputs];
        if (t >= 0 && t < p->n_tensors)
            types[j] = p->tensors[t].type;
        else
            types[j].rank = -1;
    }
    int64_t bytes =
        least ? dfg_op_least_workspace(st->op, &st->attrs, types, st->n_inputs,
                                       types + st->n_inputs, st->n_outputs)
              : info->workspace(&st->attrs, types, st->n_inputs,
                                types + st->n_inputs, st->n_outputs);
    dfg_free(&p->allocator, types);
    return bytes;
}

/* 1 if step s reads or writes a tensor in a layout other than plain:
 * only the library runs it there, its scratch included. */
static int runs_laid_out(const dfg_program *p, int32_t s)
{
    const dfg_program_step *st = &p->steps[s];
    for (int32_t j = 0; j < st->n_inputs + st->n_outputs; j++) {
        int32_t t = j < st->n_inputs ? st->inputs[j]
                                     : st->outputs[j - st->n_inputs];
        if (t >= 0 && t < p->n_tensors &&
            p->tensors[t].type.layout != DFG_LAYOUT_PLAIN)
            return 1;
    }
    return 0;
}

void dfg_report_peak_find(const dfg_program *p, dfg_report_peak *peak)
{
    memset(peak, 0, sizeof *peak);
    peak->step = -1;
    /* A tensor that shares another's bytes is counted only while it holds
     * bytes of its own (dfg_program_held_steps). */
    uint8_t *written = dfg_calloc(&p->allocator, (size_t)p->n_tensors + 1, 1);
    int64_t *live = dfg_calloc(&p->allocator, (size_t)p->n_steps + 1,
                               sizeof *live);
    if (written && live) {
        dfg_program_mark_written(p, written);
        dfg_plan_live_bytes(p, written, 1, live);
        peak->step = dfg_plan_peak_step(live, p->n_steps);
        peak->live_bytes = peak->step >= 0 ? (uint64_t)live[peak->step] : 0;
    }
    dfg_free(&p->allocator, written);
    dfg_free(&p->allocator, live);
    int32_t w = peak->step >= 0 ? p->steps[peak->step].workspace : -1;
    if (w < 0 || w >= p->n_tensors || p->tensors[w].bytes <= 0)
        return;
    peak->workspace = p->tensors[w].bytes;
    peak->own_workspace = own_workspace(p, peak->step, 0);
    peak->library_scratch = p->workspace_rule[0] != '\0' &&
                            !runs_laid_out(p, peak->step) &&
                            peak->own_workspace >= 0 &&
                            peak->workspace > peak->own_workspace;
}

uint64_t dfg_report_scratch_free_bound(const dfg_program *p)
{
    int64_t alignment = p->stats.alignment > 0 ? (int64_t)p->stats.alignment
                                               : 1;
    uint8_t *written = dfg_calloc(&p->allocator, (size_t)p->n_tensors + 1, 1);
    int64_t *live = dfg_calloc(&p->allocator, (size_t)p->n_steps + 1,
                               sizeof *live);
    int64_t bound = 0;
    if (written && live) {
        dfg_program_mark_written(p, written);
        dfg_plan_live_bytes(p, written, alignment, live);
        for (int32_t s = 0; s < p->n_steps; s++) {
            int32_t w = p->steps[s].workspace;
            int64_t own = w >= 0 && w < p->n_tensors &&
                                  p->workspace_rule[0] != '\0' &&
                                  !runs_laid_out(p, s)
                              ? own_workspace(p, s, 0)
                              : -1;
            if (own >= 0 && p->tensors[w].bytes > own) {
                int64_t least = own_workspace(p, s, 1);
                if (least < 0 || least > own)
                    least = own;
                live[s] -= dfg_align_up(p->tensors[w].bytes, alignment) -
                           dfg_align_up(least, alignment);
            }
            if (live[s] > bound)
                bound = live[s];
        }
    }
    dfg_free(&p->allocator, written);
    dfg_free(&p->allocator, live);
    return (uint64_t)bound;
}

const char *dfg_report_peak_scratch_name(const dfg_program *p)
{
    static _Thread_local char name[DFG_PROGRAM_RULE_NAME_BYTES + 20];
    if (strcmp(p->workspace_rule, "cpu") == 0)
        return "oneDNN scratch";
    snprintf(name, sizeof name, "%.*s backend scratch",
             DFG_PROGRAM_RULE_NAME_BYTES - 1, p->workspace_rule);
    return name;
}
