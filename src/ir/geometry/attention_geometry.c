/* Attention's operand checks and mask strides (attention_geometry.h). */
#include "ir/geometry/attention_geometry.h"

#include "ir/shape_rules.h"
#include "util/error.h"

static dfg_status batch_dims_equal(const dfg_type *a, const dfg_type *b,
                                   const char *name)
{
    int same = a->rank == b->rank;
    for (int32_t i = 0; same && i + 2 < a->rank; i++)
        same = a->shape[i] == b->shape[i];
    if (same)
        return DFG_OK;
    return dfg_error(DFG_ERR_SHAPE, "attention: q %s and %s %s must have "
                     "the same rank and batch dims",
                     dfg_dims_format(a->rank, a->shape).text, name,
                     dfg_dims_format(b->rank, b->shape).text);
}

/* The mask's strides against the scores' dims, or an error when it does
 * not broadcast to them without growing them. */
static dfg_status mask_strides(const dfg_type *mask,
                               dfg_attention_geometry *g)
{
    if (mask->rank > g->rank)
        return dfg_error(DFG_ERR_SHAPE, "attention: the mask %s has more "
                         "dims than the scores %s",
                         dfg_dims_format(mask->rank, mask->shape).text,
                         dfg_dims_format(g->rank, g->dims).text);
    int64_t stride = 1;
    for (int32_t i = g->rank - 1; i >= 0; i--) {
        int32_t m = i - (g->rank - mask->rank);
        int64_t dim = m >= 0 ? mask->shape[m] : 1;
        if (dim != 1 && dim != g->dims[i])
            return dfg_error(DFG_ERR_SHAPE, "attention: the mask %s does "
                             "not broadcast to the scores %s",
                             dfg_dims_format(mask->rank, mask->shape).text,
                             dfg_dims_format(g->rank, g->dims).text);
        g->mask_stride[i] = dim == 1 ? 0 : stride;
        stride *= dim;
    }
    return DFG_OK;
}

dfg_status dfg_attention_geometry_make(const dfg_attrs *attrs,
                                       const dfg_type *in, int32_t n_in,
                                       dfg_attention_geometry *g)
{
    const dfg_type *q = &in[0], *k = &in[1], *v = &in[2];
    const dfg_type *mask = n_in > 3 && in[3].rank >= 0 ? &in[3] : NULL;
    *g = (dfg_attention_geometry){0};
    if (q->rank < 2)
        return dfg_error(DFG_ERR_SHAPE, "attention: q must have rank 2 or "
                         "more, got %s", dfg_dims_format(q->rank, q->shape).text);
    dfg_status st = batch_dims_equal(q, k, "k");
    if (st == DFG_OK)
        st = batch_dims_equal(q, v, "v");
    for (int32_t i = 1; st == DFG_OK && i < (mask ? 4 : 3); i++)
        st = dfg_shape_same_dtype(in, 0, i);
    if (st != DFG_OK)
        return st;
    int32_t r = q->rank;
    g->key_rows = attrs->trans_b != 0;
    g->sq = q->shape[r - 2];
    g->d = q->shape[r - 1];
    g->sk = k->shape[g->key_rows ? r - 2 : r - 1];
    g->dv = v->shape[r - 1];
    int64_t k_d = k->shape[g->key_rows ? r - 1 : r - 2];
    if (k_d != g->d || v->shape[r - 2] != g->sk)
        return dfg_error(DFG_ERR_SHAPE, "attention: q %s, k %s (%s) and v "
                         "%s do not fit", dfg_dims_format(r, q->shape).text,
                         dfg_dims_format(r, k->shape).text,
                         g->key_rows ? "key rows" : "transposed",
                         dfg_dims_format(r, v->shape).text);
    g->heads = 1;
    for (int32_t i = 0; i + 2 < r; i++)
        g->heads *= q->shape[i];
    g->rank = r;
    for (int32_t i = 0; i + 2 < r; i++)
        g->dims[i] = q->shape[i];
    g->dims[r - 2] = g->sq;
    g->dims[r - 1] = g->sk;
    g->has_mask = mask != NULL;
    return mask ? mask_strides(mask, g) : DFG_OK;
}

int64_t dfg_attention_mask_row(const dfg_attention_geometry *g, int64_t head,
                               int64_t row)
{
    int64_t at = row * g->mask_stride[g->rank - 2];
    for (int32_t i = g->rank - 3; i >= 0; i--) {
        at += (head % g->dims[i]) * g->mask_stride[i];
        head /= g->dims[i];
    }
    return at;
}
