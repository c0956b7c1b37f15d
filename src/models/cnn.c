/* "cnn": a small residual network for 8x8 single-channel digit images:
 * a conv-bn-relu stem (16 channels), a residual block, a strided residual
 * block down to 4x4 with 32 channels (1x1 projection on the skip path),
 * another residual block, global average pooling and a gemm classifier
 * with a softmax over 10 classes. */
#include <stdio.h>
#include "models/model_builder.h"

#define CNN_BATCH 32
#define CNN_CLASSES 10

dfg_status dfg_model_residual_block(dfg_model_ctx *m, const char *name,
                                    dfg_value x, int64_t in_channels,
                                    int64_t out_channels, int32_t stride,
                                    dfg_value *out)
{
    char part[64];
    dfg_value h, skip = x, sum;
    snprintf(part, sizeof part, "%s.a", name);
    dfg_status s = dfg_model_conv_bn(m, part, x, in_channels, out_channels, 3,
                                     stride, 1, &h);
    snprintf(part, sizeof part, "%s.b", name);
    if (s == DFG_OK)
        s = dfg_model_conv_bn(m, part, h, out_channels, out_channels, 3, 1, 0,
                              &h);
    snprintf(part, sizeof part, "%s.skip", name);
    if (s == DFG_OK && (stride != 1 || in_channels != out_channels))
        s = dfg_model_conv_bn(m, part, x, in_channels, out_channels, 1, stride,
                              0, &skip);
    if (s == DFG_OK)
        s = dfg_add(m->graph, h, skip, &sum);
    if (s == DFG_OK)
        s = dfg_relu(m->graph, sum, out);
    return s;
}

dfg_status dfg_model_build_cnn(dfg_model_ctx *m)
{
    dfg_value x, h, pooled, flat, logits, probs;
    dfg_status s = dfg_graph_input(m->graph, "x", DFG_F32, 4,
                                   (int64_t[]){CNN_BATCH, 1, 8, 8}, &x);
    if (s == DFG_OK)
        s = dfg_model_conv_bn(m, "stem", x, 1, 16, 3, 1, 1, &h);
    if (s == DFG_OK)
        s = dfg_model_residual_block(m, "block1", h, 16, 16, 1, &h);
    if (s == DFG_OK)
        s = dfg_model_residual_block(m, "block2", h, 16, 32, 2, &h);
    if (s == DFG_OK)
        s = dfg_model_residual_block(m, "block3", h, 32, 32, 1, &h);
    if (s == DFG_OK)
        s = dfg_global_average_pool(m->graph, h, &pooled);
    if (s == DFG_OK)
        s = dfg_flatten(m->graph, pooled, 1, &flat);
    if (s == DFG_OK)
        s = dfg_model_linear(m, "fc", flat, 32, CNN_CLASSES, &logits);
    if (s == DFG_OK)
        s = dfg_softmax(m->graph, logits, 1, &probs);
    if (s == DFG_OK)
        s = dfg_graph_output(m->graph, probs, "probs");
    return s;
}
