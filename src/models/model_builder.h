/* What the bundled example models share: the graph being built, a seeded
 * random source for the weights, and layer helpers (linear, conv + batch
 * norm) built on the typed builder API. Internal to src/models/. */
#ifndef DFG_MODEL_BUILDER_H
#define DFG_MODEL_BUILDER_H

#include <stdint.h>
#include "dfg/builder.h"
#include "dfg/graph.h"

typedef struct dfg_model_ctx {
    dfg_graph *graph;
    const dfg_allocator *allocator; /* for temporary weight buffers */
    uint64_t rng_state;             /* xorshift64*; never 0 */
} dfg_model_ctx;

/* Adds an f32 weight named `name`, each element center + u with u drawn
 * uniformly from [-spread, spread). */
dfg_status dfg_model_weight(dfg_model_ctx *m, const char *name, int32_t rank,
                            const int64_t *shape, float center, float spread,
                            dfg_value *out);

/* A fully connected layer: weight name.weight and bias name.bias [out],
 * uniform in +-1/sqrt(in) as PyTorch initialises them. x [batch, in] runs
 * as gemm with the weight [out, in] (PyTorch's layout); x [..., in] of
 * another rank runs as matmul + add with the weight [in, out]. */
dfg_status dfg_model_linear(dfg_model_ctx *m, const char *name, dfg_value x,
                            int64_t in_features, int64_t out_features,
                            dfg_value *out);

/* conv2d (kernel k, padding k/2, no bias) then inference batch norm, then
 * relu if `relu`. Weights are named name.conv.weight, name.bn.scale, ... */
dfg_status dfg_model_conv_bn(dfg_model_ctx *m, const char *name, dfg_value x,
                             int64_t in_channels, int64_t out_channels,
                             int32_t kernel, int32_t stride, int relu,
                             dfg_value *out);

/* ResNet's basic block: relu(conv_bn(relu(conv_bn(x))) + skip(x)), both
 * convs 3x3; skip is x itself, or a 1x1 strided conv_bn when the stride
 * or the channel count changes. */
dfg_status dfg_model_residual_block(dfg_model_ctx *m, const char *name,
                                    dfg_value x, int64_t in_channels,
                                    int64_t out_channels, int32_t stride,
                                    dfg_value *out);

/* The builders behind the registry; each adds inputs, weights, ops and
 * outputs to m->graph. */
dfg_status dfg_model_build_mlp(dfg_model_ctx *m);
dfg_status dfg_model_build_cnn(dfg_model_ctx *m);
dfg_status dfg_model_build_transformer(dfg_model_ctx *m);

#endif
