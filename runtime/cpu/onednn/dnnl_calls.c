/* A step's oneDNN calls (dnnl_calls.h). */
#include <string.h>

#include "runtime/cpu/onednn/dnnl_calls.h"
#include "runtime/cpu/onednn/dnnl_post_ops.h"
#include "util/error.h"

dnnl_memory_t dfg_dnnl_calls_memory(dfg_dnnl_calls *c, dnnl_engine_t engine,
                                    const dnnl_memory_desc_t *md, void *data)
{
    dnnl_memory_t m = NULL;
    if (c->n_memories == DFG_DNNL_MAX_MEMORIES ||
        dnnl_memory_create(&m, md, engine, data) != dnnl_success)
        return NULL;
    c->memories[c->n_memories++] = m;
    return m;
}

int dfg_dnnl_calls_add(dfg_dnnl_calls *c, const_dnnl_primitive_desc_t pd,
                       const dnnl_exec_arg_t *args, int n_args)
{
    if (c->n_calls == DFG_DNNL_MAX_CALLS || n_args > 5)
        return -1;
    dfg_dnnl_call *call = &c->calls[c->n_calls];
    if (dnnl_primitive_create(&call->primitive, pd) != dnnl_success)
        return -1;
    memcpy(call->args, args, (size_t)n_args * sizeof *args);
    call->n_args = n_args;
    c->n_calls++;
    return 0;
}

dfg_status dfg_dnnl_calls_run(const dfg_dnnl_calls *c, dnnl_stream_t stream,
                              const char *what)
{
    for (int i = 0; i < c->n_calls; i++) {
        const dfg_dnnl_call *call = &c->calls[i];
        if (dnnl_primitive_execute(call->primitive, stream, call->n_args,
                                   call->args) != dnnl_success)
            return dfg_error(DFG_ERR_INTERNAL, "oneDNN %s failed to run",
                             what);
    }
    dfg_dnnl_left_run(&c->left);
    return DFG_OK;
}

void dfg_dnnl_calls_destroy(dfg_dnnl_calls *c)
{
    for (int i = 0; i < c->n_calls; i++)
        dnnl_primitive_destroy(c->calls[i].primitive);
    for (int i = 0; i < c->n_memories; i++)
        dnnl_memory_destroy(c->memories[i]);
    c->n_calls = c->n_memories = 0;
}
