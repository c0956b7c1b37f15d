/* Part of dfg_program_verify (src/program/program_verify_roots.c): every
 * arena tensor that shares a root's bytes lies inside what the root holds
 * at each of its steps. roots[i] is the tensor whose bytes tensor i shares
 * in the end (i itself for a root); operand indices must be valid. */
#ifndef DFG_PROGRAM_VERIFY_ROOTS_H
#define DFG_PROGRAM_VERIFY_ROOTS_H

#include "program/program.h"

/* roots[i] (n_tensors entries): the tensor whose bytes tensor i shares in
 * the end, following alias_of. DFG_ERR_PLAN on an alias outside the table
 * or a cycle. */
dfg_status dfg_program_alias_roots(const dfg_program *program, int32_t *roots);

dfg_status dfg_program_verify_roots(const dfg_program *program,
                                    const int32_t *roots);

#endif
