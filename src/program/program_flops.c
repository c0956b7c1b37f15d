/* A program's FLOPs and its recomputed steps (program_flops.h). */
#include "program/program_flops.h"

#include <string.h>

static uint64_t step_flops(const dfg_program_step *step)
{
    return step->flops > 0 ? (uint64_t)step->flops : 0;
}

uint64_t dfg_program_flops(const dfg_program *p)
{
    uint64_t flops = 0;
    for (int32_t s = 0; s < p->n_steps; s++)
        flops += step_flops(&p->steps[s]);
    return flops;
}

int dfg_program_step_recomputes(const dfg_program_step *step)
{
    return step->name && strstr(step->name, "/recompute_") != NULL;
}

void dfg_program_recomputation(const dfg_program *p, int32_t *steps,
                               uint64_t *extra_flops, uint64_t *other_flops)
{
    *steps = 0;
    *extra_flops = *other_flops = 0;
    for (int32_t s = 0; s < p->n_steps; s++) {
        uint64_t flops = step_flops(&p->steps[s]);
        if (dfg_program_step_recomputes(&p->steps[s])) {
            (*steps)++;
            *extra_flops += flops;
        } else {
            *other_flops += flops;
        }
    }
}
