/* Part of dfg_program_verify: gradient buckets are contiguous arena
 * ranges holding their gradients in place
 * (src/program/program_verify_buckets.c). */
#ifndef DFG_PROGRAM_VERIFY_BUCKETS_H
#define DFG_PROGRAM_VERIFY_BUCKETS_H

#include "program/program.h"

/* DFG_ERR_PLAN naming the step for a bucket that is not one. Tensor and
 * step indices must have been checked (dfg_program_verify does first). */
dfg_status dfg_program_verify_buckets(const dfg_program *program,
                                      int64_t alignment);

#endif
