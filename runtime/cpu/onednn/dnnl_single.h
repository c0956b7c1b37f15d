/* Steps on blocked tensors that are one oneDNN primitive with no scratch
 * (one that would need some is not taken), made once at session creation
 * over the step's operands in place: average_pool (dnnl_pool.c; blocked
 * max pools and global average pools are dfg's own, pool_blocked.h, as
 * are per-channel adds and muls, binary_blocked.h). The layout pass
 * keeps them blocked between convolutions (passes/layout_assign.c);
 * plain ones run on the reference kernels. And softmax along the last
 * axis of a plain f32 tensor (dnnl_softmax.c), where oneDNN's measures
 * faster than the reference kernel.
 *
 * Lifetime: made with the session's allocator, owns its oneDNN objects,
 * points into the step's regions (which must outlive it), freed by
 * dfg_dnnl_single_destroy. */
#ifndef DFG_CPU_DNNL_SINGLE_H
#define DFG_CPU_DNNL_SINGLE_H

#include <dnnl.h>
#include "dfg/allocator.h"
#include "runtime/cpu/kernels.h"

typedef struct dfg_dnnl_single dfg_dnnl_single;

/* An operand: its argument kind (DNNL_ARG_SRC, ...), the query and index
 * of its descriptor in the primitive descriptor, and its bytes. */
typedef struct dfg_dnnl_operand {
    int arg;
    dnnl_query_t what;
    int index;
    const void *data;
} dfg_dnnl_operand;

/* The primitive of pd (destroyed here; NULL gives *out NULL and DFG_OK)
 * over n (at most 3) operands, for step. */
dfg_status dfg_dnnl_single_create(dnnl_engine_t engine,
                                  dnnl_primitive_desc_t pd,
                                  const dfg_dnnl_operand *operands, int n,
                                  const dfg_kernel_args *step,
                                  const dfg_allocator *allocator,
                                  dfg_dnnl_single **out);

/* Prepares a pool step on engine; *out NULL, with DFG_OK, when oneDNN
 * does not take it. */
dfg_status dfg_dnnl_pool_create(dnnl_engine_t engine,
                                const dfg_kernel_args *step,
                                const dfg_allocator *allocator,
                                dfg_dnnl_single **out);
/* Prepares a softmax step; *out NULL, with DFG_OK, when oneDNN does not
 * take it. */
dfg_status dfg_dnnl_softmax_create(dnnl_engine_t engine,
                                   const dfg_kernel_args *step,
                                   const dfg_allocator *allocator,
                                   dfg_dnnl_single **out);

dfg_status dfg_dnnl_single_run(const dfg_dnnl_single *single,
                               dnnl_stream_t stream);
/* The implementation oneDNN chose, for reports. */
const char *dfg_dnnl_single_impl(const dfg_dnnl_single *single);
void dfg_dnnl_single_destroy(dfg_dnnl_single *single,
                             const dfg_allocator *allocator);

#endif
