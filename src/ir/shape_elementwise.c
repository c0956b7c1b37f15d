/* Shape rules of the elementwise ops: unary, binary and compare with numpy
 * broadcasting, where, cast and identity. */
#include "ir/op_table.h"
#include "ir/shape_rules.h"
#include "util/error.h"

dfg_status dfg_shape_unary(const dfg_attrs *a, const dfg_type *in,
                           int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)a, (void)n_in, (void)n_out;
    out[0] = in[0];
    return DFG_OK;
}

dfg_status dfg_shape_identity(const dfg_attrs *a, const dfg_type *in,
                              int32_t n_in, dfg_type *out, int32_t n_out)
{
    return dfg_shape_unary(a, in, n_in, out, n_out);
}

dfg_status dfg_shape_binary(const dfg_attrs *a, const dfg_type *in,
                            int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)a, (void)n_in, (void)n_out;
    dfg_status st = dfg_shape_same_dtype(in, 0, 1);
    if (st == DFG_OK)
        st = dfg_shape_broadcast(in[0].rank, in[0].shape, in[1].rank,
                                 in[1].shape, &out[0]);
    out[0].dtype = in[0].dtype;
    return st == DFG_OK ? dfg_shape_check_size(&out[0]) : st;
}

dfg_status dfg_shape_compare(const dfg_attrs *a, const dfg_type *in,
                             int32_t n_in, dfg_type *out, int32_t n_out)
{
    dfg_status st = dfg_shape_binary(a, in, n_in, out, n_out);
    out[0].dtype = DFG_BOOL;
    if (st == DFG_OK && in[0].dtype == DFG_F64)
        return dfg_error(DFG_ERR_DTYPE, "f64 operands (the kernels compare "
                         "in f32, which would round them)");
    return st;
}

dfg_status dfg_shape_where(const dfg_attrs *a, const dfg_type *in,
                           int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)a, (void)n_in, (void)n_out;
    dfg_status st = dfg_shape_same_dtype(in, 1, 2);
    dfg_type xy = {0};
    if (st == DFG_OK)
        st = dfg_shape_broadcast(in[1].rank, in[1].shape, in[2].rank,
                                 in[2].shape, &xy);
    if (st == DFG_OK)
        st = dfg_shape_broadcast(in[0].rank, in[0].shape, xy.rank, xy.shape,
                                 &out[0]);
    out[0].dtype = in[1].dtype;
    return st == DFG_OK ? dfg_shape_check_size(&out[0]) : st;
}

dfg_status dfg_shape_cast(const dfg_attrs *a, const dfg_type *in,
                          int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_in, (void)n_out;
    if ((unsigned)a->to >= DFG_DTYPE_COUNT)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "attribute to = %d is not a dtype", (int)a->to);
    out[0] = in[0];
    out[0].dtype = a->to;
    return DFG_OK;
}
