/* Pooling geometry shared by the backends (see pool_geometry.h). */
#include "ir/geometry/pool_geometry.h"

#include "util/error.h"

dfg_status dfg_pool_geometry_make(const char *op, const dfg_attrs *a,
                                  const dfg_type *x, const dfg_type *y,
                                  dfg_pool_geometry *g)
{
    if (x->rank != 4 || y->rank != 4 || x->shape[0] != y->shape[0] ||
        x->shape[1] != y->shape[1] || x->dtype != y->dtype) {
        char sx[96], sy[96];
        return dfg_error(DFG_ERR_SHAPE, "%s: input %s and output %s are not "
                         "[N,C,H,W] of the same N and C", op,
                         dfg_type_format(x, sx, sizeof sx),
                         dfg_type_format(y, sy, sizeof sy));
    }
    for (int i = 0; i < 2; i++)
        if (a->kernel[i] <= 0 || a->strides[i] <= 0 || a->dilations[i] <= 0 ||
            a->pads[i] < 0 || a->pads[i + 2] < 0)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "%s: kernel, strides and dilations must be "
                             "positive and pads not negative", op);
    *g = (dfg_pool_geometry){
        .planes = x->shape[0] * x->shape[1],
        .in_h = x->shape[2], .in_w = x->shape[3],
        .out_h = y->shape[2], .out_w = y->shape[3],
        .kernel = {a->kernel[0], a->kernel[1]},
        .stride = {a->strides[0], a->strides[1]},
        .dilation = {a->dilations[0], a->dilations[1]},
        .pad_lo = {a->pads[0], a->pads[1]},
        .pad_hi = {a->pads[2], a->pads[3]},
        .count_include_pad = a->count_include_pad != 0,
    };
    return DFG_OK;
}
