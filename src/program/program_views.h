/* Which steps of a program have nothing to do at run time: a view op
 * (reshape, squeeze, a contiguous slice, ...) whose output the plan placed
 * inside its input's bytes. The executor skips them and the loader's
 * validator allows them (and only them) to "write" inside their input, so
 * both use this one definition. */
#ifndef DFG_PROGRAM_VIEWS_H
#define DFG_PROGRAM_VIEWS_H

#include "program/program.h"

/* 1 if the byte ranges of two tensors share at least one byte. */
int dfg_program_tensors_overlap(const dfg_program_tensor *a,
                                const dfg_program_tensor *b);

/* 1 if step is a view op whose output lies inside input 0's bytes. The
 * step's operand indices must be valid. */
int dfg_program_step_is_view(const dfg_program *program,
                             const dfg_program_step *step);

/* written[i] = 1 for each tensor some step writes (an output of a step
 * that is no view, or a step's workspace), else 0; written has n_tensors
 * entries. A step with an operand index out of range writes nothing. */
void dfg_program_mark_written(const dfg_program *program, uint8_t *written);

/* 1 if tensor i is an arena buffer that no step writes as a whole, so the
 * tensors written into it hold its bytes slot by slot until it is whole
 * at its first_step (a concat without copies, passes/concat_cells.c). */
int dfg_program_is_assembled(const dfg_program *program,
                             const uint8_t *written, int32_t i);

/* The steps over which arena tensor i holds bytes of its own, in
 * [*first, *last]: a root over its lifetime; a tensor written into an
 * assembled root (its alias_of) from its step until the step before the
 * root is whole. Returns 0 for a tensor that holds none. */
int dfg_program_held_steps(const dfg_program *program, const uint8_t *written,
                           int32_t i, int32_t *first, int32_t *last);

#endif
