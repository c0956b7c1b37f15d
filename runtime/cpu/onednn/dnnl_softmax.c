/* softmax along the last axis of a plain f32 tensor on oneDNN
 * (dnnl_single.h): the tensor as [rows, n], oneDNN's jit softmax
 * (accurate: the row's maximum subtracted first), in place or not. One
 * thread, [12 x 197, 197] (a vit_b_16 attention's scores): 0.36 ms
 * against 0.70 ms for dfg's kernel (softmax.c), CPU time, best of 50. */
#include <string.h>

#include "ir/geometry/reduce_geometry.h"
#include "runtime/cpu/onednn/dnnl_formats.h"
#include "runtime/cpu/onednn/dnnl_single.h"

static dnnl_primitive_desc_t softmax_desc(dnnl_engine_t engine,
                                          const dfg_kernel_args *step)
{
    const dfg_type *x = &step->in_types[0];
    int64_t axis;
    if (step->op != DFG_OP_SOFTMAX || x->dtype != DFG_F32 ||
        x->layout != DFG_LAYOUT_PLAIN ||
        step->out_types[0].layout != DFG_LAYOUT_PLAIN ||
        dfg_row_axis_check(step->op, step->attrs, x, &step->out_types[0],
                           &axis) != DFG_OK ||
        axis != x->rank - 1 || dfg_type_numel(x) == 0)
        return NULL;
    dnnl_dims_t dims = {dfg_type_numel(x) / x->shape[axis], x->shape[axis]};
    dnnl_memory_desc_t md;
    dnnl_softmax_v2_desc_t desc;
    if (dnnl_memory_desc_init_by_tag(&md, 2, dims, dnnl_f32, dnnl_ab) !=
            dnnl_success ||
        dnnl_softmax_v2_forward_desc_init(&desc, dnnl_forward_inference,
                                          dnnl_softmax_accurate, &md, &md,
                                          1) != dnnl_success)
        return NULL;
    /* oneDNN's reference softmax would be slower than dfg's kernel. */
    dnnl_primitive_desc_t pd = dfg_dnnl_unscratched_desc(&desc, engine);
    const char *impl = NULL;
    if (pd && (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0,
                                         &impl) != dnnl_success ||
               !impl || strncmp(impl, "ref", 3) == 0)) {
        dnnl_primitive_desc_destroy(pd);
        pd = NULL;
    }
    return pd;
}

dfg_status dfg_dnnl_softmax_create(dnnl_engine_t engine,
                                   const dfg_kernel_args *step,
                                   const dfg_allocator *allocator,
                                   dfg_dnnl_single **out)
{
    dfg_dnnl_operand operands[2] = {
        {DNNL_ARG_SRC, dnnl_query_src_md, 0, step->in[0]},
        {DNNL_ARG_DST, dnnl_query_dst_md, 0, step->out[0]}};
    return dfg_dnnl_single_create(engine, softmax_desc(engine, step),
                                  operands, 2, step, allocator, out);
}
