/* attention's rules in the op table (src/ir/ops.def): shape, FLOPs and
 * workspace, from its geometry (geometry/attention_geometry.h). */
#include "ir/geometry/attention_geometry.h"
#include "ir/op_table.h"
#include "ir/shape_rules.h"

dfg_status dfg_shape_attention(const dfg_attrs *a, const dfg_type *in,
                               int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_out;
    dfg_attention_geometry g;
    dfg_status st = dfg_attention_geometry_make(a, in, n_in, &g);
    if (st != DFG_OK)
        return st;
    out[0] = in[0];
    out[0].shape[g.rank - 1] = g.dv;
    return dfg_shape_check_size(&out[0]);
}

/* Two products (2 sq sk d and 2 sq sk dv per head), and about five
 * operations per score: scale, mask, max, exp, normalise. */
int64_t dfg_flops_attention(const dfg_attrs *a, const dfg_type *in,
                            int32_t n_in, const dfg_type *out, int32_t n_out)
{
    (void)out, (void)n_out;
    dfg_attention_geometry g;
    if (dfg_attention_geometry_make(a, in, n_in, &g) != DFG_OK)
        return 0;
    double scores = (double)g.heads * (double)g.sq * (double)g.sk;
    double flops = scores * (2.0 * (double)(g.d + g.dv) + 5.0);
    return flops < 9.0e18 ? (int64_t)flops : INT64_MAX;
}

/* The scores of every head, f32, whatever the operands' dtype: the CPU
 * kernel and the CUDA backend's unfused steps compute them there. */
int64_t dfg_workspace_attention(const dfg_attrs *attrs, const dfg_type *in,
                                int32_t n_in, const dfg_type *out,
                                int32_t n_out)
{
    (void)out, (void)n_out;
    dfg_attention_geometry g;
    if (n_in < 3 || dfg_attention_geometry_make(attrs, in, n_in, &g) != DFG_OK)
        return -1;
    return g.heads * g.sq * g.sk * (int64_t)sizeof(float);
}
