/* Shape rules of the data-parallel ops (src/ops.def): a bucket of f32
 * gradients, and the gradients handed on after the bucket's all-reduce. */
#include "error.h"
#include "op_table.h"
#include "shape_rules.h"

static dfg_status require_f32_operands(const dfg_type *in, int32_t from,
                                       int32_t n_in, int64_t *elements)
{
    *elements = 0;
    for (int32_t i = from; i < n_in; i++) {
        if (in[i].dtype != DFG_F32)
            return dfg_error(DFG_ERR_DTYPE,
                             "input %d has dtype %s; gradients are all-reduced "
                             "in f32", (int)i, dfg_dtype_name(in[i].dtype));
        int64_t n = dfg_type_numel(&in[i]);
        if (n < 0 || *elements > INT64_MAX - n)
            return dfg_error(DFG_ERR_OVERFLOW, "the bucket's size overflows");
        *elements += n;
    }
    return DFG_OK;
}

/* (gradients...) -> f32[attrs.shape[0]], at least their elements. */
dfg_status dfg_shape_all_reduce_start(const dfg_attrs *a, const dfg_type *in,
                                      int32_t n_in, dfg_type *out,
                                      int32_t n_out)
{
    (void)n_out;
    int64_t elements;
    dfg_status st = require_f32_operands(in, 0, n_in, &elements);
    if (st != DFG_OK)
        return st;
    if (a->n_shape != 1 || a->shape[0] < elements || a->axis < 0)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "all_reduce_start: attrs.shape must hold the bucket's "
                         "size, at least its %lld gradient elements, and "
                         "attrs.axis its index (>= 0)", (long long)elements);
    out[0] = (dfg_type){DFG_F32, 1, {a->shape[0]}};
    return dfg_shape_check_size(&out[0]);
}

/* (bucket, gradients...) -> the gradients' types. The bucket holds the
 * gradients: at least as many elements as they have together. */
dfg_status dfg_shape_all_reduce_wait(const dfg_attrs *a, const dfg_type *in,
                                     int32_t n_in, dfg_type *out,
                                     int32_t n_out)
{
    int64_t elements;
    dfg_status st = require_f32_operands(in, 0, n_in, &elements);
    if (st != DFG_OK)
        return st;
    if (n_out != n_in - 1 || in[0].rank != 1 ||
        2 * in[0].shape[0] < elements || a->axis < 0)
        return dfg_error(DFG_ERR_SHAPE,
                         "all_reduce_wait: takes a bucket f32[n] and the %d "
                         "gradients it holds, and gives %d outputs (got %d); "
                         "attrs.axis is the bucket's index",
                         (int)(n_in - 1), (int)(n_in - 1), (int)n_out);
    for (int32_t i = 0; i < n_out; i++)
        out[i] = in[i + 1];
    return DFG_OK;
}
