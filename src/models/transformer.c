/* "transformer": one pre-LN transformer block, as in GPT-2:
 *   h = x + proj(attention(layer_norm(x)))
 *   y = h + fc2(gelu(fc1(layer_norm(h))))
 * with batch 1, 64 tokens, d_model 128, 4 heads of 32 and an MLP of 512. */
#include <math.h>
#include "models/model_builder.h"

#define TF_BATCH 1
#define TF_SEQ 64
#define TF_MODEL 128
#define TF_HEADS 4
#define TF_HEAD_DIM (TF_MODEL / TF_HEADS)
#define TF_HIDDEN 512

static dfg_status layer_norm(dfg_model_ctx *m, const char *scale_name,
                             const char *bias_name, dfg_value x,
                             dfg_value *out)
{
    dfg_value scale, bias;
    dfg_status s = dfg_model_weight(m, scale_name, 1, (int64_t[]){TF_MODEL},
                                    1.0f, 0.1f, &scale);
    if (s == DFG_OK)
        s = dfg_model_weight(m, bias_name, 1, (int64_t[]){TF_MODEL}, 0.0f,
                             0.1f, &bias);
    if (s == DFG_OK)
        s = dfg_layer_norm(m->graph, x, scale, bias, -1, 1e-5f, out);
    return s;
}

/* [B, T, D] -> [B, H, T, Dh] with the given permutation of [B, T, H, Dh]
 * (keys use [B, H, Dh, T] so that q @ k needs no further transpose). */
static dfg_status split_heads(dfg_model_ctx *m, dfg_value x,
                              const int64_t perm[4], dfg_value *out)
{
    dfg_value heads;
    dfg_status s = dfg_reshape(
        m->graph, x, 4, (int64_t[]){TF_BATCH, TF_SEQ, TF_HEADS, TF_HEAD_DIM},
        &heads);
    if (s == DFG_OK)
        s = dfg_transpose(m->graph, heads, 4, perm, out);
    return s;
}

static dfg_status attention(dfg_model_ctx *m, dfg_value x, dfg_value *out)
{
    static const int64_t to_heads[4] = {0, 2, 1, 3};
    static const int64_t to_heads_t[4] = {0, 2, 3, 1};
    dfg_value q, k, v, qh, kh, vh, scores, scale, scaled, probs, context,
        merged, flat;
    dfg_status s = dfg_model_linear(m, "attn.q", x, TF_MODEL, TF_MODEL, &q);
    if (s == DFG_OK)
        s = dfg_model_linear(m, "attn.k", x, TF_MODEL, TF_MODEL, &k);
    if (s == DFG_OK)
        s = dfg_model_linear(m, "attn.v", x, TF_MODEL, TF_MODEL, &v);
    if (s == DFG_OK)
        s = split_heads(m, q, to_heads, &qh);
    if (s == DFG_OK)
        s = split_heads(m, k, to_heads_t, &kh);
    if (s == DFG_OK)
        s = split_heads(m, v, to_heads, &vh);
    if (s == DFG_OK)
        s = dfg_matmul(m->graph, qh, kh, &scores);
    float inv_sqrt_d = 1.0f / sqrtf((float)TF_HEAD_DIM);
    if (s == DFG_OK)
        s = dfg_graph_constant(m->graph, "attn.scale", DFG_F32, 1,
                               (int64_t[]){1}, &inv_sqrt_d, &scale);
    if (s == DFG_OK)
        s = dfg_mul(m->graph, scores, scale, &scaled);
    if (s == DFG_OK)
        s = dfg_softmax(m->graph, scaled, -1, &probs);
    if (s == DFG_OK)
        s = dfg_matmul(m->graph, probs, vh, &context);
    if (s == DFG_OK)
        s = dfg_transpose(m->graph, context, 4, to_heads, &merged);
    if (s == DFG_OK)
        s = dfg_reshape(m->graph, merged, 3,
                        (int64_t[]){TF_BATCH, TF_SEQ, TF_MODEL}, &flat);
    if (s == DFG_OK)
        s = dfg_model_linear(m, "attn.proj", flat, TF_MODEL, TF_MODEL, out);
    return s;
}

static dfg_status feed_forward(dfg_model_ctx *m, dfg_value x, dfg_value *out)
{
    dfg_value hidden, activated;
    dfg_status s = dfg_model_linear(m, "mlp.fc1", x, TF_MODEL, TF_HIDDEN,
                                    &hidden);
    if (s == DFG_OK)
        s = dfg_gelu(m->graph, hidden, DFG_GELU_TANH, &activated);
    if (s == DFG_OK)
        s = dfg_model_linear(m, "mlp.fc2", activated, TF_HIDDEN, TF_MODEL,
                             out);
    return s;
}

dfg_status dfg_model_build_transformer(dfg_model_ctx *m)
{
    dfg_value x, normed, attended, h, normed2, mlp, y;
    dfg_status s = dfg_graph_input(m->graph, "x", DFG_F32, 3,
                                   (int64_t[]){TF_BATCH, TF_SEQ, TF_MODEL}, &x);
    if (s == DFG_OK)
        s = layer_norm(m, "ln1.scale", "ln1.bias", x, &normed);
    if (s == DFG_OK)
        s = attention(m, normed, &attended);
    if (s == DFG_OK)
        s = dfg_add(m->graph, x, attended, &h);
    if (s == DFG_OK)
        s = layer_norm(m, "ln2.scale", "ln2.bias", h, &normed2);
    if (s == DFG_OK)
        s = feed_forward(m, normed2, &mlp);
    if (s == DFG_OK)
        s = dfg_add(m->graph, h, mlp, &y);
    if (s == DFG_OK)
        s = dfg_graph_output(m->graph, y, "y");
    return s;
}
