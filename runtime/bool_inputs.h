/* Bool inputs on their way into a session's arena (runtime/bool_inputs.c).
 * A caller's bool bytes may hold any value; ONNX Runtime reads every
 * nonzero byte as true, and dfg's kernels assume 0 or 1. dfg_session_run
 * therefore uploads each bool input from a copy normalised to 0 and 1, in
 * a staging buffer the session allocates once with room for every bool
 * input (run allocates nothing, and an upload that reads its source late,
 * from a device's queue, reads bytes no later input of the run reuses). */
#ifndef DFG_BOOL_INPUTS_H
#define DFG_BOOL_INPUTS_H

#include <stddef.h>
#include <stdint.h>
#include "program/program.h"

/* Bytes of staging the program's bool inputs need (0 if it has none). */
size_t dfg_bool_inputs_bytes(const dfg_program *program);

/* The bytes to upload for input i: data itself, or for a bool input a
 * normalised copy at staging + *used (*used then advances past it).
 * staging holds dfg_bool_inputs_bytes; *used starts at 0 for each run. */
const void *dfg_bool_input_stage(const dfg_program *program, int32_t i,
                                 const void *data, uint8_t *staging,
                                 size_t *used);

#endif
