/* Vector-Jacobian rules of the elementwise ops. A broadcast operand's
 * gradient is summed back to its shape (dfg_ad_sum_to). Where an op is
 * not differentiable at a point (relu, abs, max at 0 or at a tie), the
 * rule takes the one-sided derivative PyTorch takes there: 0 for relu at
 * 0, the second operand for a max/min tie. */
#include "passes/training/autodiff.h"

#define X(node) ((node)->inputs[0])
#define Y(node) ((node)->outputs[0])

static int32_t mul(dfg_ad *ad, int32_t a, int32_t b)
{
    return dfg_ad_binary(ad, DFG_OP_MUL, a, b);
}

static int32_t scaled(dfg_ad *ad, int32_t g, float factor)
{
    return mul(ad, g, dfg_ad_scalar(ad, factor));
}

/* g where cond holds, 0 elsewhere. */
static int32_t masked(dfg_ad *ad, int32_t cond, int32_t g)
{
    return dfg_ad_where(ad, cond, g, dfg_ad_scalar(ad, 0.0f));
}

static int32_t compare_scalar(dfg_ad *ad, dfg_op op, int32_t x, float value)
{
    return dfg_ad_binary(ad, op, x, dfg_ad_scalar(ad, value));
}

void dfg_vjp_unary(dfg_ad *ad, const dfg_ir_node *node, const int32_t *dy,
                   int32_t *dx)
{
    int32_t g = dy[0], x = X(node), y = Y(node);
    const dfg_attrs *a = &node->attrs;
    switch (node->op) {
    case DFG_OP_NEG:
        dx[0] = dfg_ad_unary(ad, DFG_OP_NEG, g);
        break;
    case DFG_OP_ABS:
        dx[0] = dfg_ad_where(ad, compare_scalar(ad, DFG_OP_LESS, x, 0.0f),
                             dfg_ad_unary(ad, DFG_OP_NEG, g), g);
        break;
    case DFG_OP_EXP:
        dx[0] = mul(ad, g, y);
        break;
    case DFG_OP_LOG:
        dx[0] = dfg_ad_binary(ad, DFG_OP_DIV, g, x);
        break;
    case DFG_OP_SQRT: /* g / (2 sqrt(x)) */
        dx[0] = dfg_ad_binary(ad, DFG_OP_DIV, scaled(ad, g, 0.5f), y);
        break;
    case DFG_OP_RECIPROCAL: /* -g / x^2 = -g y^2 */
        dx[0] = dfg_ad_unary(ad, DFG_OP_NEG, mul(ad, g, mul(ad, y, y)));
        break;
    case DFG_OP_RELU:
        dx[0] = masked(ad, compare_scalar(ad, DFG_OP_GREATER, y, 0.0f), g);
        break;
    case DFG_OP_LEAKY_RELU:
        dx[0] = dfg_ad_where(ad, compare_scalar(ad, DFG_OP_GREATER, x, 0.0f),
                             g, scaled(ad, g, a->alpha));
        break;
    case DFG_OP_SIGMOID: /* g y (1 - y) */
        dx[0] = mul(ad, mul(ad, g, y),
                    dfg_ad_binary(ad, DFG_OP_SUB, dfg_ad_scalar(ad, 1.0f), y));
        break;
    case DFG_OP_TANH: /* g (1 - y^2) */
        dx[0] = mul(ad, g, dfg_ad_binary(ad, DFG_OP_SUB,
                                         dfg_ad_scalar(ad, 1.0f),
                                         mul(ad, y, y)));
        break;
    case DFG_OP_GELU: {
        int32_t in[2] = {x, g};
        dx[0] = dfg_ad_op(ad, DFG_OP_GELU_GRAD, a, in, 2);
        break;
    }
    case DFG_OP_ERF: /* g 2/sqrt(pi) exp(-x^2) */
        dx[0] = mul(ad, scaled(ad, g, 1.12837916709551257f),
                    dfg_ad_unary(ad, DFG_OP_EXP,
                                 dfg_ad_unary(ad, DFG_OP_NEG, mul(ad, x, x))));
        break;
    case DFG_OP_CLIP: /* g inside [min, max], 0 where clipped */
        dx[0] = dfg_ad_where(
            ad, compare_scalar(ad, DFG_OP_LESS, x, a->clip_min),
            dfg_ad_scalar(ad, 0.0f),
            dfg_ad_where(ad,
                         compare_scalar(ad, DFG_OP_GREATER, x, a->clip_max),
                         dfg_ad_scalar(ad, 0.0f), g));
        break;
    case DFG_OP_CAST: /* float -> float: the gradient cast back */
        dx[0] = dfg_ad_cast(ad, g, dfg_ad_type(ad, x).dtype);
        break;
    default:
        break;
    }
}

void dfg_vjp_binary(dfg_ad *ad, const dfg_ir_node *node, const int32_t *dy,
                    int32_t *dx)
{
    int32_t g = dy[0], a = node->inputs[0], b = node->inputs[1], y = Y(node);
    int32_t da = -1, db = -1;
    switch (node->op) {
    case DFG_OP_ADD:
        da = db = g;
        break;
    case DFG_OP_SUB:
        da = g;
        db = dfg_ad_unary(ad, DFG_OP_NEG, g);
        break;
    case DFG_OP_MUL:
        da = mul(ad, g, b);
        db = mul(ad, g, a);
        break;
    case DFG_OP_DIV: /* d/db a/b = -y/b */
        da = dfg_ad_binary(ad, DFG_OP_DIV, g, b);
        db = dfg_ad_unary(ad, DFG_OP_NEG,
                          dfg_ad_binary(ad, DFG_OP_DIV, mul(ad, g, y), b));
        break;
    case DFG_OP_POW: /* b a^(b-1) and log(a) a^b (a > 0) */
        da = mul(ad, mul(ad, g, b),
                 dfg_ad_binary(ad, DFG_OP_POW, a,
                               dfg_ad_binary(ad, DFG_OP_SUB, b,
                                             dfg_ad_scalar(ad, 1.0f))));
        db = mul(ad, mul(ad, g, y), dfg_ad_unary(ad, DFG_OP_LOG, a));
        break;
    case DFG_OP_MAX:
    case DFG_OP_MIN: {
        int32_t a_wins = dfg_ad_binary(
            ad, node->op == DFG_OP_MAX ? DFG_OP_GREATER : DFG_OP_LESS, a, b);
        int32_t zero = dfg_ad_scalar(ad, 0.0f);
        da = dfg_ad_where(ad, a_wins, g, zero);
        db = dfg_ad_where(ad, a_wins, zero, g);
        break;
    }
    default:
        break;
    }
    dfg_type ta = dfg_ad_type(ad, a), tb = dfg_ad_type(ad, b);
    dx[0] = dfg_ad_sum_to(ad, da, &ta);
    dx[1] = dfg_ad_sum_to(ad, db, &tb);
}

void dfg_vjp_where(dfg_ad *ad, const dfg_ir_node *node, const int32_t *dy,
                   int32_t *dx)
{
    int32_t cond = node->inputs[0], zero = dfg_ad_scalar(ad, 0.0f);
    dfg_type tx = dfg_ad_type(ad, node->inputs[1]);
    dfg_type ty = dfg_ad_type(ad, node->inputs[2]);
    dx[1] = dfg_ad_sum_to(ad, dfg_ad_where(ad, cond, dy[0], zero), &tx);
    dx[2] = dfg_ad_sum_to(ad, dfg_ad_where(ad, cond, zero, dy[0]), &ty);
}

/* dropout_train: the kept elements' gradient, scaled as they were, from
 * the mask the forward run drew (output 1), so backward needs no draw. */
void dfg_vjp_dropout_train(dfg_ad *ad, const dfg_ir_node *node,
                           const int32_t *dy, int32_t *dx)
{
    float scale = 1.0f / (1.0f - node->attrs.alpha);
    dx[0] = masked(ad, node->outputs[1], scaled(ad, dy[0], scale));
}
