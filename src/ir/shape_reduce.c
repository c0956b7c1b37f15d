/* Shape rule of the reductions (reduce_sum, reduce_mean, reduce_max). */
#include "ir/op_table.h"
#include "ir/shape_rules.h"
#include "util/error.h"

dfg_status dfg_shape_reduce(const dfg_attrs *a, const dfg_type *in,
                            int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_in, (void)n_out;
    int32_t rank = in[0].rank;
    if (a->n_axes < 0 || a->n_axes > rank)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "n_axes = %d is out of range for rank %d",
                         (int)a->n_axes, (int)rank);
    if (a->keepdims != 0 && a->keepdims != 1)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "keepdims = %d, expected 0 or 1", (int)a->keepdims);
    int32_t axes[DFG_MAX_RANK];
    dfg_status st = dfg_shape_axes(a->axes, a->n_axes, rank, axes);
    if (st != DFG_OK)
        return st;
    /* No axes: reduce every axis. */
    unsigned reduced = a->n_axes == 0 ? (1u << rank) - 1 : 0;
    for (int32_t i = 0; i < a->n_axes; i++)
        reduced |= 1u << axes[i];
    out[0].dtype = in[0].dtype;
    out[0].rank = 0;
    for (int32_t d = 0; d < rank; d++) {
        if (!(reduced & (1u << d)))
            out[0].shape[out[0].rank++] = in[0].shape[d];
        else if (a->keepdims)
            out[0].shape[out[0].rank++] = 1;
    }
    return DFG_OK;
}
