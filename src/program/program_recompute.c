/* Recomputed steps of a program (program_recompute.h). */
#include "program/program_recompute.h"

#include <string.h>

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
        uint64_t flops = p->steps[s].flops > 0 ? (uint64_t)p->steps[s].flops : 0;
        if (dfg_program_step_recomputes(&p->steps[s])) {
            (*steps)++;
            *extra_flops += flops;
        } else {
            *other_flops += flops;
        }
    }
}
