/* The graph of post_ops_graph.h. */
#include "tests/cuda/post_ops_graph.h"

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

static int activation(dfg_graph *g, product_activation act, dfg_value *y)
{
    switch (act) {
    case PRODUCT_RELU: return dfg_relu(g, *y, y) == DFG_OK;
    case PRODUCT_GELU_TANH: return dfg_gelu(g, *y, DFG_GELU_TANH, y) == DFG_OK;
    case PRODUCT_GELU_ERF: return dfg_gelu(g, *y, DFG_GELU_ERF, y) == DFG_OK;
    case PRODUCT_SIGMOID: return dfg_sigmoid(g, *y, y) == DFG_OK;
    case PRODUCT_RELU_SIGMOID:
        return dfg_relu(g, *y, y) == DFG_OK && dfg_sigmoid(g, *y, y) == DFG_OK;
    default: return 1;
    }
}

void product_graph_sizes(const product_graph_spec *c, int64_t *in,
                         int32_t *n_in, int64_t *out, int32_t *n_out)
{
    int64_t batch = c->batched ? PRODUCT_BATCH : 1;
    int64_t b = c->gemm ? PRODUCT_N * PRODUCT_K
                        : batch * PRODUCT_K * PRODUCT_N;
    int shared = c->transpose == PRODUCT_TRANSPOSE_SHARED;
    *n_in = *n_out = 0;
    in[(*n_in)++] = batch * PRODUCT_M * PRODUCT_K;
    if (c->residual)
        in[(*n_in)++] = batch * PRODUCT_M * PRODUCT_N;
    if (c->transpose == PRODUCT_TRANSPOSE_B || shared)
        in[(*n_in)++] = b;
    out[(*n_out)++] = batch * PRODUCT_M * PRODUCT_N;
    if (shared)
        out[(*n_out)++] = b;
}

/* An input `name` of shape dims, or with `swapped` an input stored with
 * its last two dims swapped and transposed back to dims. */
static int stored(dfg_graph *g, const char *name, int32_t rank,
                  const int64_t *dims, int swapped, dfg_value *out)
{
    int64_t shape[3], perm[3];
    for (int32_t d = 0; d < rank; d++) {
        shape[d] = dims[d];
        perm[d] = d;
    }
    if (swapped) {
        shape[rank - 2] = dims[rank - 1];
        shape[rank - 1] = dims[rank - 2];
        perm[rank - 2] = rank - 1;
        perm[rank - 1] = rank - 2;
    }
    dfg_value v;
    if (dfg_graph_input(g, name, DFG_F32, rank, shape, &v) != DFG_OK)
        return 0;
    if (!swapped) {
        *out = v;
        return 1;
    }
    return dfg_transpose(g, v, rank, perm, out) == DFG_OK;
}

dfg_graph *product_graph(const product_graph_spec *c)
{
    seed = 11;
    dfg_graph *g = NULL;
    if (dfg_graph_create(NULL, &g) != DFG_OK)
        return NULL;
    const int64_t xs[3] = {PRODUCT_BATCH, PRODUCT_M, PRODUCT_K},
                  ws[3] = {PRODUCT_BATCH, PRODUCT_K, PRODUCT_N},
                  wt[2] = {PRODUCT_N, PRODUCT_K}, bs[1] = {PRODUCT_N},
                  cs[2] = {PRODUCT_M, PRODUCT_N},
                  rs[3] = {PRODUCT_BATCH, PRODUCT_M, PRODUCT_N};
    int32_t rank = c->batched ? 3 : 2, skip = c->batched ? 0 : 1;
    int ta = c->transpose == PRODUCT_TRANSPOSE_A;
    int tb = c->transpose == PRODUCT_TRANSPOSE_B ||
             c->transpose == PRODUCT_TRANSPOSE_SHARED;
    const int64_t *bshape = c->gemm ? wt : ws + skip;
    int32_t brank = c->gemm ? 2 : rank;
    dfg_value x, r = DFG_NO_VALUE, b, y;
    int ok = stored(g, "x", rank, xs + skip, ta, &x) &&
             (!c->residual ||
              dfg_graph_input(g, "r", DFG_F32, rank, rs + skip, &r) == DFG_OK);
    if (ok && tb)
        ok = stored(g, "bt", brank, bshape, 1, &b);
    else if (ok)
        b = weight(g, "w", brank, bshape, 1.0f);
    if (ok && c->gemm) {
        dfg_gemm_params p = {.alpha = 0.75f, .beta = 1.0f, .trans_b = 1};
        dfg_value cv = c->gemm_c == 1   ? weight(g, "c", 1, bs, 1.0f)
                       : c->gemm_c == 2 ? weight(g, "c", 2, cs, 1.0f)
                                        : DFG_NO_VALUE;
        ok = dfg_gemm(g, x, b, cv, &p, &y) == DFG_OK;
    } else if (ok) {
        ok = dfg_matmul(g, x, b, &y) == DFG_OK;
    }
    ok = ok && (!c->bias ||
                dfg_add(g, y, weight(g, "b", 1, bs, 1.0f), &y) == DFG_OK);
    ok = ok && (!c->residual || dfg_add(g, y, r, &y) == DFG_OK);
    ok = ok && activation(g, c->act, &y) &&
         dfg_graph_output(g, y, "y") == DFG_OK &&
         (c->transpose != PRODUCT_TRANSPOSE_SHARED ||
          dfg_graph_output(g, b, "bt_t") == DFG_OK);
    if (!ok) {
        dfg_graph_destroy(g);
        return NULL;
    }
    return g;
}

dfg_graph *conv_pads_graph(void)
{
    seed = 3;
    dfg_graph *g = NULL;
    if (dfg_graph_create(NULL, &g) != DFG_OK)
        return NULL;
    const int64_t xs[4] = {1, 3, 6, 6}, ws[4] = {4, 3, 3, 3};
    dfg_conv2d_params odd = {.pads = {0, 0, 1, 1}};
    dfg_value x, y, z;
    int ok = dfg_graph_input(g, "x", DFG_F32, 4, xs, &x) == DFG_OK &&
             dfg_conv2d(g, x, weight(g, "w", 4, ws, 1.0f), DFG_NO_VALUE, &odd,
                        &y) == DFG_OK &&
             dfg_conv2d(g, x, weight(g, "v", 4, ws, 1.0f), DFG_NO_VALUE, NULL,
                        &z) == DFG_OK &&
             dfg_graph_output(g, y, "y") == DFG_OK &&
             dfg_graph_output(g, z, "z") == DFG_OK;
    if (!ok) {
        dfg_graph_destroy(g);
        return NULL;
    }
    return g;
}

dfg_graph *matmul_training_graph(void)
{
    seed = 17;
    dfg_graph *g = NULL;
    if (dfg_graph_create(NULL, &g) != DFG_OK)
        return NULL;
    const int64_t xs[3] = {4, 6, 5}, ws[2] = {5, 3}, vs[3] = {4, 3, 2};
    dfg_value x, h, y, sq, loss;
    int ok = dfg_graph_input(g, "x", DFG_F32, 3, xs, &x) == DFG_OK &&
             dfg_matmul(g, x, weight(g, "w", 2, ws, 1.0f), &h) == DFG_OK &&
             dfg_relu(g, h, &h) == DFG_OK &&
             dfg_matmul(g, h, weight(g, "v", 3, vs, 1.0f), &y) == DFG_OK &&
             dfg_mul(g, y, y, &sq) == DFG_OK &&
             dfg_reduce_mean(g, sq, 0, NULL, 0, &loss) == DFG_OK &&
             dfg_graph_output(g, loss, "loss") == DFG_OK;
    if (!ok) {
        dfg_graph_destroy(g);
        return NULL;
    }
    return g;
}
