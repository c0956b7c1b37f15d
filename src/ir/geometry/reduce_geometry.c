/* Reduction geometry shared by the backends (see reduce_geometry.h). */
#include "ir/geometry/reduce_geometry.h"

#include "util/error.h"

/* Groups the dims of in (see math/dim_groups.h) into g->kept and
 * g->reduced, outer to inner. */
static void group_dims(const dfg_type *in, const int *is_reduced,
                       dfg_reduce_geometry *g)
{
    int64_t stride = 1;
    int last_kind = -1;
    g->kept.n = g->reduced.n = 0;
    g->count = g->outputs = 1;
    g->innermost_kept = 0;
    for (int32_t d = in->rank - 1; d >= 0; stride *= in->shape[d], d--) {
        if (in->shape[d] == 1)
            continue;
        dfg_dim_groups *groups = is_reduced[d] ? &g->reduced : &g->kept;
        if (last_kind == is_reduced[d]) {
            groups->dims[groups->n - 1] *= in->shape[d];
        } else {
            groups->dims[groups->n] = in->shape[d];
            groups->strides[groups->n] = stride;
            groups->n++;
        }
        if (last_kind < 0)
            g->innermost_kept = !is_reduced[d];
        last_kind = is_reduced[d];
        if (is_reduced[d])
            g->count *= in->shape[d];
        else
            g->outputs *= in->shape[d];
    }
    /* Built inner to outer; the walks want outer to inner. */
    for (int k = 0; k < 2; k++) {
        dfg_dim_groups *groups = k ? &g->reduced : &g->kept;
        for (int32_t i = 0; i < groups->n / 2; i++) {
            int32_t j = groups->n - 1 - i;
            int64_t dim = groups->dims[i], s = groups->strides[i];
            groups->dims[i] = groups->dims[j];
            groups->strides[i] = groups->strides[j];
            groups->dims[j] = dim;
            groups->strides[j] = s;
        }
    }
}

dfg_status dfg_reduce_geometry_make(dfg_op op, const dfg_attrs *attrs,
                                    const dfg_type *in, const dfg_type *out,
                                    dfg_reduce_geometry *g)
{
    const char *name = dfg_op_get(op)->name;
    int is_reduced[DFG_MAX_RANK] = {0};
    if (in->rank < 0 || in->rank > DFG_MAX_RANK)
        return dfg_error(DFG_ERR_DTYPE, "%s: unsupported input type", name);
    g->op = op;
    if (op == DFG_OP_GLOBAL_AVERAGE_POOL) {
        g->op = DFG_OP_REDUCE_MEAN;
        for (int32_t d = 2; d < in->rank; d++)
            is_reduced[d] = 1;
    } else {
        for (int32_t i = 0; i < attrs->n_axes; i++) {
            int64_t axis = attrs->axes[i] < 0 ? attrs->axes[i] + in->rank
                                              : attrs->axes[i];
            if (axis < 0 || axis >= in->rank)
                return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                                 "%s: axes[%d] = %lld is out of range for "
                                 "rank %d", name, (int)i,
                                 (long long)attrs->axes[i], (int)in->rank);
            is_reduced[axis] = 1;
        }
        for (int32_t d = 0; attrs->n_axes == 0 && d < in->rank; d++)
            is_reduced[d] = 1;
    }
    if (dfg_type_numel(in) < 0 || in->dtype == DFG_BOOL ||
        out->dtype != in->dtype)
        return dfg_error(DFG_ERR_DTYPE, "%s: unsupported input type", name);
    group_dims(in, is_reduced, g);
    if (dfg_type_numel(out) != g->outputs)
        return dfg_error(DFG_ERR_SHAPE, "%s: output has %lld elements, "
                         "expected %lld", name,
                         (long long)dfg_type_numel(out),
                         (long long)g->outputs);
    return DFG_OK;
}

dfg_status dfg_row_axis_check(dfg_op op, const dfg_attrs *attrs,
                              const dfg_type *in, const dfg_type *out,
                              int64_t *axis)
{
    *axis = attrs->axis < 0 ? (int64_t)attrs->axis + in->rank : attrs->axis;
    if (*axis < 0 || *axis >= in->rank || dfg_type_numel(in) < 0 ||
        !dfg_type_equal(in, out) || !dfg_dtype_is_float(in->dtype))
        return dfg_error(DFG_ERR_SHAPE, "%s: axis %d does not fit input rank "
                         "%d (or the input is not float)",
                         dfg_op_get(op)->name, (int)attrs->axis,
                         (int)in->rank);
    return DFG_OK;
}
