/* Row-major products to column-major cuBLAS calls (see gemm_mapping.h). */
#include "runtime/cuda/plan/gemm_mapping.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "ir/geometry/matmul_geometry.h"
#include "util/error.h"

static int fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

/* cuBLAS wants every leading dimension >= 1, even where an empty operand
 * is never read. */
static int32_t leading(int64_t ld) { return ld > 0 ? (int32_t)ld : 1; }

dfg_status dfg_cuda_blas_gemm_from_row_major(const dfg_cuda_row_gemm *row,
                                             dfg_cuda_blas_gemm *out)
{
    if (!fits_int(row->m) || !fits_int(row->n) || !fits_int(row->k) ||
        !fits_int(row->lda) || !fits_int(row->ldb) || !fits_int(row->ldc) ||
        !fits_int(row->batch))
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "a product of [%lld,%lld] x [%lld,%lld] (batch "
                         "%lld) does not fit cuBLAS's 32-bit sizes",
                         (long long)row->m, (long long)row->k,
                         (long long)row->k, (long long)row->n,
                         (long long)row->batch);
    *out = (dfg_cuda_blas_gemm){
        .trans_first = row->trans_b,
        .trans_second = row->trans_a,
        .m = (int32_t)row->n,
        .n = (int32_t)row->m,
        .k = (int32_t)row->k,
        .ld_first = leading(row->ldb),
        .ld_second = leading(row->lda),
        .ldc = leading(row->ldc),
        .stride_first = row->stride_b,
        .stride_second = row->stride_a,
        .stride_c = row->stride_c,
        .batch = (int32_t)row->batch,
        .alpha = row->alpha,
        .beta = row->beta,
    };
    return DFG_OK;
}

/* Merges the batch dims (size 1 dropped) whose matrix strides line up for
 * every operand; returns the number of groups. */
static int32_t merge_batch(int32_t rank, const int64_t *batch,
                           int64_t strides[3][DFG_MAX_RANK],
                           int64_t *dims, int64_t merged[3][DFG_MAX_RANK])
{
    int32_t groups = 0;
    for (int32_t d = 0; d < rank; d++) {
        if (batch[d] == 1)
            continue;
        int mergeable = groups > 0;
        for (int k = 0; k < 3 && mergeable; k++)
            mergeable = merged[k][groups - 1] == strides[k][d] * batch[d];
        if (mergeable) {
            dims[groups - 1] *= batch[d];
        } else {
            dims[groups] = batch[d];
            groups++;
        }
        for (int k = 0; k < 3; k++)
            merged[k][groups - 1] = strides[k][d];
    }
    return groups;
}

/* Refused when planned (at session creation), not on the first run. */
static dfg_status check_fits(const dfg_cuda_matmul_plan *plan,
                             const dfg_type *a, const dfg_type *b)
{
    dfg_cuda_blas_gemm g;
    dfg_status st = dfg_cuda_blas_gemm_from_row_major(&plan->gemm, &g);
    if (st == DFG_OK)
        return DFG_OK;
    char ta[128], tb[128];
    return dfg_error_prefix(st, "matmul of %s and %s",
                            dfg_type_format(a, ta, sizeof ta),
                            dfg_type_format(b, tb, sizeof tb));
}

dfg_status dfg_cuda_matmul_plan_make(const dfg_attrs *attrs, const dfg_type *a,
                                     const dfg_type *b, const dfg_type *out,
                                     dfg_cuda_matmul_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    dfg_matmul_geometry mg;
    dfg_status st = dfg_matmul_geometry_make(attrs, a, b, out, &mg);
    if (st != DFG_OK)
        return st;
    int64_t m = mg.m, k = mg.k, n = mg.n, count = mg.batch_count;
    int64_t strides[3][DFG_MAX_RANK], c_stride = 1;
    memcpy(strides[0], mg.a_stride, sizeof mg.a_stride);
    memcpy(strides[1], mg.b_stride, sizeof mg.b_stride);
    for (int32_t d = mg.batch_rank - 1; d >= 0; d--) {
        strides[2][d] = c_stride;
        c_stride *= mg.batch[d];
    }
    plan->gemm = (dfg_cuda_row_gemm){
        .m = m, .n = n, .k = k, .trans_a = mg.trans_a, .trans_b = mg.trans_b,
        .lda = mg.trans_a ? m : k, .ldb = mg.trans_b ? k : n, .ldc = n,
        .stride_a = m * k, .stride_b = k * n, .stride_c = m * n,
        .batch = 1, .alpha = 1.0f, .beta = 0.0f};
    plan->calls = count > 0 ? 1 : 0;
    if (mg.batch_in_rows && (count == 0 || m <= INT_MAX / count)) {
        plan->gemm.m = m * count;
        return check_fits(plan, a, b);
    }
    if (mg.batch_in_rows) {
        /* The folded rows would overflow cuBLAS's int: one strided batch
         * of products sharing b instead. */
        plan->gemm.batch = count;
        plan->gemm.stride_b = 0;
        return check_fits(plan, a, b);
    }
    int64_t dims[DFG_MAX_RANK], merged[3][DFG_MAX_RANK];
    int32_t groups = merge_batch(mg.batch_rank, mg.batch, strides, dims,
                                 merged);
    if (groups == 0 || count == 0)
        return check_fits(plan, a, b);
    const int64_t matrix[3] = {m * k, k * n, m * n};
    plan->gemm.batch = dims[groups - 1];
    plan->gemm.stride_a = merged[0][groups - 1] * matrix[0];
    plan->gemm.stride_b = merged[1][groups - 1] * matrix[1];
    plan->gemm.stride_c = merged[2][groups - 1] * matrix[2];
    plan->loop_rank = groups - 1;
    for (int32_t g = 0; g < groups - 1; g++) {
        plan->loop_dims[g] = dims[g];
        plan->loop_a[g] = merged[0][g] * matrix[0];
        plan->loop_b[g] = merged[1][g] * matrix[1];
        plan->loop_c[g] = merged[2][g] * matrix[2];
        plan->calls *= dims[g];
    }
    return check_fits(plan, a, b);
}

void dfg_cuda_matmul_call_offsets(const dfg_cuda_matmul_plan *plan,
                                  int64_t call, int64_t *a, int64_t *b,
                                  int64_t *c)
{
    *a = *b = *c = 0;
    for (int32_t d = plan->loop_rank - 1; d >= 0; d--) {
        int64_t index = call % plan->loop_dims[d];
        call /= plan->loop_dims[d];
        *a += index * plan->loop_a[d];
        *b += index * plan->loop_b[d];
        *c += index * plan->loop_c[d];
    }
}

dfg_status dfg_cuda_gemm_plan_make(const dfg_attrs *attrs,
                                   const dfg_type *ta, const dfg_type *tb,
                                   const dfg_type *out, int has_bias,
                                   dfg_cuda_row_gemm *gemm)
{
    int64_t m, n, k;
    dfg_status st = dfg_gemm_geometry_make(attrs, ta, tb, out, &m, &n, &k);
    if (st != DFG_OK)
        return st;
    *gemm = (dfg_cuda_row_gemm){
        .m = m, .n = n, .k = k,
        .trans_a = attrs->trans_a != 0, .trans_b = attrs->trans_b != 0,
        .lda = ta->shape[1], .ldb = tb->shape[1], .ldc = n,
        .batch = 1, .alpha = attrs->alpha,
        .beta = has_bias ? attrs->beta : 0.0f};
    dfg_cuda_blas_gemm fits;
    st = dfg_cuda_blas_gemm_from_row_major(gemm, &fits);
    return st == DFG_OK ? DFG_OK : dfg_error_prefix(st, "gemm");
}

dfg_cuda_row_gemm dfg_cuda_conv_direct_gemm(const dfg_conv_geometry *g,
                                            int64_t grp, float beta,
                                            int64_t *w_at, int64_t *x_at,
                                            int64_t *y_at)
{
    int64_t in_plane = g->in_h * g->in_w;
    *w_at = grp * g->filters_per_group * g->k;
    *x_at = grp * g->channels_per_group * in_plane;
    *y_at = grp * g->filters_per_group * g->pixels;
    return (dfg_cuda_row_gemm){
        .m = g->filters_per_group, .n = g->pixels, .k = g->k,
        .lda = g->k, .ldb = g->pixels, .ldc = g->pixels,
        .stride_a = 0, .stride_b = g->in_channels * in_plane,
        .stride_c = g->out_channels * g->pixels,
        .batch = g->batch, .alpha = 1.0f, .beta = beta};
}

dfg_cuda_row_gemm dfg_cuda_conv_chunk_gemm(const dfg_conv_geometry *g,
                                           int64_t cols, float beta)
{
    return (dfg_cuda_row_gemm){
        .m = g->filters_per_group, .n = cols, .k = g->k,
        .lda = g->k, .ldb = cols, .ldc = g->pixels,
        .batch = 1, .alpha = 1.0f, .beta = beta};
}

dfg_cuda_row_gemm dfg_cuda_conv_grad_input_chunk_gemm(const dfg_conv_geometry *g,
                                                      int64_t cols)
{
    return (dfg_cuda_row_gemm){
        .m = g->k, .n = cols, .k = g->filters_per_group, .trans_a = 1,
        .lda = g->k, .ldb = g->pixels, .ldc = cols,
        .batch = 1, .alpha = 1.0f, .beta = 0.0f};
}

dfg_cuda_row_gemm dfg_cuda_conv_grad_input_direct_gemm(
    const dfg_conv_geometry *g, int64_t grp, int64_t *w_at, int64_t *dy_at,
    int64_t *dx_at)
{
    int64_t in_plane = g->in_h * g->in_w;
    *w_at = grp * g->filters_per_group * g->k;
    *dy_at = grp * g->filters_per_group * g->pixels;
    *dx_at = grp * g->channels_per_group * in_plane;
    return (dfg_cuda_row_gemm){
        .m = g->k, .n = g->pixels, .k = g->filters_per_group, .trans_a = 1,
        .lda = g->k, .ldb = g->pixels, .ldc = g->pixels,
        .stride_a = 0, .stride_b = g->out_channels * g->pixels,
        .stride_c = g->in_channels * in_plane,
        .batch = g->batch, .alpha = 1.0f, .beta = 0.0f};
}

dfg_cuda_row_gemm dfg_cuda_conv_grad_weight_gemm(const dfg_conv_geometry *g,
                                                 int64_t cols)
{
    return (dfg_cuda_row_gemm){
        .m = g->filters_per_group, .n = g->k, .k = cols, .trans_b = 1,
        .lda = g->pixels, .ldb = cols, .ldc = g->k,
        .batch = 1, .alpha = 1.0f, .beta = 1.0f};
}

void dfg_cuda_blas_workspace(void *workspace, int64_t workspace_bytes,
                             int64_t op_bytes, void **out, size_t *out_bytes)
{
    *out = NULL;
    *out_bytes = 0;
    if (!workspace || workspace_bytes <= 0)
        return;
    /* The pointer itself is aligned: the step's workspace is aligned only
     * to the program's --align, which may be below cuBLAS's 256. */
    uintptr_t begin = (uintptr_t)workspace;
    uintptr_t end = begin + (uintptr_t)workspace_bytes;
    uintptr_t start = begin + (uintptr_t)(op_bytes > 0 ? op_bytes : 0);
    start = (start + DFG_CUDA_BLAS_WORKSPACE_ALIGN - 1) &
            ~(uintptr_t)(DFG_CUDA_BLAS_WORKSPACE_ALIGN - 1);
    if (start >= end || end - start < DFG_CUDA_BLAS_WORKSPACE_FLOOR)
        return;
    *out = (char *)workspace + (start - begin);
    *out_bytes = (size_t)(end - start);
}

void dfg_cuda_blas_workspace_or_session(void **workspace, size_t *bytes,
                                        void *session_workspace,
                                        size_t session_bytes)
{
    if (*workspace)
        return;
    dfg_cuda_blas_workspace(session_workspace, (int64_t)session_bytes, 0,
                            workspace, bytes);
}

size_t dfg_cuda_session_blas_workspace_bytes(int compute_major)
{
    return compute_major >= 9 ? (size_t)32 << 20 : (size_t)4 << 20;
}
