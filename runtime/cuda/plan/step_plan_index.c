/* Step plans of the index-driven ops (index_ops.h, sampling_ops.h):
 * arg_max / arg_min, gather_elements, scatter_nd, resize and top_k; and
 * the operand check every planner of the later ops starts with. */
#include <math.h>

#include "runtime/cuda/plan/layout_plan.h"
#include "runtime/cuda/plan/step_plan_ops.h"
#include "util/error.h"

dfg_status dfg_cuda_check_operands(const dfg_step_args *s)
{
    const dfg_op_info *info = dfg_op_get(s->op);
    dfg_type want[3];
    if (s->n_outputs < 1 || s->n_outputs > 3 ||
        (info->outputs > 0 && s->n_outputs != info->outputs))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "%s: %d outputs",
                         info->name, (int)s->n_outputs);
    dfg_status st = info->shape(s->attrs, s->in_types, s->n_inputs, want,
                                s->n_outputs);
    if (st != DFG_OK)
        return dfg_error_prefix(st, "%s", info->name);
    for (int32_t i = 0; i < s->n_outputs; i++)
        if (!dfg_type_equal(&want[i], &s->out_types[i])) {
            char sw[96], sg[96];
            return dfg_error(DFG_ERR_SHAPE, "%s: output %d is %s, its inputs "
                             "make %s", info->name, (int)i,
                             dfg_type_format(&s->out_types[i], sg, sizeof sg),
                             dfg_type_format(&want[i], sw, sizeof sw));
        }
    return DFG_OK;
}

static int32_t normalised_axis(int32_t axis, int32_t rank)
{
    return axis < 0 ? axis + rank : axis;
}

dfg_status dfg_cuda_plan_arg_reduce(const dfg_step_args *s,
                                    dfg_cuda_step_plan *p)
{
    dfg_status st = dfg_cuda_check_operands(s);
    if (st != DFG_OK)
        return st;
    const dfg_type *in = &s->in_types[0];
    int32_t axis = normalised_axis(s->attrs->axis, in->rank);
    dfg_cuda_arg_reduce *a = &p->u.arg_reduce;
    p->kind = DFG_CUDA_ARG_REDUCE;
    *a = (dfg_cuda_arg_reduce){s->op == DFG_OP_ARG_MAX, in->dtype,
                               dfg_type_numel(&s->out_types[0]),
                               in->shape[axis], 1};
    for (int32_t d = axis + 1; d < in->rank; d++)
        a->inner *= in->shape[d];
    if (a->inner == 0)
        a->outputs = 0;
    return DFG_OK;
}

dfg_status dfg_cuda_plan_gather_elements(const dfg_step_args *s,
                                         dfg_cuda_step_plan *p)
{
    dfg_status st = dfg_cuda_check_operands(s);
    if (st != DFG_OK)
        return st;
    const dfg_type *data = &s->in_types[0], *idx = &s->in_types[1];
    dfg_cuda_gather_elements *g = &p->u.gather_elements;
    p->kind = DFG_CUDA_GATHER_ELEMENTS;
    *g = (dfg_cuda_gather_elements){
        .rank = data->rank,
        .axis = normalised_axis(s->attrs->axis, data->rank),
        .n = dfg_type_numel(idx),
        .element_size = dfg_cuda_dtype_size(data->dtype),
        .index_dtype = idx->dtype,
        .step = p->index,
    };
    g->dim = data->shape[g->axis];
    dfg_contiguous_strides(data->rank, data->shape, g->data_strides);
    for (int32_t d = 0; d < idx->rank; d++)
        g->index_dims[d] = idx->shape[d];
    return DFG_OK;
}

dfg_status dfg_cuda_plan_scatter_nd(const dfg_step_args *s,
                                    dfg_cuda_step_plan *p)
{
    dfg_status st = dfg_cuda_check_operands(s);
    if (st != DFG_OK)
        return st;
    const dfg_type *data = &s->in_types[0], *idx = &s->in_types[1];
    dfg_cuda_scatter_nd *c = &p->u.scatter_nd;
    p->kind = DFG_CUDA_SCATTER_ND;
    *c = (dfg_cuda_scatter_nd){
        .k = idx->shape[idx->rank - 1], .slice = 1,
        .element_size = dfg_cuda_dtype_size(data->dtype),
        .data_bytes = s->out[0] == s->in[0] ? 0 : dfg_type_bytes(data),
        .index_dtype = idx->dtype,
        .step = p->index,
    };
    int64_t tuples = 1;
    for (int32_t d = 0; d < idx->rank - 1; d++)
        tuples *= idx->shape[d];
    for (int32_t d = (int32_t)c->k; d < data->rank; d++)
        c->slice *= data->shape[d];
    c->n = tuples * c->slice;
    dfg_contiguous_strides(data->rank, data->shape, c->data_strides);
    for (int32_t d = 0; d < data->rank; d++)
        c->data_dims[d] = data->shape[d];
    return DFG_OK;
}

dfg_status dfg_cuda_plan_resize(const dfg_step_args *s, dfg_cuda_step_plan *p)
{
    dfg_status st = dfg_cuda_check_operands(s);
    if (st != DFG_OK)
        return st;
    const dfg_attrs *a = s->attrs;
    const dfg_type *in = &s->in_types[0], *out = &s->out_types[0];
    dfg_cuda_resize *r = &p->u.resize;
    p->kind = DFG_CUDA_RESIZE;
    r->attrs = *a;
    r->dtype = in->dtype;
    r->nearest = a->resize_mode != DFG_RESIZE_LINEAR &&
                 a->resize_mode != DFG_RESIZE_CUBIC;
    r->rank = in->rank;
    r->n = dfg_type_numel(out);
    r->element_size = dfg_cuda_dtype_size(in->dtype);
    if (r->n > 0 && dfg_type_numel(in) == 0)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "resize: an empty input "
                         "cannot fill %lld elements", (long long)r->n);
    dfg_contiguous_strides(in->rank, in->shape, r->in_strides);
    for (int32_t d = 0; d < in->rank; d++) {
        r->in_dims[d] = in->shape[d];
        r->out_dims[d] = out->shape[d];
        r->scale[d] = a->n_scales ? (double)a->scales[d]
                                  : (double)out->shape[d] / (double)in->shape[d];
        if (r->n > 0 && (!(r->scale[d] > 0.0) || isinf(r->scale[d])))
            return dfg_error(DFG_ERR_INVALID_ARGUMENT, "resize: scale %g on "
                             "axis %d", r->scale[d], (int)d);
    }
    return DFG_OK;
}

dfg_status dfg_cuda_plan_top_k(const dfg_step_args *s, dfg_cuda_step_plan *p)
{
    dfg_status st = dfg_cuda_check_operands(s);
    if (st != DFG_OK)
        return st;
    const dfg_type *in = &s->in_types[0];
    int32_t axis = normalised_axis(s->attrs->axis, in->rank);
    dfg_cuda_top_k *t = &p->u.top_k;
    p->kind = DFG_CUDA_TOP_K;
    *t = (dfg_cuda_top_k){in->dtype, s->attrs->largest != 0,
                          s->attrs->sorted != 0, 1, in->shape[axis], 1,
                          s->attrs->k, dfg_cuda_dtype_size(in->dtype)};
    for (int32_t d = 0; d < in->rank; d++)
        if (d < axis)
            t->slices *= in->shape[d];
        else if (d > axis)
            t->inner *= in->shape[d];
    t->slices *= t->inner;
    if (t->k == 0 || t->n == 0)
        t->slices = 0; /* nothing to write */
    return DFG_OK;
}
