/* Vector-Jacobian rules of the linear-algebra and network ops: matmul,
 * gemm, conv2d, pools, batch_norm (inference and training mode) and the
 * softmax cross-entropy loss.
 * Inference batch_norm normalises with its mean and var operands, which
 * are constants to it: they get no gradient (docs/training.md). */
#include "passes/training/autodiff.h"

#include "util/error.h"

/* x with its last two axes swapped. */
static int32_t swap_last_two(dfg_ad *ad, int32_t x)
{
    if (x < 0)
        return -1;
    dfg_type t = dfg_ad_type(ad, x);
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.n_shape = t.rank;
    for (int32_t d = 0; d < t.rank; d++)
        attrs.shape[d] = d;
    attrs.shape[t.rank - 2] = t.rank - 1;
    attrs.shape[t.rank - 1] = t.rank - 2;
    return dfg_ad_op(ad, DFG_OP_TRANSPOSE, &attrs, &x, 1);
}

/* x [..., R, C] as the matrix [prod(...) * R, C]: a view. */
static int32_t as_rows(dfg_ad *ad, int32_t x)
{
    if (x < 0)
        return -1;
    dfg_type t = dfg_ad_type(ad, x);
    int64_t rows = 1;
    for (int32_t d = 0; d + 1 < t.rank; d++)
        rows *= t.shape[d];
    t.shape[1] = t.shape[t.rank - 1];
    t.shape[0] = rows;
    t.rank = 2;
    return dfg_ad_reshape(ad, x, &t);
}

static int32_t gemm(dfg_ad *ad, int32_t a, int32_t b, int trans_a,
                    int trans_b, float alpha)
{
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.trans_a = trans_a;
    attrs.trans_b = trans_b;
    attrs.alpha = alpha;
    int32_t in[2] = {a, b};
    return dfg_ad_op(ad, DFG_OP_GEMM, &attrs, in, 2);
}

/* dA = g B^T and dB = A^T g, summed over the batch axes each broadcast.
 * A matrix B shared by every batch of A (a linear layer over tokens)
 * takes its gradient as one product over all rows, A^T g with A as
 * [batch * M, K] and g as [batch * M, N]: never a [batch, K, N] gradient
 * summed afterwards (a BERT MLP's 768 x 3072 weight over 8 sequences:
 * 72 MiB). */
void dfg_vjp_matmul(dfg_ad *ad, const dfg_ir_node *node, const int32_t *dy,
                    int32_t *dx)
{
    int32_t a = node->inputs[0], b = node->inputs[1];
    dfg_type ta = dfg_ad_type(ad, a), tb = dfg_ad_type(ad, b);
    if (node->attrs.trans_a || node->attrs.trans_b) {
        ad->status = dfg_error(DFG_ERR_UNSUPPORTED, "a matmul reading an "
                               "operand transposed (trans_a, trans_b) is not "
                               "differentiated");
        return;
    }
    if (ta.rank < 2 || tb.rank < 2) {
        ad->status = dfg_error(DFG_ERR_UNSUPPORTED, "matmul of a rank-1 operand is not "
                  "differentiated: unsqueeze it to a matrix first");
        return;
    }
    dx[0] = dfg_ad_sum_to(
        ad, dfg_ad_binary(ad, DFG_OP_MATMUL, dy[0], swap_last_two(ad, b)), &ta);
    if (tb.rank == 2 && ta.rank > 2)
        dx[1] = gemm(ad, as_rows(ad, a), as_rows(ad, dy[0]), 1, 0, 1.0f);
    else
        dx[1] = dfg_ad_sum_to(
            ad, dfg_ad_binary(ad, DFG_OP_MATMUL, swap_last_two(ad, a), dy[0]),
            &tb);
}

/* Y = alpha op(A) op(B) + beta C:
 *   d op(A) = alpha g op(B)^T, d op(B) = alpha op(A)^T g, dC = beta g
 * (summed to C's shape), each op(.) written back as a gemm transpose. */
void dfg_vjp_gemm(dfg_ad *ad, const dfg_ir_node *node, const int32_t *dy,
                  int32_t *dx)
{
    const dfg_attrs *at = &node->attrs;
    int32_t a = node->inputs[0], b = node->inputs[1], g = dy[0];
    int ta = at->trans_a != 0, tb = at->trans_b != 0;
    dx[0] = ta ? gemm(ad, b, g, tb, 1, at->alpha)
               : gemm(ad, g, b, 0, !tb, at->alpha);
    dx[1] = tb ? gemm(ad, g, a, 1, ta, at->alpha)
               : gemm(ad, a, g, !ta, 0, at->alpha);
    if (node->n_inputs > 2 && node->inputs[2] >= 0) {
        dfg_type tc = dfg_ad_type(ad, node->inputs[2]);
        int32_t gc = at->beta == 1.0f
                         ? g
                         : dfg_ad_binary(ad, DFG_OP_MUL, g,
                                         dfg_ad_scalar(ad, at->beta));
        dx[2] = dfg_ad_sum_to(ad, gc, &tc);
    }
}

void dfg_vjp_conv2d(dfg_ad *ad, const dfg_ir_node *node, const int32_t *dy,
                    int32_t *dx)
{
    int32_t x = node->inputs[0], w = node->inputs[1];
    dfg_type tx = dfg_ad_type(ad, x), tw = dfg_ad_type(ad, w);
    dfg_attrs input_attrs = dfg_ad_attrs_with_shape(&node->attrs, &tx);
    dfg_attrs weight_attrs = dfg_ad_attrs_with_shape(&node->attrs, &tw);
    int32_t gw[2] = {dy[0], w}, gx[2] = {dy[0], x};
    dx[0] = dfg_ad_op(ad, DFG_OP_CONV2D_GRAD_INPUT, &input_attrs, gw, 2);
    dx[1] = dfg_ad_op(ad, DFG_OP_CONV2D_GRAD_WEIGHT, &weight_attrs, gx, 2);
    if (node->n_inputs > 2 && node->inputs[2] >= 0) {
        static const int64_t axes[3] = {0, 2, 3};
        dx[2] = dfg_ad_reduce(ad, DFG_OP_REDUCE_SUM, dy[0], 3, axes, 0);
    }
}

void dfg_vjp_pool(dfg_ad *ad, const dfg_ir_node *node, const int32_t *dy,
                  int32_t *dx)
{
    int32_t x = node->inputs[0];
    if (node->op == DFG_OP_MAX_POOL) {
        int32_t in[2] = {x, dy[0]};
        dx[0] = dfg_ad_op(ad, DFG_OP_MAX_POOL_GRAD, &node->attrs, in, 2);
    } else {
        dfg_type tx = dfg_ad_type(ad, x);
        dfg_attrs attrs = dfg_ad_attrs_with_shape(&node->attrs, &tx);
        dx[0] = dfg_ad_op(ad, DFG_OP_AVERAGE_POOL_GRAD, &attrs, &dy[0], 1);
    }
}

/* y = mean over the spatial axes: each input element gets g / count. */
void dfg_vjp_global_average_pool(dfg_ad *ad, const dfg_ir_node *node,
                                 const int32_t *dy, int32_t *dx)
{
    dfg_type tx = dfg_ad_type(ad, node->inputs[0]);
    int64_t count = 1;
    for (int32_t d = 2; d < tx.rank; d++)
        count *= tx.shape[d];
    int32_t share = dfg_ad_binary(ad, DFG_OP_MUL, dy[0],
                                  dfg_ad_scalar(ad, 1.0f / (float)(count ? count : 1)));
    dx[0] = dfg_ad_expand(ad, share, &tx);
}

/* A [C] parameter as [C, 1, ...] so that it broadcasts over x [N, C, ...]. */
static int32_t per_channel(dfg_ad *ad, int32_t p, int32_t x_rank)
{
    dfg_type t = dfg_ad_type(ad, p);
    for (int32_t d = 1; d < x_rank - 1; d++)
        t.shape[d] = 1;
    t.rank = x_rank - 1 > 1 ? x_rank - 1 : 1;
    return dfg_ad_reshape(ad, p, &t);
}

/* y = (x - mean) * rstd * scale + bias, rstd = 1 / sqrt(var + eps):
 * dx = g scale rstd, dscale = sum(g (x - mean) rstd), dbias = sum(g),
 * the sums over every axis but the channel's. */
void dfg_vjp_batch_norm(dfg_ad *ad, const dfg_ir_node *node, const int32_t *dy,
                        int32_t *dx)
{
    int32_t x = node->inputs[0], g = dy[0];
    int32_t rank = dfg_ad_type(ad, x).rank;
    int32_t scale = per_channel(ad, node->inputs[1], rank);
    int32_t mean = per_channel(ad, node->inputs[3], rank);
    int32_t var = per_channel(ad, node->inputs[4], rank);
    int32_t rstd = dfg_ad_unary(
        ad, DFG_OP_RECIPROCAL,
        dfg_ad_unary(ad, DFG_OP_SQRT,
                     dfg_ad_binary(ad, DFG_OP_ADD, var,
                                   dfg_ad_scalar(ad, node->attrs.epsilon))));
    dx[0] = dfg_ad_binary(ad, DFG_OP_MUL, g,
                          dfg_ad_binary(ad, DFG_OP_MUL, scale, rstd));
    int64_t axes[DFG_MAX_RANK];
    int32_t n_axes = 0;
    for (int32_t d = 0; d < rank; d++)
        if (d != 1)
            axes[n_axes++] = d;
    int32_t xhat = dfg_ad_binary(ad, DFG_OP_MUL,
                                 dfg_ad_binary(ad, DFG_OP_SUB, x, mean), rstd);
    dx[1] = dfg_ad_reduce(ad, DFG_OP_REDUCE_SUM,
                          dfg_ad_binary(ad, DFG_OP_MUL, g, xhat), n_axes, axes,
                          0);
    dx[2] = dfg_ad_reduce(ad, DFG_OP_REDUCE_SUM, g, n_axes, axes, 0);
}

/* Training mode: one backward op from the batch statistics the forward
 * op returned (the running statistics get no gradient). */
void dfg_vjp_batch_norm_train(dfg_ad *ad, const dfg_ir_node *node,
                              const int32_t *dy, int32_t *dx)
{
    if (dy[0] < 0)
        return; /* the loss reads only the statistics: no path to x */
    int32_t in[5] = {node->inputs[0], dy[0], node->inputs[1],
                     node->outputs[1], node->outputs[2]};
    int32_t out[3];
    dfg_ad_op_outputs(ad, DFG_OP_BATCH_NORM_TRAIN_GRAD, &node->attrs, in, 5, 3,
                      out);
    dx[0] = out[0];
    dx[1] = out[1];
    dx[2] = out[2];
}

void dfg_vjp_softmax_cross_entropy(dfg_ad *ad, const dfg_ir_node *node,
                                   const int32_t *dy, int32_t *dx)
{
    int32_t in[3] = {node->inputs[0], node->inputs[1], dy[0]};
    dx[0] = dfg_ad_op(ad, DFG_OP_SOFTMAX_CROSS_ENTROPY_GRAD, NULL, in, 3);
}
