/* A step that is one oneDNN primitive without scratch (dnnl_single.h). */
#include <string.h>

#include "runtime/cpu/onednn/dnnl_single.h"
#include "util/error.h"
#include "util/memory.h"

#define MAX_OPERANDS 3

struct dfg_dnnl_single {
    dnnl_primitive_t primitive;
    dnnl_exec_arg_t args[MAX_OPERANDS];
    int n_args;
    dfg_op op;
    char impl[64];
};

dfg_status dfg_dnnl_single_create(dnnl_engine_t engine,
                                  dnnl_primitive_desc_t pd,
                                  const dfg_dnnl_operand *operands, int n,
                                  const dfg_kernel_args *step,
                                  const dfg_allocator *allocator,
                                  dfg_dnnl_single **out)
{
    *out = NULL;
    if (!pd)
        return DFG_OK;
    dfg_dnnl_single *s = n <= MAX_OPERANDS
                             ? dfg_calloc(allocator, 1, sizeof *s)
                             : NULL;
    int ok = s != NULL;
    for (int i = 0; ok && i < n; i++) {
        const dfg_dnnl_operand *o = &operands[i];
        ok = dnnl_memory_create(&s->args[i].memory,
                                dnnl_primitive_desc_query_md(pd, o->what,
                                                             o->index),
                                engine, (void *)o->data) == dnnl_success;
        s->args[i].arg = o->arg;
        s->n_args += ok;
    }
    ok = ok && dnnl_primitive_create(&s->primitive, pd) == dnnl_success;
    const char *impl = NULL;
    if (ok && dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0,
                                        &impl) == dnnl_success && impl)
        strncpy(s->impl, impl, sizeof s->impl - 1);
    dnnl_primitive_desc_destroy(pd);
    if (!ok) {
        dfg_dnnl_single_destroy(s, allocator);
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "cpu backend: oneDNN could not prepare a %s",
                         dfg_op_get(step->op)->name);
    }
    s->op = step->op;
    *out = s;
    return DFG_OK;
}

dfg_status dfg_dnnl_single_run(const dfg_dnnl_single *s, dnnl_stream_t stream)
{
    return dnnl_primitive_execute(s->primitive, stream, s->n_args, s->args) ==
                   dnnl_success
               ? DFG_OK
               : dfg_error(DFG_ERR_INTERNAL, "oneDNN %s (%s) failed to run",
                           dfg_op_get(s->op)->name, s->impl);
}

const char *dfg_dnnl_single_impl(const dfg_dnnl_single *s) { return s->impl; }

void dfg_dnnl_single_destroy(dfg_dnnl_single *s,
                             const dfg_allocator *allocator)
{
    if (!s)
        return;
    if (s->primitive)
        dnnl_primitive_destroy(s->primitive);
    for (int i = 0; i < s->n_args; i++)
        dnnl_memory_destroy(s->args[i].memory);
    dfg_free(allocator, s);
}
