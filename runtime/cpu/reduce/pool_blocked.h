/* max_pool and global_average_pool over blocked tensors (nChw8c,
 * nChw16c) on dfg's own kernels (pool_blocked.c), which measured faster
 * than oneDNN 2.6's pooling of the same tensors (several times for max
 * pools and small planes); the kernel table gives them the blocked steps
 * of the plain kernels (pool.c, reduce.c) when a session is created
 * (dfg_cpu_kernel_for_step), and the layout pass keeps such pools blocked
 * (dfg_cpu_pool_takes_blocked). Average pools with a window stay on
 * oneDNN. */
#ifndef DFG_CPU_POOL_BLOCKED_H
#define DFG_CPU_POOL_BLOCKED_H

#include "runtime/cpu/kernels.h"

/* 1 if the kernels below run op over x into y, both laid out as layout
 * (blocked): a max_pool or global_average_pool of f32 tensors whose
 * channels fill whole blocks. */
int dfg_cpu_pool_blocked_takes(int32_t op, const dfg_type *x,
                               const dfg_type *y, int32_t layout);

/* max_pool, global_average_pool of a blocked x into y of the same
 * layout. */
dfg_status dfg_cpu_max_pool_blocked(const dfg_kernel_args *args);
dfg_status dfg_cpu_global_average_pool_blocked(const dfg_kernel_args *args);

#endif
