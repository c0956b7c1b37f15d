/* The attention op on CUDA: its unfused steps and cuDNN's view of it
 * (attention_mapping.h). */
#include "runtime/cuda/plan/attention_mapping.h"

#include "ir/geometry/attention_geometry.h"
#include "runtime/cuda/plan/launch_geometry.h"
#include "util/error.h"

/* The scores + mask add, broadcast as the geometry's strides say. */
static void mask_plan(const dfg_step_args *s, const dfg_attention_geometry *g,
                      dfg_cuda_binary *b)
{
    const dfg_type *mask = &s->in_types[3];
    int32_t ranks[2] = {g->rank, mask->rank};
    const int64_t *shapes[2] = {g->dims, mask->shape};
    b->op = DFG_OP_ADD;
    b->dtype = b->out_dtype = s->in_types[0].dtype;
    b->n = g->heads * g->sq * g->sk;
    b->index32 = dfg_index_fits_narrow(b->n);
    b->lanes = 0;
    dfg_broadcast_init(&b->b, g->rank, g->dims, 2, ranks, shapes);
}

dfg_status dfg_cuda_plan_attention(const dfg_step_args *s,
                                   dfg_cuda_step_plan *p)
{
    dfg_attention_geometry g;
    dfg_status st = dfg_attention_geometry_make(s->attrs, s->in_types,
                                                s->n_inputs, &g);
    if (st != DFG_OK)
        return st;
    dfg_dtype dtype = s->in_types[0].dtype;
    if (dtype != DFG_F32 && dtype != DFG_F16 && dtype != DFG_BF16)
        return dfg_error(DFG_ERR_DTYPE, "attention: %s operands have no "
                         "CUDA kernel", dfg_dtype_name(dtype));
    int64_t scores = g.heads * g.sq * g.sk;
    int64_t scores_bytes = scores * dfg_cuda_dtype_size(dtype);
    if (!s->workspace || s->workspace_bytes < scores_bytes)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "attention: the step has %lld bytes of workspace, "
                         "its scores need %lld",
                         (long long)s->workspace_bytes,
                         (long long)scores_bytes);
    p->kind = DFG_CUDA_ATTENTION;
    /* The op's own workspace (f32 scores) comes first, cuBLAS's after. */
    dfg_cuda_blas_workspace(s->workspace, s->workspace_bytes,
                            scores * (int64_t)sizeof(float),
                            &p->blas_workspace, &p->blas_workspace_bytes);
    dfg_cuda_attention *a = &p->u.attention;
    a->scores = (dfg_cuda_row_gemm){
        .m = g.sq, .n = g.sk, .k = g.d, .trans_b = g.key_rows,
        .lda = g.d, .ldb = g.key_rows ? g.d : g.sk, .ldc = g.sk,
        .stride_a = g.sq * g.d, .stride_b = g.sk * g.d,
        .stride_c = g.sq * g.sk, .batch = g.heads,
        .alpha = s->attrs->alpha, .beta = 0.0f};
    a->out = (dfg_cuda_row_gemm){
        .m = g.sq, .n = g.dv, .k = g.sk, .lda = g.sk, .ldb = g.dv,
        .ldc = g.dv, .stride_a = g.sq * g.sk, .stride_b = g.sk * g.dv,
        .stride_c = g.sq * g.dv, .batch = g.heads, .alpha = 1.0f,
        .beta = 0.0f};
    a->has_mask = g.has_mask;
    if (g.has_mask)
        mask_plan(s, &g, &a->mask);
    a->softmax = (dfg_cuda_softmax){0, dtype, g.heads * g.sq, g.sk, 1};
    p->dnn_why = dtype == DFG_F32 ? DFG_CUDA_SDPA_NOT_F32
                                  : DFG_CUDA_SDPA_NOT_BUILT;
    return DFG_OK;
}

/* Row-major strides of dims[0..4). */
static void packed(const int64_t *dims, int64_t *stride)
{
    stride[3] = 1;
    for (int i = 2; i >= 0; i--)
        stride[i] = stride[i + 1] * dims[i + 1];
}

/* The mask as cuDNN's bias [1|b, 1|h, sq, sk], from the geometry's
 * strides; 0 when its leading dims do not fold into b that way. */
static int bias_of(const dfg_attention_geometry *g, dfg_cuda_sdpa *o)
{
    int32_t r = g->rank;
    if (g->mask_stride[r - 1] != 1 || g->mask_stride[r - 2] != g->sk)
        return 0;
    o->bias[2] = g->sq;
    o->bias[3] = g->sk;
    o->bias[1] = r >= 3 && g->mask_stride[r - 3] != 0 ? o->q[1] : 1;
    o->bias[0] = 1;
    /* The folded batch dims: all broadcast, or all read in order. */
    int64_t expect = g->sq * g->sk * o->bias[1];
    int all = 1, none = 1;
    for (int32_t i = r - 4; i >= 0; i--) {
        all = all && g->mask_stride[i] == expect;
        none = none && g->mask_stride[i] == 0;
        expect *= g->dims[i];
    }
    if (r >= 4 && !all && !none)
        return 0;
    if (r >= 4 && all && g->mask_stride[r - 4] != 0)
        o->bias[0] = o->q[0];
    packed(o->bias, o->bias_stride);
    for (int i = 0; i < 2; i++)
        if (o->bias[i] == 1)
            o->bias_stride[i] = 0;
    return 1;
}

int dfg_cuda_sdpa_make(const dfg_cuda_step_plan *plan, dfg_cuda_sdpa *o,
                       const char **why)
{
    const dfg_step_args *s = plan->args;
    dfg_attention_geometry g;
    *why = NULL;
    if (plan->kind != DFG_CUDA_ATTENTION ||
        dfg_attention_geometry_make(s->attrs, s->in_types, s->n_inputs,
                                    &g) != DFG_OK)
        return *why = "not an attention step", 0;
    o->dtype = s->in_types[0].dtype;
    if (o->dtype != DFG_F16 && o->dtype != DFG_BF16)
        return *why = DFG_CUDA_SDPA_NOT_F32, 0;
    if (g.d % 8 != 0 || g.dv % 8 != 0 || g.d > 128 || g.dv > 128)
        return *why = "its fused attention wants head dims that are "
                      "multiples of 8 up to 128", 0;
    if (!g.key_rows)
        return *why = "k is stored transposed ([.., D, Sk]); its fused "
                      "attention wants the head dim contiguous", 0;
    int32_t r = g.rank;
    int64_t h = r >= 3 ? g.dims[r - 3] : 1;
    int64_t b = h > 0 ? g.heads / h : 0;
    const int64_t q[4] = {b, h, g.sq, g.d}, k[4] = {b, h, g.sk, g.d};
    const int64_t v[4] = {b, h, g.sk, g.dv}, out[4] = {b, h, g.sq, g.dv};
    int64_t k_stride[4];
    for (int i = 0; i < 4; i++) {
        o->q[i] = q[i];
        o->v[i] = v[i];
        o->o[i] = out[i];
    }
    packed(o->q, o->q_stride);
    packed(k, k_stride);
    packed(o->v, o->v_stride);
    packed(o->o, o->o_stride);
    /* k^T [b, h, d, sk]: k's rows read with the last two strides
     * swapped. */
    const int64_t kt[4] = {b, h, g.d, g.sk};
    const int64_t kt_stride[4] = {k_stride[0], k_stride[1], k_stride[3],
                                  k_stride[2]};
    for (int i = 0; i < 4; i++) {
        o->kt[i] = kt[i];
        o->kt_stride[i] = kt_stride[i];
    }
    o->has_bias = g.has_mask;
    if (g.has_mask && !bias_of(&g, o))
        return *why = "the mask broadcasts along the query or key rows; "
                      "its bias holds every score of a head", 0;
    o->scale = s->attrs->alpha;
    return 1;
}
