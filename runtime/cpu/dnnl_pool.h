/* max_pool, average_pool and global_average_pool on oneDNN, for steps whose tensors are
 * blocked (the layout pass keeps a pool between convolutions blocked,
 * passes/layout_assign.c): a pooling primitive made once at session
 * creation on the step's x and y in their layout, run with no scratch
 * (one that would need some is not taken). Plain pools stay on the
 * reference kernel (runtime/cpu/pool.c).
 *
 * Lifetime: made by dfg_dnnl_pool_create with the session's allocator,
 * owns its oneDNN objects, points into the step's regions (which must
 * outlive it), freed by dfg_dnnl_pool_destroy. */
#ifndef DFG_CPU_DNNL_POOL_H
#define DFG_CPU_DNNL_POOL_H

#include <dnnl.h>
#include "dfg/allocator.h"
#include "kernels.h"

typedef struct dfg_dnnl_pool dfg_dnnl_pool;

/* Prepares step (a pool) on engine; *out NULL, with DFG_OK, when oneDNN
 * does not take it. */
dfg_status dfg_dnnl_pool_create(dnnl_engine_t engine,
                                const dfg_kernel_args *step,
                                const dfg_allocator *allocator,
                                dfg_dnnl_pool **out);
dfg_status dfg_dnnl_pool_run(const dfg_dnnl_pool *pool, dnnl_stream_t stream);
const char *dfg_dnnl_pool_impl(const dfg_dnnl_pool *pool);
void dfg_dnnl_pool_destroy(dfg_dnnl_pool *pool, const dfg_allocator *allocator);

#endif
