/* Per-channel add and mul on oneDNN over blocked tensors
 * (dnnl_single.h). The layout pass asks dfg_cpu_binary_takes_blocked
 * (cpu_layout_rule.h) whether the primitive can be made; the session
 * makes the same one. */
#include "cpu_layout_rule.h"
#include "dnnl_formats.h"
#include "dnnl_single.h"
#include "layout_rule.h"

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

dfg_status dfg_dnnl_binary_create(dnnl_engine_t engine,
                                  const dfg_kernel_args *step,
                                  const dfg_allocator *allocator,
                                  dfg_dnnl_single **out)
{
    *out = NULL;
    const dfg_type *in = step->in_types, *y = &step->out_types[0];
    int full = dfg_layout_per_channel_full(step->op, in, step->n_inputs, y);
    if (full < 0 || in[0].layout != y->layout || in[1].layout != y->layout)
        return DFG_OK;
    dfg_dnnl_operand operands[3] = {
        {DNNL_ARG_SRC_0, dnnl_query_src_md, 0, step->in[full]},
        {DNNL_ARG_SRC_1, dnnl_query_src_md, 1, step->in[1 - full]},
        {DNNL_ARG_DST, dnnl_query_dst_md, 0, step->out[0]}};
    return dfg_dnnl_single_create(
        engine, binary_desc(engine, step->op, in, y, y->layout), operands, 3,
        step, allocator, out);
}
