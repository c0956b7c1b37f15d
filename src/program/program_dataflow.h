/* Part of dfg_program_validate, which the loader runs on every program
 * file (src/program/program_dataflow.c): the steps, run in order
 * over the arena's bytes, read only values that were written and are
 * still there. DFG_ERR_FORMAT, naming the step and the tensor, if not.
 * Operand indices must be valid and alias_of links free of cycles. */
#ifndef DFG_PROGRAM_DATAFLOW_H
#define DFG_PROGRAM_DATAFLOW_H

#include "program/program.h"

dfg_status dfg_program_check_dataflow(const dfg_program *program);

#endif
