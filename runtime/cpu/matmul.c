/* matmul (numpy semantics) and gemm (ONNX Gemm) on the mixed-precision
 * sgemm of gemm_mixed.c. */
#include <string.h>

#include "error.h"
#include "gemm_mixed.h"
#include "kernels.h"

/* A matmul's operands seen as batches of matrices: a is [batch.., m, k],
 * b is [batch.., k, n], out is [batch.., m, n] with the batch dims
 * broadcast; a 1-D a is one row (m = 1), a 1-D b one column (n = 1). */
typedef struct matmul_shape {
    int64_t m, k, n;
    int32_t batch_rank;                    /* output batch dims */
    int64_t batch[DFG_MAX_RANK];
    int64_t a_stride[DFG_MAX_RANK];        /* in matrices, 0 if broadcast */
    int64_t b_stride[DFG_MAX_RANK];
    int64_t batch_count;
} matmul_shape;

/* Strides, in whole matrices, of an operand's batch dims aligned on the
 * right of the output's batch dims; 0 where it broadcasts. -1 if a dim
 * neither matches nor broadcasts. */
static int batch_strides(const dfg_type *t, int32_t batch_rank,
                         const int64_t *batch, int64_t *stride)
{
    int32_t own = t->rank > 2 ? t->rank - 2 : 0;
    int64_t s = 1;
    for (int32_t d = batch_rank - 1; d >= 0; d--) {
        int32_t td = d - (batch_rank - own);
        int64_t dim = td >= 0 ? t->shape[td] : 1;
        if (dim != 1 && dim != batch[d])
            return -1;
        stride[d] = dim == 1 ? 0 : s;
        s *= dim;
    }
    return 0;
}

static dfg_status matmul_shape_of(const dfg_type *a, const dfg_type *b,
                                  const dfg_type *out, matmul_shape *s)
{
    char ta[96], tb[96], to[96];
    if (a->rank < 1 || b->rank < 1 || out->rank < 0)
        goto mismatch;
    s->m = a->rank >= 2 ? a->shape[a->rank - 2] : 1;
    s->k = a->shape[a->rank - 1];
    s->n = b->rank >= 2 ? b->shape[b->rank - 1] : 1;
    int64_t b_k = b->rank >= 2 ? b->shape[b->rank - 2] : b->shape[0];
    s->batch_rank = out->rank - (a->rank >= 2) - (b->rank >= 2);
    if (b_k != s->k || s->batch_rank < 0 ||
        s->batch_rank < (a->rank > 2 ? a->rank - 2 : 0) ||
        s->batch_rank < (b->rank > 2 ? b->rank - 2 : 0))
        goto mismatch;
    s->batch_count = 1;
    for (int32_t d = 0; d < s->batch_rank; d++) {
        s->batch[d] = out->shape[d];
        s->batch_count *= out->shape[d];
    }
    if ((a->rank >= 2 && out->shape[s->batch_rank] != s->m) ||
        (b->rank >= 2 && out->shape[out->rank - 1] != s->n))
        goto mismatch;
    if (batch_strides(a, s->batch_rank, s->batch, s->a_stride) != 0 ||
        batch_strides(b, s->batch_rank, s->batch, s->b_stride) != 0)
        goto mismatch;
    return DFG_OK;
mismatch:
    return dfg_error(DFG_ERR_SHAPE, "matmul: operands %s and %s do not give "
                     "%s", dfg_type_format(a, ta, sizeof ta),
                     dfg_type_format(b, tb, sizeof tb),
                     dfg_type_format(out, to, sizeof to));
}

/* Offset, in matrices, of batch entry index in an operand with the given
 * batch strides. */
static int64_t batch_offset(const matmul_shape *s, const int64_t *stride,
                            int64_t index)
{
    int64_t offset = 0;
    for (int32_t d = s->batch_rank - 1; d >= 0; d--) {
        offset += (index % s->batch[d]) * stride[d];
        index /= s->batch[d];
    }
    return offset;
}

dfg_status dfg_cpu_matmul(const dfg_kernel_args *args)
{
    const dfg_type *ta = &args->in_types[0], *tb = &args->in_types[1];
    matmul_shape s;
    dfg_status st = matmul_shape_of(ta, tb, &args->out_types[0], &s);
    if (st != DFG_OK)
        return st;
    dfg_dtype dtype = ta->dtype;
    size_t size = dfg_dtype_size(dtype);
    const char *a = args->in[0], *b = args->in[1];
    char *out = args->out[0];
    dfg_cpu_matrix ma = {dtype, a, s.k, 0}, mb = {dtype, b, s.n, 0};
    /* A shared b (no batch dims of its own) under a batch of a: the batch
     * folds into the rows of one large product, which is what BLAS is
     * fastest at (every linear layer on a sequence). */
    int b_shared = tb->rank <= 2;
    if (b_shared && ta->rank > 2)
        return dfg_cpu_gemm_mixed(s.batch_count * s.m, s.n, s.k, 1.0f, &ma,
                                  &mb, 0.0f, dtype, out, s.n);
    for (int64_t i = 0; i < s.batch_count; i++) {
        ma.data = a + (size_t)(batch_offset(&s, s.a_stride, i) * s.m * s.k) *
                          size;
        mb.data = b + (size_t)(batch_offset(&s, s.b_stride, i) * s.k * s.n) *
                          size;
        st = dfg_cpu_gemm_mixed(s.m, s.n, s.k, 1.0f, &ma, &mb, 0.0f, dtype,
                                out + (size_t)(i * s.m * s.n) * size, s.n);
        if (st != DFG_OK)
            return st;
    }
    return DFG_OK;
}

/* Writes gemm's C, broadcast to [m, n], into out: the sgemm then adds
 * alpha * op(A) op(B) to it with beta. C's dims, aligned right, are 1 or
 * equal to m and n (the shape rule checked it; checked again here). */
static dfg_status broadcast_bias(const dfg_type *ct, const void *c,
                                 int64_t m, int64_t n, void *out)
{
    int64_t rows = ct->rank == 2 ? ct->shape[0] : 1;
    int64_t cols = ct->rank >= 1 ? ct->shape[ct->rank - 1] : 1;
    if (ct->rank > 2 || (rows != 1 && rows != m) || (cols != 1 && cols != n)) {
        char tc[96];
        return dfg_error(DFG_ERR_SHAPE, "gemm: C %s does not broadcast to "
                         "[%lld,%lld]", dfg_type_format(ct, tc, sizeof tc),
                         (long long)m, (long long)n);
    }
    size_t size = dfg_dtype_size(ct->dtype);
    int64_t row_step = rows == 1 ? 0 : cols, col_step = cols == 1 ? 0 : 1;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
            memcpy((char *)out + (size_t)(i * n + j) * size,
                   (const char *)c + (size_t)(i * row_step + j * col_step) *
                                         size, size);
    return DFG_OK;
}

dfg_status dfg_cpu_gemm(const dfg_kernel_args *args)
{
    const dfg_attrs *at = args->attrs;
    const dfg_type *ta = &args->in_types[0], *tb = &args->in_types[1];
    const dfg_type *to = &args->out_types[0];
    if (ta->rank != 2 || tb->rank != 2 || to->rank != 2) {
        char sa[96], sb[96];
        return dfg_error(DFG_ERR_SHAPE, "gemm: operands %s and %s must be "
                         "matrices", dfg_type_format(ta, sa, sizeof sa),
                         dfg_type_format(tb, sb, sizeof sb));
    }
    int64_t m = to->shape[0], n = to->shape[1];
    int64_t k = ta->shape[at->trans_a ? 0 : 1];
    if (ta->shape[at->trans_a ? 1 : 0] != m ||
        tb->shape[at->trans_b ? 0 : 1] != n ||
        tb->shape[at->trans_b ? 1 : 0] != k) {
        char sa[96], sb[96];
        return dfg_error(DFG_ERR_SHAPE, "gemm: operands %s and %s (trans_a "
                         "%d, trans_b %d) do not give [%lld,%lld]",
                         dfg_type_format(ta, sa, sizeof sa),
                         dfg_type_format(tb, sb, sizeof sb), (int)at->trans_a,
                         (int)at->trans_b, (long long)m, (long long)n);
    }
    float beta = 0.0f;
    if (args->n_inputs > 2 && args->in[2]) {
        dfg_status st = broadcast_bias(&args->in_types[2], args->in[2], m, n,
                                       args->out[0]);
        if (st != DFG_OK)
            return st;
        beta = at->beta;
    }
    dfg_cpu_matrix ma = {ta->dtype, args->in[0], ta->shape[1], at->trans_a};
    dfg_cpu_matrix mb = {tb->dtype, args->in[1], tb->shape[1], at->trans_b};
    return dfg_cpu_gemm_mixed(m, n, k, at->alpha, &ma, &mb, beta, to->dtype,
                              args->out[0], n);
}
