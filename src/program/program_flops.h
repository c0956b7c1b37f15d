/* A program's FLOPs (the sum of its steps' counts), and the steps of a
 * training program that recompute a saved activation under a memory
 * budget (passes/remat/remat.c names them "<forward node>/recompute_<k>"),
 * for the compiler's choices, the summary and the plan JSON. */
#ifndef DFG_PROGRAM_FLOPS_H
#define DFG_PROGRAM_FLOPS_H

#include "program/program.h"

/* The FLOPs of one run: every step's (a negative count as 0). */
uint64_t dfg_program_flops(const dfg_program *program);

/* 1 if step recomputes a forward value. */
int dfg_program_step_recomputes(const dfg_program_step *step);

/* Their count, their FLOPs and the other steps' FLOPs. */
void dfg_program_recomputation(const dfg_program *program, int32_t *steps,
                               uint64_t *extra_flops, uint64_t *other_flops);

#endif
