/* A conv2d's fused post-ops on one output element (dfg_attrs.post_ops),
 * shared by the CPU reference kernel and any CUDA kernel. The sum post-op
 * is not here: a kernel adds the residual by accumulating onto it. */
#ifndef DFG_MATH_POST_OPS_H
#define DFG_MATH_POST_OPS_H

#include <stdint.h>

#include "dfg/attrs.h"
#include "math/elementwise.h"
#include "math/host_device.h"

DFG_HOST_DEVICE static inline float dfg_hardsigmoid(float x, float alpha,
                                                    float beta)
{
    return dfg_clip(alpha * x + beta, 0.0f, 1.0f);
}

/* Post-op `kind` (not DFG_POST_SUM, which leaves x) applied to x. */
DFG_HOST_DEVICE static inline float dfg_post_op_eltwise(int32_t kind,
                                                        float alpha, float beta,
                                                        float x)
{
    switch (kind) {
    case DFG_POST_RELU:
        return dfg_relu(x);
    case DFG_POST_CLIP:
        return dfg_clip(x, alpha, beta);
    case DFG_POST_SIGMOID:
        return dfg_sigmoid(x);
    case DFG_POST_HARDSIGMOID:
        return dfg_hardsigmoid(x, alpha, beta);
    case DFG_POST_HARDSWISH:
        return x * dfg_hardsigmoid(x, 1.0f / 6.0f, 0.5f);
    case DFG_POST_SILU:
        return x * dfg_sigmoid(x);
    case DFG_POST_GELU_ERF:
        return dfg_gelu_erf(x);
    case DFG_POST_GELU_TANH:
        return dfg_gelu_tanh(x);
    case DFG_POST_TANH:
        return dfg_tanh(x);
    default:
        return x;
    }
}

/* The post-ops of a from the `from`-th on (DFG_POST_SUM skipped: a
 * kernel adds the residual itself) applied to y[0..n), in place, one
 * post-op at a time. */
static inline void dfg_post_ops_apply_span(const dfg_attrs *a, int32_t from,
                                           float *y, int64_t n)
{
    for (int32_t k = from; k < a->n_post_ops; k++) {
        int32_t kind = a->post_ops[k];
        if (kind == DFG_POST_SUM)
            continue;
        float alpha = a->post_op_alpha[k], beta = a->post_op_beta[k];
        for (int64_t i = 0; i < n; i++)
            y[i] = dfg_post_op_eltwise(kind, alpha, beta, y[i]);
    }
}

#endif
