/* dfg's fused post-ops as oneDNN's (dnnl_post_ops.h). */
#include "runtime/cpu/onednn/dnnl_post_ops.h"

#include <string.h>

#include "runtime/cpu/elementwise/silu_vector.h"

/* The post-ops that are one oneDNN eltwise: its algorithm and, unless it
 * takes the post-op's own alpha and beta (clip's bounds), fixed ones. */
static const struct eltwise_post_op {
    int32_t post;
    dnnl_alg_kind_t alg;
    int own_params;
    float alpha, beta;
} eltwise_post_ops[] = {
    {DFG_POST_RELU, dnnl_eltwise_relu, 0, 0.0f, 0.0f},
    {DFG_POST_CLIP, dnnl_eltwise_clip, 1, 0.0f, 0.0f},
    {DFG_POST_SIGMOID, dnnl_eltwise_logistic, 0, 0.0f, 0.0f},
    {DFG_POST_HARDSWISH, dnnl_eltwise_hardswish, 0, 0.0f, 0.0f},
    /* swish: x * sigmoid(alpha x) */
    {DFG_POST_SILU, dnnl_eltwise_swish, 0, 1.0f, 0.0f},
    {DFG_POST_GELU_ERF, dnnl_eltwise_gelu_erf, 0, 0.0f, 0.0f},
    {DFG_POST_GELU_TANH, dnnl_eltwise_gelu_tanh, 0, 0.0f, 0.0f},
    {DFG_POST_TANH, dnnl_eltwise_tanh, 0, 0.0f, 0.0f},
};

/* Appends dfg post-op k of attrs to ops; -1 on failure. */
static int post_op_append(dnnl_post_ops_t ops, const dfg_attrs *attrs,
                          int32_t k)
{
    float alpha = attrs->post_op_alpha[k], beta = attrs->post_op_beta[k];
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
    default:
        break;
    }
    for (size_t i = 0;
         i < sizeof eltwise_post_ops / sizeof eltwise_post_ops[0]; i++) {
        const struct eltwise_post_op *e = &eltwise_post_ops[i];
        if (e->post != attrs->post_ops[k])
            continue;
        if (!e->own_params)
            alpha = e->alpha, beta = e->beta;
        return dnnl_post_ops_append_eltwise(ops, 1.0f, e->alg, alpha, beta) ==
                       dnnl_success
                   ? 0
                   : -1;
    }
    return -1;
}

/* Sets attr's post-ops to a sum (where sum is 1) and attrs's first n. */
static int post_ops_set(dnnl_primitive_attr_t attr, const dfg_attrs *attrs,
                        int sum, int32_t n)
{
    if (n <= 0 && !sum)
        return 0;
    dnnl_post_ops_t ops = NULL;
    int ok = dnnl_post_ops_create(&ops) == dnnl_success &&
             (!sum || dnnl_post_ops_append_sum(ops, 1.0f) == dnnl_success);
    for (int32_t k = 0; ok && k < n; k++)
        ok = post_op_append(ops, attrs, k) == 0;
    ok = ok && dnnl_primitive_attr_set_post_ops(attr, ops) == dnnl_success;
    if (ops)
        dnnl_post_ops_destroy(ops);
    return ok ? 0 : -1;
}

int dfg_dnnl_post_ops_set(dnnl_primitive_attr_t attr, const dfg_attrs *attrs)
{
    return post_ops_set(attr, attrs, 0, attrs->n_post_ops);
}

int32_t dfg_dnnl_post_op_left(const dfg_attrs *attrs)
{
    int32_t n = attrs->n_post_ops;
    return n > 0 && attrs->post_ops[n - 1] == DFG_POST_SILU ? DFG_POST_SILU
                                                            : -1;
}

int dfg_dnnl_post_ops_set_leaving(dnnl_primitive_attr_t attr,
                                  const dfg_attrs *attrs, int sum)
{
    return post_ops_set(attr, attrs, sum,
                        attrs->n_post_ops -
                            (dfg_dnnl_post_op_left(attrs) >= 0));
}

int dfg_dnnl_left_bind(dfg_dnnl_left *left, const dfg_attrs *attrs, void *y,
                       const dfg_type *y_type)
{
    memset(left, 0, sizeof *left);
    if (dfg_dnnl_post_op_left(attrs) < 0)
        return 0;
    left->y = y;
    left->n = dfg_type_bytes(y_type) / (int64_t)sizeof(float);
    return 1;
}

void dfg_dnnl_left_run(const dfg_dnnl_left *left)
{
    if (left->y)
        dfg_cpu_silu_f32(left->y, left->y, left->n);
}

const char *dfg_dnnl_left_name(const dfg_dnnl_left *left)
{
    return left->y ? " + silu" : "";
}
