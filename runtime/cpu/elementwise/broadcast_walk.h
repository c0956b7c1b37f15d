/* Walking a broadcast output on the CPU: the output is cut into pieces of
 * whole rows (or row segments, when rows are long), the pieces are spread
 * over OpenMP threads, and a callback computes each contiguous run. Used
 * by the binary ops, the comparisons and where. */
#ifndef DFG_CPU_BROADCAST_WALK_H
#define DFG_CPU_BROADCAST_WALK_H

#include <stdint.h>

#include "math/broadcast.h"
#include "runtime/cpu/kernels.h"

/* Computes output elements [out_offset, out_offset + n); operand k starts
 * at element offsets[k] and advances by strides[k] (0 or 1) per element. */
typedef void (*dfg_broadcast_run_fn)(void *ctx, int64_t out_offset,
                                     const int64_t *offsets,
                                     const int64_t *strides, int64_t n);

/* Describes inputs first..first+n-1 of args broadcast to output 0;
 * DFG_ERR_SHAPE if they do not broadcast to it (never trusted blindly:
 * a wrong shape here would read outside the buffers). */
dfg_status dfg_cpu_broadcast_init(const dfg_kernel_args *args, int32_t first,
                                  int32_t n, dfg_broadcast *b);

/* Calls run over every output element of b, in parallel when large. */
void dfg_cpu_broadcast_walk(const dfg_broadcast *b, dfg_broadcast_run_fn run,
                            void *ctx);

#endif
