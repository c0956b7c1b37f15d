#include "models/model_builder.h"

#include <math.h>
#include <stdio.h>
#include "ir/tensor_type.h"
#include "util/error.h"
#include "util/memory.h"

/* xorshift64*: a fixed seed gives the same weights on every machine. */
static float next_uniform(dfg_model_ctx *m)
{
    uint64_t x = m->rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    m->rng_state = x;
    uint64_t bits = (x * 0x2545F4914F6CDD1DULL) >> 40; /* 24 random bits */
    return (float)bits / (float)(1u << 24) * 2.0f - 1.0f;
}

dfg_status dfg_model_weight(dfg_model_ctx *m, const char *name, int32_t rank,
                            const int64_t *shape, float center, float spread,
                            dfg_value *out)
{
    dfg_type type = {.dtype = DFG_F32, .rank = rank};
    for (int32_t i = 0; i < rank; i++)
        type.shape[i] = shape[i];
    int64_t numel = dfg_type_numel(&type);
    if (numel < 0)
        return dfg_error(DFG_ERR_OVERFLOW, "weight %s: shape too large", name);
    float *data = dfg_calloc(m->allocator, (size_t)numel + 1, sizeof *data);
    if (!data)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "weight %s: out of memory",
                         name);
    for (int64_t i = 0; i < numel; i++)
        data[i] = center + spread * next_uniform(m);
    dfg_status status =
        dfg_graph_weight(m->graph, name, DFG_F32, rank, shape, data, out);
    dfg_free(m->allocator, data);
    return status;
}

#define DFG_MODEL_NAME_MAX 128

dfg_status dfg_model_linear(dfg_model_ctx *m, const char *name, dfg_value x,
                            int64_t in_features, int64_t out_features,
                            dfg_value *out)
{
    dfg_tensor_info info;
    dfg_status s = dfg_graph_value_info(m->graph, x, &info);
    if (s != DFG_OK)
        return s;
    /* gemm reads PyTorch's [out, in] with trans_b; matmul wants [in, out]. */
    int use_gemm = info.rank == 2;
    int64_t weight_shape[2] = {out_features, in_features};
    if (!use_gemm) {
        weight_shape[0] = in_features;
        weight_shape[1] = out_features;
    }
    char weight_name[DFG_MODEL_NAME_MAX], bias_name[DFG_MODEL_NAME_MAX];
    snprintf(weight_name, sizeof weight_name, "%s.weight", name);
    snprintf(bias_name, sizeof bias_name, "%s.bias", name);
    float bound = 1.0f / sqrtf((float)in_features);
    dfg_value weight, bias, product;
    s = dfg_model_weight(m, weight_name, 2, weight_shape, 0.0f, bound,
                         &weight);
    if (s == DFG_OK)
        s = dfg_model_weight(m, bias_name, 1, (int64_t[]){out_features}, 0.0f,
                             bound, &bias);
    if (s != DFG_OK)
        return s;
    if (use_gemm) {
        dfg_gemm_params params = {.alpha = 1.0f, .beta = 1.0f, .trans_b = 1};
        return dfg_gemm(m->graph, x, weight, bias, &params, out);
    }
    s = dfg_matmul(m->graph, x, weight, &product);
    if (s == DFG_OK)
        s = dfg_add(m->graph, product, bias, out);
    return s;
}

dfg_status dfg_model_conv_bn(dfg_model_ctx *m, const char *name, dfg_value x,
                             int64_t in_channels, int64_t out_channels,
                             int32_t kernel, int32_t stride, int relu,
                             dfg_value *out)
{
    static const char *const bn_parts[4] = {"scale", "bias", "mean", "var"};
    /* scale near 1, bias and mean near 0, variance in [0.5, 1.5). */
    static const float centers[4] = {1.0f, 0.0f, 0.0f, 1.0f};
    static const float spreads[4] = {0.1f, 0.1f, 0.1f, 0.5f};
    char weight_name[DFG_MODEL_NAME_MAX];
    snprintf(weight_name, sizeof weight_name, "%s.conv.weight", name);
    float bound = 1.0f / sqrtf((float)(in_channels * kernel * kernel));
    dfg_value weight, bn[4], conv, normed;
    dfg_status s = dfg_model_weight(
        m, weight_name, 4,
        (int64_t[]){out_channels, in_channels, kernel, kernel}, 0.0f, bound,
        &weight);
    for (int i = 0; i < 4 && s == DFG_OK; i++) {
        snprintf(weight_name, sizeof weight_name, "%s.bn.%s", name,
                 bn_parts[i]);
        s = dfg_model_weight(m, weight_name, 1, (int64_t[]){out_channels},
                             centers[i], spreads[i], &bn[i]);
    }
    if (s != DFG_OK)
        return s;
    int64_t pad = kernel / 2;
    dfg_conv2d_params params = {.strides = {stride, stride},
                                .pads = {pad, pad, pad, pad}};
    s = dfg_conv2d(m->graph, x, weight, DFG_NO_VALUE, &params, &conv);
    if (s == DFG_OK)
        s = dfg_batch_norm(m->graph, conv, bn[0], bn[1], bn[2], bn[3], 1e-5f,
                           relu ? &normed : out);
    if (s == DFG_OK && relu)
        s = dfg_relu(m->graph, normed, out);
    return s;
}
