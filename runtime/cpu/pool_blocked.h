/* max_pool over blocked tensors (nChw8c, nChw16c) on dfg's own kernel
 * (pool_blocked.c), which measured several times faster than oneDNN 2.6's
 * pooling of the same tensors; the plain kernel (pool.c) hands blocked
 * steps to it, and the layout pass keeps such pools blocked
 * (dfg_cpu_pool_takes_blocked). Average pools stay on oneDNN. */
#ifndef DFG_CPU_POOL_BLOCKED_H
#define DFG_CPU_POOL_BLOCKED_H

#include "kernels.h"

/* 1 if dfg_cpu_max_pool_blocked runs op over x into y, both laid out as
 * layout (blocked): a max_pool of f32 tensors whose channels fill whole
 * blocks. */
int dfg_cpu_max_pool_blocked_takes(int32_t op, const dfg_type *x,
                                   const dfg_type *y, int32_t layout);

/* max_pool of a blocked x into y of the same layout. */
dfg_status dfg_cpu_max_pool_blocked(const dfg_kernel_args *args);

#endif
