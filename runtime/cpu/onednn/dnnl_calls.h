/* A step's oneDNN work as a list of calls made once at session creation
 * (dnnl_conv.c, dnnl_conv_grad.c): reorders and a primitive, each with
 * the memories it runs on, executed in order at every run, then the
 * post-op the primitive left to dfg (dfg_dnnl_post_op_left), if any,
 * bound with dfg_dnnl_left_bind.
 *
 * Lifetime: a dfg_dnnl_calls lives inside its step's object (zeroed
 * first); it owns its primitives and memories (which point into the
 * step's regions and workspace) until dfg_dnnl_calls_destroy. */
#ifndef DFG_CPU_DNNL_CALLS_H
#define DFG_CPU_DNNL_CALLS_H

#include <dnnl.h>
#include "dfg/attrs.h"
#include "dfg/status.h"
#include "ir/tensor_type.h"
#include "runtime/cpu/onednn/dnnl_post_ops.h"

#define DFG_DNNL_MAX_CALLS 5
#define DFG_DNNL_MAX_MEMORIES 10

typedef struct dfg_dnnl_call {
    dnnl_primitive_t primitive;
    int n_args;
    dnnl_exec_arg_t args[5];
} dfg_dnnl_call;

typedef struct dfg_dnnl_calls {
    dfg_dnnl_call calls[DFG_DNNL_MAX_CALLS];
    int n_calls;
    dnnl_memory_t memories[DFG_DNNL_MAX_MEMORIES];
    int n_memories;
    dfg_dnnl_left left; /* the post-op the primitive left to dfg */
} dfg_dnnl_calls;

/* A memory of md over data, kept by c; NULL if oneDNN refuses it. */
dnnl_memory_t dfg_dnnl_calls_memory(dfg_dnnl_calls *c, dnnl_engine_t engine,
                                    const dnnl_memory_desc_t *md, void *data);

/* Appends the primitive of pd run with args (at most 5); -1 if oneDNN
 * cannot make it. */
int dfg_dnnl_calls_add(dfg_dnnl_calls *c, const_dnnl_primitive_desc_t pd,
                       const dnnl_exec_arg_t *args, int n_args);

/* Runs the calls in order; what names the step in an error. */
dfg_status dfg_dnnl_calls_run(const dfg_dnnl_calls *c, dnnl_stream_t stream,
                              const char *what);

void dfg_dnnl_calls_destroy(dfg_dnnl_calls *c);

#endif
