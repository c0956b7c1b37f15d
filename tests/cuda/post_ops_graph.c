/* The graph of post_ops_graph.h. */
#include "post_ops_graph.h"

#include <stdlib.h>

#include "dfg/dfg.h"

static uint32_t seed;

static dfg_value weight(dfg_graph *g, const char *name, int32_t rank,
                        const int64_t *shape, float scale)
{
    int64_t n = 1;
    for (int32_t d = 0; d < rank; d++)
        n *= shape[d];
    float *data = malloc((size_t)n * sizeof *data);
    for (int64_t i = 0; data && i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        data[i] = ((float)(seed >> 8) / (float)(1u << 24) - 0.5f) * scale;
    }
    dfg_value v = DFG_NO_VALUE;
    if (!data || dfg_graph_weight(g, name, DFG_F32, rank, shape, data, &v) !=
                     DFG_OK)
        v = DFG_NO_VALUE;
    free(data);
    return v;
}

dfg_graph *post_ops_graph(void)
{
    seed = 7;
    dfg_graph *g = NULL;
    if (dfg_graph_create(NULL, &g) != DFG_OK)
        return NULL;
    const int64_t xs[4] = {2, 8, 10, 10}, w1s[4] = {16, 8, 3, 3},
                  w2s[4] = {16, 1, 3, 3}, w3s[4] = {16, 16, 1, 1},
                  bs[1] = {16}, wms[2] = {1600, 32}, bms[1] = {32},
                  wm2s[2] = {32, 32};
    dfg_conv2d_params same = {.pads = {1, 1, 1, 1}};
    dfg_conv2d_params depthwise = {.pads = {1, 1, 1, 1}, .group = 16};
    dfg_value x, c, s, h1, h2, h3, f, m, y;
    int ok =
        dfg_graph_input(g, "x", DFG_F32, 4, xs, &x) == DFG_OK &&
        /* conv + bias + SiLU (x * sigmoid(x), fused into one op) */
        dfg_conv2d(g, x, weight(g, "w1", 4, w1s, 0.5f),
                   weight(g, "b1", 1, bs, 0.5f), &same, &c) == DFG_OK &&
        dfg_sigmoid(g, c, &s) == DFG_OK && dfg_mul(g, c, s, &h1) == DFG_OK &&
        /* depthwise conv + bias + clip */
        dfg_conv2d(g, h1, weight(g, "w2", 4, w2s, 0.8f),
                   weight(g, "b2", 1, bs, 0.5f), &depthwise, &c) == DFG_OK &&
        dfg_clip(g, c, 0.0f, 0.6f, &h2) == DFG_OK &&
        /* conv + bias + residual + GELU */
        dfg_conv2d(g, h2, weight(g, "w3", 4, w3s, 0.5f),
                   weight(g, "b3", 1, bs, 0.5f), NULL, &c) == DFG_OK &&
        dfg_add(g, c, h2, &c) == DFG_OK &&
        dfg_gelu(g, c, DFG_GELU_ERF, &h3) == DFG_OK &&
        dfg_flatten(g, h3, 1, &f) == DFG_OK &&
        /* matmul + bias + sigmoid */
        dfg_matmul(g, f, weight(g, "wm", 2, wms, 0.1f), &m) == DFG_OK &&
        dfg_add(g, m, weight(g, "bm", 1, bms, 0.5f), &m) == DFG_OK &&
        dfg_sigmoid(g, m, &m) == DFG_OK &&
        /* matmul + residual + GELU (tanh) */
        dfg_matmul(g, m, weight(g, "wm2", 2, wm2s, 0.5f), &y) == DFG_OK &&
        dfg_add(g, y, m, &y) == DFG_OK &&
        dfg_gelu(g, y, DFG_GELU_TANH, &y) == DFG_OK &&
        dfg_graph_output(g, y, "y") == DFG_OK;
    if (!ok) {
        dfg_graph_destroy(g);
        return NULL;
    }
    return g;
}
