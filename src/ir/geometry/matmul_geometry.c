/* matmul and gemm geometry shared by the backends (see matmul_geometry.h). */
#include "ir/geometry/matmul_geometry.h"

#include "util/error.h"

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

dfg_status dfg_matmul_geometry_make(const dfg_attrs *attrs, const dfg_type *a,
                                    const dfg_type *b, const dfg_type *out,
                                    dfg_matmul_geometry *g)
{
    char ta[96], tb[96], to[96];
    g->trans_a = attrs && attrs->trans_a;
    g->trans_b = attrs && attrs->trans_b;
    if (a->rank < 1 || b->rank < 1 || out->rank < 0 ||
        (g->trans_a && a->rank < 2) || (g->trans_b && b->rank < 2))
        goto mismatch;
    g->m = a->rank >= 2 ? a->shape[a->rank - 2 + g->trans_a] : 1;
    g->k = a->shape[a->rank - 1 - g->trans_a];
    g->n = b->rank >= 2 ? b->shape[b->rank - 1 - g->trans_b] : 1;
    int64_t b_k = b->rank >= 2 ? b->shape[b->rank - 2 + g->trans_b]
                               : b->shape[0];
    g->batch_rank = out->rank - (a->rank >= 2) - (b->rank >= 2);
    if (b_k != g->k || g->batch_rank < 0 ||
        g->batch_rank < (a->rank > 2 ? a->rank - 2 : 0) ||
        g->batch_rank < (b->rank > 2 ? b->rank - 2 : 0))
        goto mismatch;
    g->batch_count = 1;
    for (int32_t d = 0; d < g->batch_rank; d++) {
        g->batch[d] = out->shape[d];
        g->batch_count *= out->shape[d];
    }
    if ((a->rank >= 2 && out->shape[g->batch_rank] != g->m) ||
        (b->rank >= 2 && out->shape[out->rank - 1] != g->n))
        goto mismatch;
    if (batch_strides(a, g->batch_rank, g->batch, g->a_stride) != 0 ||
        batch_strides(b, g->batch_rank, g->batch, g->b_stride) != 0)
        goto mismatch;
    /* Rows of a transposed a are not contiguous across the batch. */
    g->batch_in_rows = b->rank <= 2 && a->rank > 2 && !g->trans_a;
    return DFG_OK;
mismatch:
    return dfg_error(DFG_ERR_SHAPE, "matmul: operands %s and %s (trans_a %d, "
                     "trans_b %d) do not give %s",
                     dfg_type_format(a, ta, sizeof ta),
                     dfg_type_format(b, tb, sizeof tb), g->trans_a, g->trans_b,
                     dfg_type_format(out, to, sizeof to));
}

dfg_status dfg_gemm_geometry_make(const dfg_attrs *attrs, const dfg_type *ta,
                                  const dfg_type *tb, const dfg_type *out,
                                  int64_t *m, int64_t *n, int64_t *k)
{
    char sa[96], sb[96];
    if (ta->rank != 2 || tb->rank != 2 || out->rank != 2)
        return dfg_error(DFG_ERR_SHAPE, "gemm: operands %s and %s must be "
                         "matrices", dfg_type_format(ta, sa, sizeof sa),
                         dfg_type_format(tb, sb, sizeof sb));
    *m = out->shape[0];
    *n = out->shape[1];
    *k = ta->shape[attrs->trans_a ? 0 : 1];
    if (ta->shape[attrs->trans_a ? 1 : 0] != *m ||
        tb->shape[attrs->trans_b ? 0 : 1] != *n ||
        tb->shape[attrs->trans_b ? 1 : 0] != *k)
        return dfg_error(DFG_ERR_SHAPE, "gemm: operands %s and %s (trans_a "
                         "%d, trans_b %d) do not give [%lld,%lld]",
                         dfg_type_format(ta, sa, sizeof sa),
                         dfg_type_format(tb, sb, sizeof sb),
                         (int)attrs->trans_a, (int)attrs->trans_b,
                         (long long)*m, (long long)*n);
    return DFG_OK;
}
