/* The geometry the forward and the training planners both fill
 * (step_plan_ops.h): a pool's parameters and a conv's im2col matrix. Calls
 * neither planner, so that they call each other one way. */
#include "runtime/cuda/plan/step_plan_ops.h"

#include "ir/geometry/pool_geometry.h"

dfg_status dfg_cuda_pool_params(const char *op, const dfg_attrs *a,
                                const dfg_type *tx, const dfg_type *ty,
                                int is_max, dfg_cuda_pool *pool)
{
    dfg_pool_geometry g;
    dfg_status st = dfg_pool_geometry_make(op, a, tx, ty, &g);
    if (st != DFG_OK)
        return st;
    *pool = (dfg_cuda_pool){
        .is_max = is_max,
        .count_include_pad = g.count_include_pad,
        .dtype = tx->dtype,
        .outputs = dfg_type_numel(ty),
        .in_h = g.in_h, .in_w = g.in_w, .out_h = g.out_h, .out_w = g.out_w,
        .kernel = {g.kernel[0], g.kernel[1]},
        .stride = {g.stride[0], g.stride[1]},
        .dilation = {g.dilation[0], g.dilation[1]},
        .pad_lo = {g.pad_lo[0], g.pad_lo[1]},
        .pad_hi = {g.pad_hi[0], g.pad_hi[1]},
        .index32 = dfg_index_fits_narrow(dfg_type_numel(ty)),
        .channels = tx->layout == DFG_LAYOUT_NHWC ? tx->shape[1] : 0,
    };
    return DFG_OK;
}

dfg_im2col_dims dfg_cuda_im2col_dims(const dfg_conv_geometry *g)
{
    return (dfg_im2col_dims){
        g->in_h, g->in_w, g->kernel_h, g->kernel_w, g->out_h, g->out_w,
        g->stride[0], g->stride[1], g->dilation[0], g->dilation[1],
        g->pad_top, g->pad_left};
}
