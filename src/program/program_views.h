/* Which steps of a program have nothing to do at run time: a view op
 * (reshape, squeeze, a contiguous slice, ...) whose output the plan placed
 * inside its input's bytes. The executor skips them and the loader's
 * validator allows them (and only them) to "write" inside their input, so
 * both use this one definition. */
#ifndef DFG_PROGRAM_VIEWS_H
#define DFG_PROGRAM_VIEWS_H

#include "program.h"

/* 1 if the byte ranges of two tensors share at least one byte. */
int dfg_program_tensors_overlap(const dfg_program_tensor *a,
                                const dfg_program_tensor *b);

/* 1 if step is a view op whose output lies inside input 0's bytes. The
 * step's operand indices must be valid. */
int dfg_program_step_is_view(const dfg_program *program,
                             const dfg_program_step *step);

#endif
