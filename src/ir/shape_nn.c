/* Shape rules of the neural-network ops: matmul, gemm, conv2d, pools and
 * normalisations. */
#include "ir/op_table.h"
#include "ir/shape_rules.h"
#include "util/error.h"

/* The post-ops (dfg_attrs.post_ops) of a conv2d, matmul, gemm or
 * batch_norm (which passes n_in 1: no residual): known
 * kinds, on a float output (f32, or f16 / bf16 for a backend with
 * 16-bit products: dfg_target.half_inference), with a SUM first exactly when input 3 (the residual) is
 * there, of y's type. */
static dfg_status check_post_ops(const dfg_attrs *a, const dfg_type *in,
                                 int32_t n_in, const dfg_type *y)
{
    int has_residual = n_in > 3 && in[3].rank >= 0;
    if (a->n_post_ops < 0 || a->n_post_ops > DFG_MAX_POST_OPS)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "%d post-ops, at most %d", (int)a->n_post_ops,
                         DFG_MAX_POST_OPS);
    if (a->n_post_ops > 0 && y->dtype != DFG_F32 && y->dtype != DFG_F16 &&
        y->dtype != DFG_BF16)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "post-ops need an f32, f16 or bf16 output, this one "
                         "is %s",
                         dfg_dtype_name(y->dtype));
    for (int32_t i = 0; i < a->n_post_ops; i++) {
        int32_t kind = a->post_ops[i];
        if (kind < 0 || kind >= DFG_POST_OP_COUNT ||
            (kind == DFG_POST_SUM) != (i == 0 && has_residual))
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "post-op %d is %d: a sum comes first, exactly "
                             "when input 3 (the residual) is given", (int)i,
                             (int)kind);
    }
    if (has_residual && (a->n_post_ops == 0 || !dfg_type_equal(&in[3], y)))
        return dfg_error(DFG_ERR_SHAPE,
                         "input 3 (residual) is %s %s, the output %s %s, "
                         "added by a first post-op sum",
                         dfg_dtype_name(in[3].dtype),
                         dfg_dims_format(in[3].rank, in[3].shape).text,
                         dfg_dtype_name(y->dtype),
                         dfg_dims_format(y->rank, y->shape).text);
    return DFG_OK;
}

/* A matmul's fused bias (input 2, optional): N values of y's dtype (f32,
 * f16 or bf16), every dim
 * but the last 1, at most y's rank, so that it adds one row to every row
 * of y; B has its N columns (is no 1-D vector). */
static dfg_status check_matmul_bias(const dfg_type *in, int32_t n_in,
                                    const dfg_type *y)
{
    const dfg_type *b = n_in > 2 ? &in[2] : NULL;
    if (!b || b->rank < 0)
        return DFG_OK;
    int row = b->dtype == y->dtype &&
              (y->dtype == DFG_F32 || y->dtype == DFG_F16 ||
               y->dtype == DFG_BF16) && b->rank >= 1 &&
              b->rank <= y->rank && y->rank >= 2 && in[1].rank >= 2 &&
              b->shape[b->rank - 1] == y->shape[y->rank - 1];
    for (int32_t d = 0; row && d + 1 < b->rank; d++)
        row = b->shape[d] == 1;
    if (!row)
        return dfg_error(DFG_ERR_SHAPE,
                         "input 2 (bias) is %s %s, expected [.., 1, N] of "
                         "the output's float dtype with N = the last dim "
                         "of the output %s %s",
                         dfg_dtype_name(b->dtype),
                         dfg_dims_format(b->rank, b->shape).text,
                         dfg_dtype_name(y->dtype),
                         dfg_dims_format(y->rank, y->shape).text);
    return DFG_OK;
}

dfg_status dfg_shape_matmul(const dfg_attrs *a, const dfg_type *in,
                            int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_out;
    dfg_status st = dfg_shape_same_dtype(in, 0, 1);
    if (st != DFG_OK)
        return st;
    if (in[0].rank < 1 || in[1].rank < 1)
        return dfg_error(DFG_ERR_SHAPE,
                         "matmul needs operands of rank >= 1, got ranks %d "
                         "and %d", (int)in[0].rank, (int)in[1].rank);
    /* trans_a / trans_b: the operand is stored with its last two dims
     * swapped (a transpose folded in, matmul_geometry.h). */
    dfg_type operands[2] = {in[0], in[1]};
    const int32_t trans[2] = {a->trans_a, a->trans_b};
    for (int k = 0; k < 2; k++) {
        dfg_type *t = &operands[k];
        if (!trans[k])
            continue;
        if (t->rank < 2)
            return dfg_error(DFG_ERR_SHAPE, "matmul: input %d is read "
                             "transposed (trans_%c) but has rank %d", k,
                             k ? 'b' : 'a', (int)t->rank);
        int64_t last = t->shape[t->rank - 1];
        t->shape[t->rank - 1] = t->shape[t->rank - 2];
        t->shape[t->rank - 2] = last;
    }
    const dfg_type *x = &operands[0], *y = &operands[1];
    /* A 1-D operand is a row (left) or a column (right) whose dim is
     * dropped from the result, as numpy does. */
    int64_t k_x = x->shape[x->rank - 1];
    int64_t k_y = y->rank == 1 ? y->shape[0] : y->shape[y->rank - 2];
    if (k_x != k_y)
        return dfg_error(DFG_ERR_SHAPE,
                         "inner dims differ: input 0 has %lld columns, input "
                         "1 has %lld rows", (long long)k_x, (long long)k_y);
    int32_t batch_x = x->rank > 2 ? x->rank - 2 : 0;
    int32_t batch_y = y->rank > 2 ? y->rank - 2 : 0;
    st = dfg_shape_broadcast(batch_x, x->shape, batch_y, y->shape, &out[0]);
    if (st != DFG_OK)
        return dfg_error_prefix(st, "batch dims");
    if (x->rank >= 2)
        out[0].shape[out[0].rank++] = x->shape[x->rank - 2];
    if (y->rank >= 2)
        out[0].shape[out[0].rank++] = y->shape[y->rank - 1];
    out[0].dtype = x->dtype;
    st = dfg_shape_check_size(&out[0]);
    if (st == DFG_OK)
        st = check_matmul_bias(in, n_in, &out[0]);
    return st == DFG_OK ? check_post_ops(a, in, n_in, &out[0]) : st;
}

dfg_status dfg_shape_gemm(const dfg_attrs *a, const dfg_type *in,
                          int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_out;
    dfg_status st = dfg_shape_rank(in, 0, 2);
    if (st == DFG_OK)
        st = dfg_shape_rank(in, 1, 2);
    if (st == DFG_OK)
        st = dfg_shape_same_dtype(in, 0, 1);
    if (st != DFG_OK)
        return st;
    int64_t m = in[0].shape[a->trans_a ? 1 : 0];
    int64_t k = in[0].shape[a->trans_a ? 0 : 1];
    int64_t k_b = in[1].shape[a->trans_b ? 1 : 0];
    int64_t n = in[1].shape[a->trans_b ? 0 : 1];
    if (k != k_b)
        return dfg_error(DFG_ERR_SHAPE,
                         "inner dims differ: A gives K = %lld, B gives K = "
                         "%lld (trans_a = %d, trans_b = %d)", (long long)k,
                         (long long)k_b, (int)a->trans_a, (int)a->trans_b);
    out[0].dtype = in[0].dtype;
    out[0].rank = 2;
    out[0].shape[0] = m;
    out[0].shape[1] = n;
    const dfg_type *c = n_in > 2 ? &in[2] : NULL;
    if (c && c->rank >= 0) {
        if ((st = dfg_shape_same_dtype(in, 0, 2)) != DFG_OK)
            return st;
        /* C must broadcast to [M, N] without changing it: its dims,
         * aligned on the right, are 1 or equal to M and N. */
        int ok = c->rank <= 2;
        for (int32_t i = 0; ok && i < c->rank; i++) {
            int64_t dim = c->shape[c->rank - 1 - i];
            ok = dim == 1 || dim == out[0].shape[1 - i];
        }
        if (!ok)
            return dfg_error(DFG_ERR_SHAPE,
                             "input 2 (C) of shape %s does not broadcast to "
                             "[M,N] = [%lld,%lld]",
                             dfg_dims_format(c->rank, c->shape).text,
                             (long long)m, (long long)n);
    }
    st = dfg_shape_check_size(&out[0]);
    return st == DFG_OK ? check_post_ops(a, in, n_in, &out[0]) : st;
}

/* Output size of a sliding window along one axis; ceil_mode as ONNX and
 * PyTorch: the last window must start inside the input or the low pad. */
static dfg_status window_extent(const char *axis, int64_t size, int64_t pad_lo,
                                int64_t pad_hi, int64_t kernel, int64_t stride,
                                int64_t dilation, int ceil_mode, int64_t *out)
{
    int64_t padded, reach;
    if (dfg_add_dims(size, pad_lo, &padded) != 0 ||
        dfg_add_dims(padded, pad_hi, &padded) != 0 ||
        dfg_mul_checked(kernel - 1, dilation, &reach) != 0)
        return dfg_error(DFG_ERR_OVERFLOW,
                         "%s: padded size or dilated kernel overflows", axis);
    if (reach + 1 > padded)
        return dfg_error(DFG_ERR_SHAPE,
                         "%s: padded input size %lld (%lld + pads %lld, %lld) "
                         "is smaller than the dilated kernel %lld",
                         axis, (long long)padded, (long long)size,
                         (long long)pad_lo, (long long)pad_hi,
                         (long long)reach + 1);
    int64_t span = padded - reach - 1;
    int64_t n = span / stride + 1;
    if (ceil_mode && span % stride != 0) {
        n++;
        if ((n - 1) * stride >= size + pad_lo)
            n--;
    }
    *out = n;
    return DFG_OK;
}

/* Checks strides, dilations and the four pads, then writes the spatial
 * output dims of an NCHW window op. */
static dfg_status window_output(const dfg_attrs *a, const int64_t kernel[2],
                                int ceil_mode, const dfg_type *x,
                                dfg_type *out)
{
    static const char *const axis_names[2] = {"height", "width"};
    for (int i = 0; i < 2; i++) {
        if (a->strides[i] <= 0 || a->dilations[i] <= 0)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "strides (%d,%d) and dilations (%d,%d) must be "
                             "positive", (int)a->strides[0],
                             (int)a->strides[1], (int)a->dilations[0],
                             (int)a->dilations[1]);
        if (kernel[i] <= 0)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "kernel (%lld,%lld) must be positive",
                             (long long)kernel[0], (long long)kernel[1]);
    }
    for (int i = 0; i < 4; i++)
        if (a->pads[i] < 0)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "pads (%lld,%lld,%lld,%lld) must not be negative",
                             (long long)a->pads[0], (long long)a->pads[1],
                             (long long)a->pads[2], (long long)a->pads[3]);
    for (int i = 0; i < 2; i++) {
        dfg_status st = window_extent(axis_names[i], x->shape[2 + i],
                                      a->pads[i], a->pads[2 + i], kernel[i],
                                      a->strides[i], a->dilations[i],
                                      ceil_mode, &out->shape[2 + i]);
        if (st != DFG_OK)
            return st;
    }
    out->rank = 4;
    out->dtype = x->dtype;
    return DFG_OK;
}

dfg_status dfg_shape_conv2d(const dfg_attrs *a, const dfg_type *in,
                            int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_out;
    dfg_status st = dfg_shape_rank(in, 0, 4);
    if (st == DFG_OK)
        st = dfg_shape_rank(in, 1, 4);
    /* The weights (and bias): x's dtype, or f32 under narrow activations
     * (mixed precision reads the f32 master weights as they are). */
    int f32_weights = in[1].dtype == DFG_F32 && dfg_dtype_is_float(in[0].dtype);
    if (st == DFG_OK && !f32_weights)
        st = dfg_shape_same_dtype(in, 0, 1);
    if (st != DFG_OK)
        return st;
    int64_t c = in[0].shape[1], m = in[1].shape[0];
    if (a->group <= 0 || c % a->group != 0 || m % a->group != 0)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "group = %d must be positive and divide both the "
                         "input channels C = %lld and the output channels "
                         "M = %lld", (int)a->group, (long long)c, (long long)m);
    if (in[1].shape[1] != c / a->group)
        return dfg_error(DFG_ERR_SHAPE,
                         "input 1 has %lld channels per group, expected %lld "
                         "(C=%lld, group=%d)", (long long)in[1].shape[1],
                         (long long)(c / a->group), (long long)c,
                         (int)a->group);
    if (n_in > 2 && in[2].rank >= 0) {
        if ((st = dfg_shape_same_dtype(in, 1, 2)) != DFG_OK)
            return st;
        if (in[2].rank != 1 || in[2].shape[0] != m)
            return dfg_error(DFG_ERR_SHAPE,
                             "input 2 (bias) has shape %s, expected [%lld]",
                             dfg_dims_format(in[2].rank, in[2].shape).text,
                             (long long)m);
    }
    out[0].shape[0] = in[0].shape[0];
    out[0].shape[1] = m;
    const int64_t kernel[2] = {in[1].shape[2], in[1].shape[3]};
    st = window_output(a, kernel, 0, &in[0], &out[0]);
    if (st == DFG_OK)
        st = dfg_shape_check_size(&out[0]);
    return st == DFG_OK ? check_post_ops(a, in, n_in, &out[0]) : st;
}

dfg_status dfg_shape_pool(const dfg_attrs *a, const dfg_type *in,
                          int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_in, (void)n_out;
    dfg_status st = dfg_shape_rank(in, 0, 4);
    if (st != DFG_OK)
        return st;
    out[0].shape[0] = in[0].shape[0];
    out[0].shape[1] = in[0].shape[1];
    const int64_t kernel[2] = {a->kernel[0], a->kernel[1]};
    return window_output(a, kernel, a->ceil_mode != 0, &in[0], &out[0]);
}

dfg_status dfg_shape_global_pool(const dfg_attrs *a, const dfg_type *in,
                                 int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)a, (void)n_in, (void)n_out;
    if (in[0].rank < 3)
        return dfg_error(DFG_ERR_SHAPE,
                         "input 0 has rank %d, expected [N,C,spatial...] of "
                         "rank >= 3", (int)in[0].rank);
    out[0] = in[0];
    for (int32_t i = 2; i < in[0].rank; i++)
        out[0].shape[i] = 1;
    return DFG_OK;
}

/* DFG_ERR_SHAPE/DTYPE unless in[i] has in[0]'s dtype (or f32, when
 * f32_allowed) and exactly the dims dims[0..rank). */
static dfg_status expect_param(const dfg_type *in, int32_t i, const char *what,
                               int32_t rank, const int64_t *dims,
                               int f32_allowed)
{
    int f32 = f32_allowed && in[i].dtype == DFG_F32 &&
              dfg_dtype_is_float(in[0].dtype);
    dfg_status st = f32 ? DFG_OK : dfg_shape_same_dtype(in, 0, i);
    if (st != DFG_OK)
        return st;
    dfg_type want = {in[i].dtype, rank, {0}, 0};
    for (int32_t d = 0; d < rank; d++)
        want.shape[d] = dims[d];
    if (!dfg_type_equal(&in[i], &want))
        return dfg_error(DFG_ERR_SHAPE, "input %d (%s) has shape %s, expected %s",
                         (int)i, what,
                         dfg_dims_format(in[i].rank, in[i].shape).text,
                         dfg_dims_format(rank, dims).text);
    return DFG_OK;
}

dfg_status dfg_shape_batch_norm(const dfg_attrs *a, const dfg_type *in,
                                int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_in, (void)n_out;
    static const char *const names[5] = {"x", "scale", "bias", "mean",
                                         "variance"};
    if (in[0].rank < 2)
        return dfg_error(DFG_ERR_SHAPE,
                         "input 0 has rank %d, expected [N,C,...] of rank >= 2",
                         (int)in[0].rank);
    for (int32_t i = 1; i < 5; i++) {
        /* Per-channel operands may stay f32 under narrow activations
         * (mixed precision: the running statistics are updated in f32). */
        dfg_status st = expect_param(in, i, names[i], 1, &in[0].shape[1], 1);
        if (st != DFG_OK)
            return st;
    }
    out[0] = in[0];
    return check_post_ops(a, in, 1, &out[0]);
}

dfg_status dfg_shape_layer_norm(const dfg_attrs *a, const dfg_type *in,
                                int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_out;
    int32_t axis;
    dfg_status st = dfg_shape_axis(a->axis, in[0].rank, "axis", &axis);
    if (st != DFG_OK)
        return st;
    const int64_t *normalized = &in[0].shape[axis];
    int32_t rank = in[0].rank - axis;
    st = expect_param(in, 1, "scale", rank, normalized, 0);
    if (st == DFG_OK && n_in > 2 && in[2].rank >= 0)
        st = expect_param(in, 2, "bias", rank, normalized, 0);
    out[0] = in[0];
    return st;
}

dfg_status dfg_shape_axis_same(const dfg_attrs *a, const dfg_type *in,
                               int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_in, (void)n_out;
    int32_t axis;
    out[0] = in[0];
    return dfg_shape_axis(a->axis, in[0].rank, "axis", &axis);
}
