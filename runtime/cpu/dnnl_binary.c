/* Per-channel add and mul on oneDNN over blocked tensors
 * (dnnl_binary.h). The layout pass asks dfg_cpu_binary_takes_blocked
 * (cpu_layout_rule.h) whether the primitive can be made; the session
 * makes the same one. */
#include <string.h>

#include "cpu_layout_rule.h"
#include "dnnl_binary.h"
#include "dnnl_formats.h"
#include "layout_rule.h"
#include "error.h"
#include "memory.h"

static dnnl_primitive_desc_t binary_desc(dnnl_engine_t engine, int32_t op,
                                         const dfg_type *in,
                                         const dfg_type *out, int32_t layout)
{
    int full = dfg_layout_per_channel_full(op, in, 2, out);
    if (full < 0)
        return NULL;
    const dfg_type *a = &in[full], *b = &in[1 - full];
    dnnl_dims_t a_dims = {a->shape[0], a->shape[1], a->shape[2], a->shape[3]};
    dnnl_dims_t b_dims = {b->shape[0], b->shape[1], 1, 1};
    dnnl_memory_desc_t a_md, b_md, y_md;
    dnnl_binary_desc_t desc;
    if (dfg_dnnl_layout_md(&a_md, a_dims, layout) != 0 ||
        dfg_dnnl_layout_md(&b_md, b_dims, layout) != 0 ||
        dfg_dnnl_layout_md(&y_md, a_dims, layout) != 0 ||
        dnnl_binary_desc_init(&desc,
                              op == DFG_OP_MUL ? dnnl_binary_mul
                                               : dnnl_binary_add,
                              &a_md, &b_md, &y_md) != dnnl_success)
        return NULL;
    return dfg_dnnl_unscratched_desc(&desc, engine);
}

int dfg_cpu_binary_takes_blocked(int32_t op, const struct dfg_type *in,
                                 const struct dfg_type *out, int32_t layout)
{
    dnnl_engine_t engine;
    if (dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success)
        return 0;
    dnnl_primitive_desc_t pd = binary_desc(engine, op, in, out, layout);
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    dnnl_engine_destroy(engine);
    return pd != NULL;
}

struct dfg_dnnl_binary {
    dnnl_primitive_t primitive;
    dnnl_memory_t a, b, y;
    char impl[64];
};

static dnnl_memory_t memory_of(dnnl_engine_t engine,
                               const_dnnl_primitive_desc_t pd,
                               dnnl_query_t what, int index, const void *data)
{
    dnnl_memory_t m = NULL;
    if (dnnl_memory_create(&m, dnnl_primitive_desc_query_md(pd, what, index),
                           engine, (void *)data) != dnnl_success)
        return NULL;
    return m;
}

dfg_status dfg_dnnl_binary_create(dnnl_engine_t engine,
                                  const dfg_kernel_args *step,
                                  const dfg_allocator *allocator,
                                  dfg_dnnl_binary **out)
{
    *out = NULL;
    const dfg_type *in = step->in_types, *y = &step->out_types[0];
    int full = dfg_layout_per_channel_full(step->op, in, step->n_inputs, y);
    if (full < 0 || in[0].layout != y->layout || in[1].layout != y->layout)
        return DFG_OK;
    dnnl_primitive_desc_t pd = binary_desc(engine, step->op, in, y,
                                           y->layout);
    if (!pd)
        return DFG_OK;
    dfg_dnnl_binary *p = dfg_calloc(allocator, 1, sizeof *p);
    int ok = p != NULL &&
             (p->a = memory_of(engine, pd, dnnl_query_src_md, 0,
                               step->in[full])) != NULL &&
             (p->b = memory_of(engine, pd, dnnl_query_src_md, 1,
                               step->in[1 - full])) != NULL &&
             (p->y = memory_of(engine, pd, dnnl_query_dst_md, 0,
                               step->out[0])) != NULL &&
             dnnl_primitive_create(&p->primitive, pd) == dnnl_success;
    const char *impl = NULL;
    if (ok && dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0,
                                        &impl) == dnnl_success && impl)
        strncpy(p->impl, impl, sizeof p->impl - 1);
    dnnl_primitive_desc_destroy(pd);
    if (!ok) {
        dfg_dnnl_binary_destroy(p, allocator);
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "cpu backend: oneDNN could not prepare a %s",
                         dfg_op_get(step->op)->name);
    }
    *out = p;
    return DFG_OK;
}

dfg_status dfg_dnnl_binary_run(const dfg_dnnl_binary *p, dnnl_stream_t stream)
{
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC_0, p->a},
                               {DNNL_ARG_SRC_1, p->b},
                               {DNNL_ARG_DST, p->y}};
    return dnnl_primitive_execute(p->primitive, stream, 3, args) ==
                   dnnl_success
               ? DFG_OK
               : dfg_error(DFG_ERR_INTERNAL,
                           "oneDNN binary (%s) failed to run", p->impl);
}

const char *dfg_dnnl_binary_impl(const dfg_dnnl_binary *p) { return p->impl; }

void dfg_dnnl_binary_destroy(dfg_dnnl_binary *p,
                             const dfg_allocator *allocator)
{
    if (!p)
        return;
    if (p->primitive)
        dnnl_primitive_destroy(p->primitive);
    if (p->a)
        dnnl_memory_destroy(p->a);
    if (p->b)
        dnnl_memory_destroy(p->b);
    if (p->y)
        dnnl_memory_destroy(p->y);
    dfg_free(allocator, p);
}
