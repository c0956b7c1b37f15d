/* A program's bytes per tensor class (dfg_tensor_kind: weight, gradient,
 * optimizer_state, ...), shared by the summary's "bytes by class" and the
 * plan JSON's "bytes_by_kind" (docs/plan-json.md), so that the two never
 * disagree. */
#ifndef DFG_KIND_BYTES_H
#define DFG_KIND_BYTES_H

#include <stdint.h>
#include "program/program.h"

/* bytes[k] = the unplanned sizes of the tensors of kind k that own their
 * bytes (views, which share their source's, are left out). Returns 1 for
 * a training program (it has gradients, optimizer state, accumulators or
 * saved activations), else 0. */
int dfg_program_kind_bytes(const dfg_program *program,
                           uint64_t bytes[DFG_TENSOR_KIND_COUNT]);

#endif
