/* Vector-Jacobian rules of softmax, log_softmax, layer_norm and the
 * reductions. */
#include "passes/training/autodiff.h"

static int32_t mul(dfg_ad *ad, int32_t a, int32_t b)
{
    return dfg_ad_binary(ad, DFG_OP_MUL, a, b);
}

static int32_t sub(dfg_ad *ad, int32_t a, int32_t b)
{
    return dfg_ad_binary(ad, DFG_OP_SUB, a, b);
}

static int32_t normalized_axis(int32_t axis, int32_t rank)
{
    return axis < 0 ? axis + rank : axis;
}

/* softmax:     dx = y (g - sum(g y))
 * log_softmax: dx = g - exp(y) sum(g)
 * the sums along the op's axis, kept for broadcasting. */
void dfg_vjp_softmax(dfg_ad *ad, const dfg_ir_node *node, const int32_t *dy,
                     int32_t *dx)
{
    int32_t y = node->outputs[0], g = dy[0];
    int64_t axis = normalized_axis(node->attrs.axis, dfg_ad_type(ad, y).rank);
    if (node->op == DFG_OP_SOFTMAX) {
        int32_t dot = dfg_ad_reduce(ad, DFG_OP_REDUCE_SUM, mul(ad, g, y), 1,
                                    &axis, 1);
        dx[0] = mul(ad, y, sub(ad, g, dot));
    } else {
        int32_t total = dfg_ad_reduce(ad, DFG_OP_REDUCE_SUM, g, 1, &axis, 1);
        dx[0] = sub(ad, g, mul(ad, dfg_ad_unary(ad, DFG_OP_EXP, y), total));
    }
}

/* Over the normalised axes A = [axis, rank), with xhat = (x - mean) rstd:
 *   gs = g scale
 *   dx = rstd (gs - mean_A(gs) - xhat mean_A(gs xhat))
 *   dscale = sum over the other axes of g xhat, dbias = sum of g.
 * mean and rstd are recomputed from x as the forward op computes them
 * (biased variance), rather than kept from the forward pass. */
void dfg_vjp_layer_norm(dfg_ad *ad, const dfg_ir_node *node, const int32_t *dy,
                        int32_t *dx)
{
    int32_t x = node->inputs[0], scale = node->inputs[1], g = dy[0];
    dfg_type tx = dfg_ad_type(ad, x);
    int32_t axis = normalized_axis(node->attrs.axis, tx.rank);
    int64_t norm_axes[DFG_MAX_RANK], lead_axes[DFG_MAX_RANK];
    int32_t n_norm = 0, n_lead = 0;
    for (int32_t d = 0; d < tx.rank; d++) {
        if (d >= axis)
            norm_axes[n_norm++] = d;
        else
            lead_axes[n_lead++] = d;
    }
    int32_t centred = sub(ad, x, dfg_ad_reduce(ad, DFG_OP_REDUCE_MEAN, x,
                                               n_norm, norm_axes, 1));
    int32_t var = dfg_ad_reduce(ad, DFG_OP_REDUCE_MEAN,
                                mul(ad, centred, centred), n_norm, norm_axes, 1);
    int32_t rstd = dfg_ad_unary(
        ad, DFG_OP_RECIPROCAL,
        dfg_ad_unary(ad, DFG_OP_SQRT,
                     dfg_ad_binary(ad, DFG_OP_ADD, var,
                                   dfg_ad_scalar(ad, node->attrs.epsilon))));
    int32_t xhat = mul(ad, centred, rstd);
    int32_t gs = mul(ad, g, scale);
    int32_t mean_gs = dfg_ad_reduce(ad, DFG_OP_REDUCE_MEAN, gs, n_norm,
                                    norm_axes, 1);
    int32_t mean_gs_xhat = dfg_ad_reduce(ad, DFG_OP_REDUCE_MEAN,
                                         mul(ad, gs, xhat), n_norm, norm_axes,
                                         1);
    dx[0] = mul(ad, rstd,
                sub(ad, sub(ad, gs, mean_gs), mul(ad, xhat, mean_gs_xhat)));
    int32_t g_xhat = mul(ad, g, xhat);
    dx[1] = n_lead ? dfg_ad_reduce(ad, DFG_OP_REDUCE_SUM, g_xhat, n_lead,
                                   lead_axes, 0)
                   : g_xhat;
    if (node->n_inputs > 2 && node->inputs[2] >= 0)
        dx[2] = n_lead ? dfg_ad_reduce(ad, DFG_OP_REDUCE_SUM, g, n_lead,
                                       lead_axes, 0)
                       : g;
}

/* reduce_sum: g spread over the reduced axes; reduce_mean: divided by
 * their count; reduce_max: to the elements equal to the maximum. */
void dfg_vjp_reduce(dfg_ad *ad, const dfg_ir_node *node, const int32_t *dy,
                    int32_t *dx)
{
    int32_t x = node->inputs[0];
    dfg_type tx = dfg_ad_type(ad, x), kept = tx;
    const dfg_attrs *a = &node->attrs;
    int64_t count = 1;
    for (int32_t d = 0; d < tx.rank; d++) {
        int reduced = a->n_axes == 0;
        for (int32_t i = 0; i < a->n_axes; i++)
            reduced |= normalized_axis((int32_t)a->axes[i], tx.rank) == d;
        if (reduced) {
            count *= tx.shape[d];
            kept.shape[d] = 1;
        }
    }
    int32_t g = dfg_ad_reshape(ad, dy[0], &kept);
    if (node->op == DFG_OP_REDUCE_MEAN)
        g = mul(ad, g, dfg_ad_scalar(ad, 1.0f / (float)(count ? count : 1)));
    g = dfg_ad_expand(ad, g, &tx);
    if (node->op == DFG_OP_REDUCE_MAX) {
        int32_t is_max = dfg_ad_binary(ad, DFG_OP_EQUAL, x,
                                       dfg_ad_reshape(ad, node->outputs[0],
                                                      &kept));
        g = dfg_ad_where(ad, is_max, g, dfg_ad_scalar(ad, 0.0f));
    }
    dx[0] = g;
}
