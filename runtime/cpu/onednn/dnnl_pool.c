/* Average pools on oneDNN over blocked tensors (dnnl_single.h). The
 * layout pass asks dfg_cpu_pool_takes_blocked (cpu_layout_rule.h) whether
 * the primitive of the blocked operands can be made; the session makes the
 * same one. Blocked max pools and global average pools run on dfg's
 * kernels (pool_blocked.h), which measured faster than oneDNN's. */
#include "runtime/cpu_layout_rule.h"
#include "runtime/cpu/onednn/dnnl_formats.h"
#include "runtime/cpu/onednn/dnnl_single.h"
#include "util/error.h"
#include "runtime/cpu/reduce/pool_blocked.h"
#include "ir/geometry/pool_geometry.h"

/* The average pooling of x into y (both 4-D f32 in layout) with no
 * scratchpad; NULL when oneDNN does not take it or ONNX's and oneDNN's
 * windows could differ (an average over ceil_mode's overhang that counts
 * padding). */
static dnnl_primitive_desc_t pool_desc(dnnl_engine_t engine, int32_t op,
                                       const dfg_attrs *attrs,
                                       const dfg_type *x, const dfg_type *y,
                                       int32_t layout)
{
    dfg_pool_geometry g;
    if (op != DFG_OP_AVERAGE_POOL ||
        x->dtype != DFG_F32 || x->rank != 4 || y->rank != 4 ||
        dfg_pool_geometry_make("pool", attrs, x, y, &g) != DFG_OK)
        return NULL;
    dnnl_dims_t pad_r;
    for (int d = 0; d < 2; d++) {
        int64_t in = d ? g.in_w : g.in_h, out = d ? g.out_w : g.out_h;
        /* ceil_mode's last window may reach past the padding */
        int64_t reach = (out - 1) * g.stride[d] +
                        (g.kernel[d] - 1) * g.dilation[d] + 1 - in -
                        g.pad_lo[d];
        pad_r[d] = reach > g.pad_hi[d] ? reach : g.pad_hi[d];
        if (reach > g.pad_hi[d] && g.count_include_pad)
            return NULL;
    }
    dnnl_alg_kind_t alg = g.count_include_pad
                              ? dnnl_pooling_avg_include_padding
                              : dnnl_pooling_avg_exclude_padding;
    dnnl_dims_t x_dims = {x->shape[0], x->shape[1], g.in_h, g.in_w};
    dnnl_dims_t y_dims = {y->shape[0], y->shape[1], g.out_h, g.out_w};
    dnnl_dims_t strides = {g.stride[0], g.stride[1]};
    dnnl_dims_t kernel = {g.kernel[0], g.kernel[1]};
    dnnl_dims_t dilation = {g.dilation[0] - 1, g.dilation[1] - 1};
    dnnl_dims_t pad_l = {g.pad_lo[0], g.pad_lo[1]};
    dnnl_memory_desc_t x_md, y_md;
    dnnl_pooling_v2_desc_t desc;
    if (dfg_dnnl_layout_md(&x_md, x_dims, layout) != 0 ||
        dfg_dnnl_layout_md(&y_md, y_dims, layout) != 0 ||
        dnnl_pooling_v2_forward_desc_init(&desc, dnnl_forward_inference, alg,
                                          &x_md, &y_md, strides, kernel,
                                          dilation, pad_l,
                                          pad_r) != dnnl_success)
        return NULL;
    return dfg_dnnl_unscratched_desc(&desc, engine);
}

int dfg_cpu_pool_takes_blocked(int32_t op, const dfg_attrs *attrs,
                               const struct dfg_type *x,
                               const struct dfg_type *y, int32_t layout)
{
    if (dfg_cpu_pool_blocked_takes(op, x, y, layout))
        return 1;
    dnnl_engine_t engine;
    if (dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success)
        return 0;
    dnnl_primitive_desc_t pd = pool_desc(engine, op, attrs, x, y, layout);
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    dnnl_engine_destroy(engine);
    return pd != NULL;
}

dfg_status dfg_dnnl_pool_create(dnnl_engine_t engine,
                                const dfg_kernel_args *step,
                                const dfg_allocator *allocator,
                                dfg_dnnl_single **out)
{
    const dfg_type *x = &step->in_types[0], *y = &step->out_types[0];
    dfg_dnnl_operand operands[2] = {
        {DNNL_ARG_SRC, dnnl_query_src_md, 0, step->in[0]},
        {DNNL_ARG_DST, dnnl_query_dst_md, 0, step->out[0]}};
    dnnl_primitive_desc_t pd =
        x->layout == y->layout
            ? pool_desc(engine, step->op, step->attrs, x, y, x->layout)
            : NULL;
    return dfg_dnnl_single_create(engine, pd, operands, 2, step, allocator,
                                  out);
}
