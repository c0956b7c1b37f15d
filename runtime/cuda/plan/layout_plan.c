/* Data-movement plans for the CUDA backend (see layout_plan.h): the
 * geometry and its checks are layout_geometry.c's, which the CPU kernels
 * use too, so that both backends reject the same steps. */
#include "runtime/cuda/plan/layout_plan.h"

#include <string.h>

#include "runtime/cuda/kernels/element_access.h"
#include "util/error.h"

void dfg_cuda_strided_copy_make(int32_t rank, const int64_t *dims,
                                const int64_t *src_strides,
                                const int64_t *dst_strides,
                                int64_t element_size,
                                dfg_cuda_strided_copy *out)
{
    memset(out, 0, sizeof *out);
    out->element_size = element_size;
    out->n = 1;
    for (int32_t i = 0; i < rank; i++)
        out->n *= dims[i];
    out->rank = dfg_copy_dims_merge(rank, dims, src_strides, dst_strides,
                                    out->dims, out->src_strides,
                                    out->dst_strides);
    out->index32 = dfg_index_fits_narrow(out->n);
}

/* The kernel's copy of g, whose element offsets go to *src_at / *dst_at
 * where asked for. */
static void copy_of(const dfg_copy_geometry *g, dfg_dtype dtype,
                    int64_t *src_at, int64_t *dst_at,
                    dfg_cuda_strided_copy *copy)
{
    if (src_at)
        *src_at = g->src_at;
    if (dst_at)
        *dst_at = g->dst_at;
    dfg_cuda_strided_copy_make(g->rank, g->dims, g->src_strides,
                               g->dst_strides, dfg_cuda_dtype_size(dtype),
                               copy);
}

dfg_status dfg_cuda_transpose_plan(const dfg_attrs *attrs, const dfg_type *in,
                                   const dfg_type *out,
                                   dfg_cuda_strided_copy *copy)
{
    dfg_copy_geometry g;
    dfg_status st = dfg_transpose_geometry(attrs, in, out, &g);
    if (st == DFG_OK)
        copy_of(&g, in->dtype, NULL, NULL, copy);
    return st;
}

dfg_status dfg_cuda_slice_plan(const dfg_attrs *attrs, const dfg_type *in,
                               const dfg_type *out, int64_t *src_at,
                               dfg_cuda_strided_copy *copy)
{
    dfg_copy_geometry g;
    dfg_status st = dfg_slice_geometry(attrs, in, out, &g);
    if (st == DFG_OK)
        copy_of(&g, in->dtype, src_at, NULL, copy);
    return st;
}

dfg_status dfg_cuda_expand_plan(const dfg_type *in, const dfg_type *out,
                                dfg_cuda_strided_copy *copy)
{
    dfg_copy_geometry g;
    dfg_status st = dfg_expand_geometry(in, out, &g);
    if (st == DFG_OK)
        copy_of(&g, in->dtype, NULL, NULL, copy);
    return st;
}

dfg_status dfg_cuda_pad_plan(const dfg_attrs *attrs, const dfg_type *in,
                             const dfg_type *out, uint64_t *fill,
                             int64_t *dst_at, dfg_cuda_strided_copy *copy)
{
    dfg_copy_geometry g;
    dfg_status st = dfg_pad_geometry(attrs, in, out, &g);
    if (st != DFG_OK)
        return st;
    *fill = 0;
    dfg_cuda_store_f32(fill, in->dtype, 0, attrs->pad_value);
    copy_of(&g, in->dtype, NULL, dst_at, copy);
    return DFG_OK;
}

void dfg_cuda_step_part(const dfg_kernel_args *a, int to_whole, int32_t axis,
                        int32_t i, int64_t *pos, int64_t *whole_at,
                        dfg_cuda_strided_copy *copy)
{
    dfg_type whole = to_whole ? a->out_types[0] : a->in_types[0];
    int64_t len = (to_whole ? a->in_types : a->out_types)[i].shape[axis];
    if (whole.layout == DFG_LAYOUT_NHWC) { /* axis 1 (layout_rule.h) */
        int64_t c = whole.shape[1];
        whole.shape[1] = whole.shape[2];
        whole.shape[2] = whole.shape[3];
        whole.shape[3] = c;
        axis = 3;
    }
    dfg_copy_geometry g;
    dfg_part_geometry(&whole, axis, *pos, len, to_whole, &g);
    copy_of(&g, whole.dtype, to_whole ? NULL : whole_at,
            to_whole ? whole_at : NULL, copy);
    *pos += len;
}

dfg_status dfg_cuda_gather_plan(const dfg_attrs *attrs, const dfg_type *data,
                                const dfg_type *indices, const dfg_type *out,
                                int32_t step, dfg_cuda_gather *gather)
{
    dfg_gather_geometry g;
    dfg_status st = dfg_gather_geometry_make(attrs, data, indices, out, &g);
    if (st != DFG_OK)
        return st;
    *gather = (dfg_cuda_gather){
        .n = dfg_type_numel(out),
        .n_indices = g.n_indices,
        .dim = g.dim,
        .inner = g.inner,
        .element_size = dfg_cuda_dtype_size(data->dtype),
        .index_dtype = indices->dtype,
        .step = step,
    };
    /* No output element reads an index when there are none; keep the
     * kernel's divisions well defined all the same. */
    if (gather->n_indices == 0 || gather->inner == 0)
        gather->n = 0;
    return DFG_OK;
}

void dfg_cuda_conv_bias_plan(const dfg_conv_geometry *g, int64_t element_size,
                             dfg_cuda_strided_copy *copy)
{
    const int64_t dims[3] = {g->batch, g->out_channels, g->pixels};
    const int64_t src[3] = {0, 1, 0};
    const int64_t dst[3] = {g->out_channels * g->pixels, g->pixels, 1};
    dfg_cuda_strided_copy_make(3, dims, src, dst, element_size, copy);
}

dfg_status dfg_cuda_reorder_plan(const dfg_type *in, const dfg_type *out,
                                 dfg_cuda_strided_copy *copy)
{
    int to = out->layout == DFG_LAYOUT_NHWC;
    int from = in->layout == DFG_LAYOUT_NHWC;
    if (in->rank != 4 || !dfg_type_equal(in, out) || to == from ||
        (!to && out->layout != DFG_LAYOUT_PLAIN) ||
        (!from && in->layout != DFG_LAYOUT_PLAIN)) {
        char a[96], b[96];
        return dfg_error(DFG_ERR_UNSUPPORTED, "reorder from %s to %s: the "
                         "CUDA backend reorders 4-D tensors between plain "
                         "and nhwc only (blocked layouts are the CPU's)",
                         dfg_type_format(in, a, sizeof a),
                         dfg_type_format(out, b, sizeof b));
    }
    const int64_t *d = in->shape;
    const int64_t nchw[4] = {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1};
    const int64_t nhwc[4] = {d[1] * d[2] * d[3], 1, d[3] * d[1], d[1]};
    dfg_cuda_strided_copy_make(4, d, to ? nchw : nhwc, to ? nhwc : nchw,
                               dfg_cuda_dtype_size(in->dtype), copy);
    return DFG_OK;
}
