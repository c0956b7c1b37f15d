/* dfg's fused post-ops as oneDNN's (dnnl_post_ops.h). */
#include "runtime/cpu/onednn/dnnl_post_ops.h"

/* Appends dfg post-op k of attrs to ops; -1 on failure. */
static int post_op_append(dnnl_post_ops_t ops, const dfg_attrs *attrs,
                          int32_t k)
{
    float alpha = attrs->post_op_alpha[k], beta = attrs->post_op_beta[k];
    dnnl_alg_kind_t alg;
    switch (attrs->post_ops[k]) {
    case DFG_POST_SUM:
        return dnnl_post_ops_append_sum(ops, 1.0f) == dnnl_success ? 0 : -1;
    case DFG_POST_HARDSIGMOID: /* clip(alpha x + beta, 0, 1) */
        return dnnl_post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_linear,
                                            alpha, beta) == dnnl_success &&
                       dnnl_post_ops_append_eltwise(ops, 1.0f,
                                                    dnnl_eltwise_clip, 0.0f,
                                                    1.0f) == dnnl_success
                   ? 0
                   : -1;
    case DFG_POST_RELU:
        alg = dnnl_eltwise_relu, alpha = beta = 0.0f;
        break;
    case DFG_POST_CLIP:
        alg = dnnl_eltwise_clip;
        break;
    case DFG_POST_SIGMOID:
        alg = dnnl_eltwise_logistic, alpha = beta = 0.0f;
        break;
    case DFG_POST_HARDSWISH:
        alg = dnnl_eltwise_hardswish, alpha = beta = 0.0f;
        break;
    case DFG_POST_SILU: /* swish: x * sigmoid(alpha x) */
        alg = dnnl_eltwise_swish, alpha = 1.0f, beta = 0.0f;
        break;
    case DFG_POST_GELU_ERF:
        alg = dnnl_eltwise_gelu_erf, alpha = beta = 0.0f;
        break;
    case DFG_POST_GELU_TANH:
        alg = dnnl_eltwise_gelu_tanh, alpha = beta = 0.0f;
        break;
    default:
        return -1;
    }
    return dnnl_post_ops_append_eltwise(ops, 1.0f, alg, alpha, beta) ==
                   dnnl_success
               ? 0
               : -1;
}

int dfg_dnnl_post_ops_set(dnnl_primitive_attr_t attr, const dfg_attrs *attrs)
{
    if (attrs->n_post_ops <= 0)
        return 0;
    dnnl_post_ops_t ops = NULL;
    int ok = dnnl_post_ops_create(&ops) == dnnl_success;
    for (int32_t k = 0; ok && k < attrs->n_post_ops; k++)
        ok = post_op_append(ops, attrs, k) == 0;
    ok = ok && dnnl_primitive_attr_set_post_ops(attr, ops) == dnnl_success;
    if (ops)
        dnnl_post_ops_destroy(ops);
    return ok ? 0 : -1;
}
