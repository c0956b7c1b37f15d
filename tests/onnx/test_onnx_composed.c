/* ONNX ops the importer composes from other dfg ops (ConvTranspose, Pad
 * edge/reflect, 3-D Conv and pools, NegativeLogLikelihoodLoss,
 * SoftmaxCrossEntropyLoss, training-mode Dropout; a Pad of zeros as its
 * input): one-node models built
 * here, run on the CPU backend on random inputs and compared with a
 * direct double-precision reference; their plans verified. The 3-D
 * windows and reflect padding are also differentiated (autodiff over the
 * composed ops) and checked against central finite differences. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "passes/training/autodiff.h"
#include "dfg/dfg.h"
#include "ir/graph.h"
#include "tests/support/onnx_builder.h"
#include "tests/support/onnx_run.h"

#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define I64 ONNX__TENSOR_PROTO__DATA_TYPE__INT64
#define BOOL ONNX__TENSOR_PROTO__DATA_TYPE__BOOL

static void expect_dims(int32_t rank, const int64_t *dims, int32_t want_rank,
                        const int64_t *want)
{
    assert_int_equal(rank, want_rank);
    for (int32_t i = 0; i < rank; i++)
        assert_int_equal(dims[i], want[i]);
}

/* Node y = op(x, w, b) over `spatial` axes with group, strides,
 * dilations and pads (2 * spatial of them). */
static Onnx__NodeProto *conv_node(onnx_builder *b, const char *op,
                                  int64_t group, int spatial,
                                  const int64_t *strides,
                                  const int64_t *dilations,
                                  const int64_t *pads)
{
    Onnx__NodeProto *node = onnx_builder_node(
        b, op, "y", (const char *[]){"x", "w", "b", NULL},
        (const char *[]){"y", NULL});
    onnx_builder_attr_int(node, "group", group);
    onnx_builder_attr_ints(node, "strides", strides, spatial);
    onnx_builder_attr_ints(node, "dilations", dilations, spatial);
    onnx_builder_attr_ints(node, "pads", pads, 2 * spatial);
    return node;
}

/* ConvTranspose, 2-D, of x dims4 into groups * mg channels, kernel k,
 * strides s, dilations d, pads, output_padding op and a bias: each input
 * pixel scatters its weighted kernel. The weights a graph input, or an
 * initializer (w_stored: oneDNN reads them reordered once). */
static void check_conv_transpose(const int64_t *dims4, int64_t groups,
                                 int64_t mg, const int64_t *k,
                                 const int64_t *s, const int64_t *d,
                                 const int64_t *pads, const int64_t *op,
                                 int w_stored)
{
    const int64_t N = dims4[0], C = dims4[1], H = dims4[2], W = dims4[3];
    const int64_t G = groups, MG = mg, KH = k[0], KW = k[1];
    const int64_t w_dims[4] = {C, MG, KH, KW}, b_dims[1] = {G * MG};
    const int64_t oh = s[0] * (H - 1) + op[0] + (KH - 1) * d[0] + 1 - pads[0] -
                       pads[2];
    const int64_t ow = s[1] * (W - 1) + op[1] + (KW - 1) * d[1] + 1 - pads[1] -
                       pads[3];
    float *x = onnx_run_random_floats(N * C * H * W), *w = onnx_run_random_floats(C * MG * KH * KW);
    float *bias = onnx_run_random_floats(G * MG);
    onnx_builder b;
    onnx_builder_init(&b, 13);
    onnx_builder_input(&b, "x", F32, 4, dims4, NULL);
    if (w_stored)
        onnx_builder_initializer(&b, "w", F32, 4, w_dims, w,
                                 sizeof(float) * (size_t)(C * MG * KH * KW));
    else
        onnx_builder_input(&b, "w", F32, 4, w_dims, NULL);
    onnx_builder_initializer(&b, "b", F32, 1, b_dims, bias, sizeof(float) * (size_t)(G * MG));
    Onnx__NodeProto *node = conv_node(&b, "ConvTranspose", G, 2, s, d, pads);
    onnx_builder_attr_ints(node, "output_padding", op, 2);
    onnx_builder_output(&b, "y");
    int32_t rank;
    int64_t dims[8];
    float *y = onnx_run_model(&b, (const void *[]){x, w}, &rank, dims);
    expect_dims(rank, dims, 4, (const int64_t[]){N, G * MG, oh, ow});
    int64_t n_out = N * G * MG * oh * ow;
    double *ref = calloc((size_t)n_out, sizeof *ref);
    for (int64_t i = 0; i < n_out; i++)
        ref[i] = bias[(i / (oh * ow)) % (G * MG)];
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t ih = 0; ih < H; ih++)
                for (int64_t iw = 0; iw < W; iw++)
                    for (int64_t m = 0; m < MG; m++)
                        for (int64_t kh = 0; kh < KH; kh++)
                            for (int64_t kw = 0; kw < KW; kw++) {
                                int64_t h = ih * s[0] - pads[0] + kh * d[0];
                                int64_t v = iw * s[1] - pads[1] + kw * d[1];
                                int64_t mo = (c / (C / G)) * MG + m;
                                if (h < 0 || h >= oh || v < 0 || v >= ow)
                                    continue;
                                ref[((n * G * MG + mo) * oh + h) * ow + v] +=
                                    (double)x[((n * C + c) * H + ih) * W + iw] *
                                    w[((c * MG + m) * KH + kh) * KW + kw];
                            }
    onnx_run_expect_close(y, ref, n_out);
    free(ref), free(y), free(x), free(w), free(bias);
    onnx_builder_free(&b);
}

static void test_conv_transpose_2d(void **state)
{
    (void)state;
    check_conv_transpose((const int64_t[]){2, 4, 3, 4}, 2, 3,
                         (const int64_t[]){3, 2}, (const int64_t[]){2, 3},
                         (const int64_t[]){2, 1}, (const int64_t[]){1, 0, 0, 1},
                         (const int64_t[]){1, 2}, 0);
    /* a GAN generator's layer: 64 -> 32 channels, 4x4, stride 2 */
    check_conv_transpose((const int64_t[]){1, 64, 5, 6}, 1, 32,
                         (const int64_t[]){4, 4}, (const int64_t[]){2, 2},
                         (const int64_t[]){1, 1}, (const int64_t[]){1, 1, 1, 1},
                         (const int64_t[]){0, 0}, 1);
}

/* Pad edge and reflect on [3,4] with unequal pads: exact copies. */
static void test_pad_edge_reflect(void **state)
{
    (void)state;
    const int64_t x_dims[2] = {3, 4}, pads[4] = {1, 2, 2, 3};
    const int64_t pads_dims[1] = {4};
    float *x = onnx_run_random_floats(12);
    const char *modes[2] = {"edge", "reflect"};
    for (int m = 0; m < 2; m++) {
        onnx_builder b;
        onnx_builder_init(&b, 13);
        onnx_builder_input(&b, "x", F32, 2, x_dims, NULL);
        onnx_builder_initializer(&b, "pads", I64, 1, pads_dims, pads,
                                 sizeof pads);
        Onnx__NodeProto *node = onnx_builder_node(
            &b, "Pad", "y", (const char *[]){"x", "pads", NULL},
            (const char *[]){"y", NULL});
        onnx_builder_attr_string(node, "mode", modes[m]);
        onnx_builder_output(&b, "y");
        int32_t rank;
        int64_t dims[8];
        float *y = onnx_run_model(&b, (const void *[]){x}, &rank, dims);
        expect_dims(rank, dims, 2, (const int64_t[]){6, 9});
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 9; j++) {
                int r = i - 1, c = j - 2;
                if (m == 0) {
                    r = r < 0 ? 0 : r > 2 ? 2 : r;
                    c = c < 0 ? 0 : c > 3 ? 3 : c;
                } else {
                    r = r < 0 ? -r : r > 2 ? 4 - r : r;
                    c = c < 0 ? -c : c > 3 ? 6 - c : c;
                }
                assert_true(y[i * 9 + j] == x[r * 4 + c]);
            }
        free(y);
        onnx_builder_free(&b);
    }
    free(x);
}

/* A constant Pad of zeros of a Relu's output before an AveragePool, as
 * PyTorch exports one after a conv: imported as its input (no pad node),
 * the pool's output unchanged; a Pad of nonzero pads stays a node. */
static void test_pad_of_zeros(void **state)
{
    (void)state;
    const int64_t x_dims[4] = {1, 2, 4, 4}, k[2] = {2, 2}, n_pads[1] = {8};
    float *x = onnx_run_random_floats(32);
    for (int some = 0; some < 2; some++) {
        const int64_t pads[8] = {0, 0, 0, some, 0, 0, 0, 0};
        onnx_builder b;
        onnx_builder_init(&b, 13);
        onnx_builder_input(&b, "x", F32, 4, x_dims, NULL);
        onnx_builder_initializer(&b, "pads", I64, 1, n_pads, pads,
                                 sizeof pads);
        onnx_builder_node(&b, "Relu", "r", (const char *[]){"x", NULL},
                          (const char *[]){"u", NULL});
        onnx_builder_node(&b, "Pad", "p", (const char *[]){"u", "pads", NULL},
                          (const char *[]){"t", NULL});
        Onnx__NodeProto *pool = onnx_builder_node(
            &b, "AveragePool", "y", (const char *[]){"t", NULL},
            (const char *[]){"y", NULL});
        onnx_builder_attr_ints(pool, "kernel_shape", k, 2);
        onnx_builder_attr_ints(pool, "strides", k, 2);
        onnx_builder_output(&b, "y");
        dfg_graph *graph = NULL;
        assert_int_equal(onnx_builder_import(&b, &graph), DFG_OK);
        assert_int_equal(dfg_graph_num_nodes(graph), some ? 3 : 2);
        dfg_graph_destroy(graph);
        int32_t rank;
        int64_t dims[8];
        float *y = onnx_run_model(&b, (const void *[]){x}, &rank, dims);
        int64_t w = some ? 5 : 4, ow = w / 2;
        expect_dims(rank, dims, 4, (const int64_t[]){1, 2, 2, ow});
        double ref[8];
        for (int c = 0; c < 2; c++)
            for (int i = 0; i < 2; i++)
                for (int j = 0; j < ow; j++) {
                    double sum = 0.0;
                    for (int h = 2 * i; h < 2 * i + 2; h++)
                        for (int v = 2 * j; v < 2 * j + 2; v++)
                            sum += v >= some
                                       ? fmax(x[(c * 4 + h) * 4 + v - some], 0.0)
                                       : 0.0;
                    ref[(c * 2 + i) * ow + j] = sum / 4;
                }
        onnx_run_expect_close(y, ref, 2 * 2 * ow);
        free(y);
        onnx_builder_free(&b);
    }
    free(x);
    /* A Pad of zeros reading a value no one defined: a clear error
     * (the fuzzer's case), not a read of a missing value's entry. */
    const int64_t pads[8] = {0};
    onnx_builder b;
    onnx_builder_init(&b, 13);
    onnx_builder_input(&b, "x", F32, 4, x_dims, NULL);
    onnx_builder_initializer(&b, "pads", I64, 1, n_pads, pads, sizeof pads);
    onnx_builder_node(&b, "Pad", "p", (const char *[]){"nowhere", "pads", NULL},
                      (const char *[]){"y", NULL});
    onnx_builder_output(&b, "y");
    dfg_graph *graph = NULL;
    assert_int_not_equal(onnx_builder_import(&b, &graph), DFG_OK);
    assert_null(graph);
    assert_non_null(strstr(dfg_last_error(), "nowhere"));
    onnx_builder_free(&b);
}

/* 1 if graph has a node of op. */
static int has_op(const dfg_graph *graph, dfg_op op)
{
    for (int32_t i = 0; i < graph->n_nodes; i++)
        if (!graph->nodes[i].dead && graph->nodes[i].op == op)
            return 1;
    return 0;
}

/* Conv over a 3-D window with groups, strides s, dilations dl, pads and a
 * bias, on a batch of n; the input padded in depth (a pad node) only
 * where some output depth reads nothing but padding (`padded`). */
static void check_conv_3d(int64_t n, const int64_t *s, const int64_t *dl,
                          const int64_t *pads, int padded)
{
    enum { C = 4, D = 5, H = 6, W = 5, M = 6, G = 2, KD = 3, KH = 2, KW = 3 };
    const int64_t x_dims[5] = {n, C, D, H, W}, w_dims[5] = {M, C / G, KD, KH, KW};
    const int64_t b_dims[1] = {M};
    int64_t out[3];
    const int64_t in[3] = {D, H, W}, k[3] = {KD, KH, KW};
    for (int i = 0; i < 3; i++)
        out[i] = (in[i] + pads[i] + pads[i + 3] - (k[i] - 1) * dl[i] - 1) / s[i] + 1;
    float *x = onnx_run_random_floats(onnx_run_numel(5, x_dims)), *w = onnx_run_random_floats(onnx_run_numel(5, w_dims));
    float *bias = onnx_run_random_floats(M);
    onnx_builder b;
    onnx_builder_init(&b, 13);
    onnx_builder_input(&b, "x", F32, 5, x_dims, NULL);
    onnx_builder_initializer(&b, "w", F32, 5, w_dims, w,
                             sizeof(float) * (size_t)onnx_run_numel(5, w_dims));
    onnx_builder_initializer(&b, "b", F32, 1, b_dims, bias, sizeof(float) * M);
    conv_node(&b, "Conv", G, 3, s, dl, pads);
    onnx_builder_output(&b, "y");
    dfg_graph *graph = NULL;
    assert_int_equal(onnx_builder_import(&b, &graph), DFG_OK);
    assert_int_equal(has_op(graph, DFG_OP_PAD), padded);
    dfg_graph_destroy(graph);
    int32_t rank;
    int64_t dims[8];
    float *y = onnx_run_model(&b, (const void *[]){x}, &rank, dims);
    expect_dims(rank, dims, 5, (const int64_t[]){n, M, out[0], out[1], out[2]});
    int64_t n_out = n * M * out[0] * out[1] * out[2];
    double *ref = calloc((size_t)n_out, sizeof *ref);
    int64_t i = 0;
    for (int64_t img = 0; img < n; img++)
        for (int m = 0; m < M; m++)
            for (int64_t od = 0; od < out[0]; od++)
                for (int64_t oh = 0; oh < out[1]; oh++)
                    for (int64_t ow = 0; ow < out[2]; ow++, i++) {
                        double acc = bias[m];
                        for (int c = 0; c < C / G; c++)
                            for (int kd = 0; kd < KD; kd++)
                                for (int kh = 0; kh < KH; kh++)
                                    for (int kw = 0; kw < KW; kw++) {
                                        int64_t id = od * s[0] - pads[0] + kd * dl[0];
                                        int64_t ih = oh * s[1] - pads[1] + kh * dl[1];
                                        int64_t iw = ow * s[2] - pads[2] + kw * dl[2];
                                        if (id < 0 || id >= D || ih < 0 ||
                                            ih >= H || iw < 0 || iw >= W)
                                            continue;
                                        int64_t ci = (m / (M / G)) * (C / G) + c;
                                        acc += (double)x[(((img * C + ci) * D + id) * H + ih) * W + iw] *
                                               w[(((m * (C / G) + c) * KD + kd) * KH + kh) * KW + kw];
                                    }
                        ref[i] = acc;
                    }
    onnx_run_expect_close(y, ref, n_out);
    free(ref), free(y), free(x), free(w), free(bias);
    onnx_builder_free(&b);
}

/* 3-D convs: depth padded at both ends (the first and last output depths
 * sum fewer taps: no pad node), at batch 2 and 1 (the depths' parts
 * joined by a concat along the batch), with strides and dilations; and
 * depth padding as wide as the kernel (an output depth of padding
 * alone: padded). */
static void test_conv_3d(void **state)
{
    (void)state;
    const int64_t one[3] = {1, 1, 1};
    const int64_t s[3] = {2, 1, 2}, dl[3] = {1, 2, 1};
    check_conv_3d(2, s, dl, (const int64_t[]){1, 0, 1, 1, 1, 0}, 0);
    check_conv_3d(1, one, one, (const int64_t[]){1, 1, 1, 1, 1, 1}, 0);
    check_conv_3d(1, (const int64_t[]){2, 1, 1},
                  (const int64_t[]){2, 1, 1},
                  (const int64_t[]){2, 0, 0, 1, 0, 0}, 0);
    check_conv_3d(1, one, one, (const int64_t[]){3, 0, 0, 3, 0, 0}, 1);
    check_conv_3d(2, one, one, (const int64_t[]){0, 1, 0, 0, 1, 0}, 0);
}

/* MaxPool and AveragePool (both count_include_pad modes) over a 3-D
 * window with pads, and MaxPool with ceil_mode. */
static void check_pool_3d(const char *type, int include_pad, int ceil_mode)
{
    enum { N = 2, C = 2, D = 6, H = 6, W = 7 };
    const int64_t k[3] = {3, 2, 3}, s[3] = {2, 2, 2};
    const int64_t pads[6] = {1, 1, 0, 1, 0, 1};
    const int64_t x_dims[5] = {N, C, D, H, W}, in[3] = {D, H, W};
    int max = strcmp(type, "MaxPool") == 0;
    int64_t out[3];
    for (int i = 0; i < 3; i++) {
        int64_t span = in[i] + pads[i] + pads[i + 3] - k[i];
        out[i] = span / s[i] + 1;
        if (ceil_mode && span % s[i] && out[i] * s[i] < in[i] + pads[i])
            out[i]++;
    }
    float *x = onnx_run_random_floats(onnx_run_numel(5, x_dims));
    onnx_builder b;
    onnx_builder_init(&b, 13);
    onnx_builder_input(&b, "x", F32, 5, x_dims, NULL);
    Onnx__NodeProto *node = onnx_builder_node(
        &b, type, "y", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    onnx_builder_attr_ints(node, "kernel_shape", k, 3);
    onnx_builder_attr_ints(node, "strides", s, 3);
    onnx_builder_attr_ints(node, "pads", pads, 6);
    onnx_builder_attr_int(node, "ceil_mode", ceil_mode);
    if (!max)
        onnx_builder_attr_int(node, "count_include_pad", include_pad);
    onnx_builder_output(&b, "y");
    int32_t rank;
    int64_t dims[8];
    float *y = onnx_run_model(&b, (const void *[]){x}, &rank, dims);
    expect_dims(rank, dims, 5, (const int64_t[]){N, C, out[0], out[1], out[2]});
    int64_t n_out = N * C * out[0] * out[1] * out[2], i = 0;
    double *ref = calloc((size_t)n_out, sizeof *ref);
    for (int nc = 0; nc < N * C; nc++)
        for (int64_t od = 0; od < out[0]; od++)
            for (int64_t oh = 0; oh < out[1]; oh++)
                for (int64_t ow = 0; ow < out[2]; ow++, i++) {
                    double acc = max ? -INFINITY : 0;
                    int64_t counted = 0;
                    const int64_t o[3] = {od, oh, ow};
                    int64_t lo[3], hi[3];
                    for (int a = 0; a < 3; a++) {
                        lo[a] = o[a] * s[a] - pads[a];
                        hi[a] = lo[a] + k[a];
                    }
                    for (int64_t id = lo[0]; id < hi[0]; id++)
                        for (int64_t ih = lo[1]; ih < hi[1]; ih++)
                            for (int64_t iw = lo[2]; iw < hi[2]; iw++) {
                                int inside = id >= 0 && id < D && ih >= 0 &&
                                             ih < H && iw >= 0 && iw < W;
                                counted += inside || include_pad;
                                if (!inside)
                                    continue;
                                double v = x[((nc * D + id) * H + ih) * W + iw];
                                acc = max ? fmax(acc, v) : acc + v;
                            }
                    ref[i] = max ? acc : acc / (double)counted;
                }
    onnx_run_expect_close(y, ref, n_out);
    free(ref), free(y), free(x);
    onnx_builder_free(&b);
}

static void test_pools_3d(void **state)
{
    (void)state;
    check_pool_3d("MaxPool", 0, 0);
    check_pool_3d("MaxPool", 0, 1);
    check_pool_3d("AveragePool", 0, 0);
    check_pool_3d("AveragePool", 1, 0);
}

/* NegativeLogLikelihoodLoss (weights, ignore_index, mean) and
 * SoftmaxCrossEntropyLoss (sum) on [3,5,2] scores. */
static void test_losses(void **state)
{
    (void)state;
    enum { N = 3, C = 5, D = 2 };
    const int64_t x_dims[3] = {N, C, D}, t_dims[2] = {N, D}, w_dims[1] = {C};
    const int64_t target[N * D] = {1, 4, 0, 1, 3, 2};
    const int64_t ignore = 1;
    float *x = onnx_run_random_floats(N * C * D), *weight = onnx_run_random_floats(C);
    for (int t = 0; t < 2; t++) {
        int sce = t == 1;
        onnx_builder b;
        onnx_builder_init(&b, 13);
        onnx_builder_input(&b, "x", F32, 3, x_dims, NULL);
        onnx_builder_input(&b, "t", I64, 2, t_dims, NULL);
        onnx_builder_initializer(&b, "w", F32, 1, w_dims, weight,
                                 sizeof(float) * C);
        Onnx__NodeProto *node = onnx_builder_node(
            &b, sce ? "SoftmaxCrossEntropyLoss" : "NegativeLogLikelihoodLoss",
            "loss", (const char *[]){"x", "t", sce ? NULL : "w", NULL},
            (const char *[]){"loss", NULL});
        onnx_builder_attr_string(node, "reduction", sce ? "sum" : "mean");
        if (!sce)
            onnx_builder_attr_int(node, "ignore_index", ignore);
        onnx_builder_output(&b, "loss");
        int32_t rank;
        int64_t dims[8];
        float *y = onnx_run_model(&b, (const void *[]){x, target}, &rank, dims);
        assert_int_equal(rank, 0);
        double total = 0, weights = 0;
        for (int n = 0; n < N; n++)
            for (int d = 0; d < D; d++) {
                int64_t c = target[n * D + d];
                double picked = x[(n * C + c) * D + d];
                if (sce) {
                    double sum = 0;
                    for (int j = 0; j < C; j++)
                        sum += exp((double)x[(n * C + j) * D + d]);
                    total -= picked - log(sum);
                } else if (c != ignore) {
                    total -= picked * weight[c];
                    weights += weight[c];
                }
            }
        double ref = sce ? total : total / weights;
        onnx_run_expect_close(y, &ref, 1);
        free(y);
        onnx_builder_free(&b);
    }
    free(x), free(weight);
}

/* b: y = Dropout(x [rank, dims], ratio, training = 1), with its mask as
 * a second output when `mask`. */
static void dropout_model(onnx_builder *b, int32_t rank, const int64_t *dims,
                          float ratio, int mask)
{
    const uint8_t yes = 1;
    onnx_builder_init(b, 13);
    onnx_builder_input(b, "x", F32, rank, dims, NULL);
    onnx_builder_initializer(b, "ratio", F32, 0, NULL, &ratio, sizeof ratio);
    onnx_builder_initializer(b, "training", BOOL, 0, NULL, &yes, 1);
    onnx_builder_node(b, "Dropout", "y",
                      (const char *[]){"x", "ratio", "training", NULL},
                      (const char *[]){"y", mask ? "mask" : NULL, NULL});
    onnx_builder_output(b, "y");
    if (mask)
        onnx_builder_output(b, "mask");
}

/* Dropout in training mode: ratio 0 is the identity. */
static void test_training_dropout_ratio_0(void **state)
{
    (void)state;
    const int64_t x_dims[2] = {2, 3};
    float *x = onnx_run_random_floats(6);
    onnx_builder b;
    dropout_model(&b, 2, x_dims, 0.0f, 0);
    int32_t rank;
    int64_t dims[8];
    float *y = onnx_run_model(&b, (const void *[]){x}, &rank, dims);
    assert_memory_equal(y, x, 6 * sizeof *x);
    free(y);
    onnx_builder_free(&b);
    free(x);
}

/* Runs a session of p once: x in, y and mask out. */
static void run_dropout(dfg_session *s, const float *x, float *y,
                        uint8_t *mask)
{
    void *outputs[2] = {y, mask};
    assert_int_equal(dfg_session_run(s, (const void *const[]){x}, outputs),
                     DFG_OK);
}

/* Dropout in training mode with ratio 0.25 drops at every run, as ONNX
 * says: the mask output tells the kept elements, which are scaled by
 * 1 / 0.75, the rest 0; about a quarter is dropped; the next run draws
 * another mask; a new session draws the first one again (seeded). */
static void test_training_dropout_drops(void **state)
{
    (void)state;
    enum { N = 4000 };
    const int64_t x_dims[1] = {N};
    float *x = onnx_run_random_floats(N), *y[3];
    uint8_t *mask[3];
    onnx_builder b;
    dropout_model(&b, 1, x_dims, 0.25f, 1);
    dfg_graph *graph = NULL;
    assert_int_equal(onnx_builder_import(&b, &graph), DFG_OK);
    dfg_program *p;
    assert_int_equal(dfg_compile(graph, NULL, &p), DFG_OK);
    const dfg_backend *cpu;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    dfg_session *s[2];
    for (int i = 0; i < 3; i++) {
        y[i] = malloc(N * sizeof *y[i]);
        mask[i] = malloc(N);
    }
    assert_int_equal(dfg_session_create(p, cpu, NULL, &s[0]), DFG_OK);
    assert_int_equal(dfg_session_create(p, cpu, NULL, &s[1]), DFG_OK);
    run_dropout(s[0], x, y[0], mask[0]);
    run_dropout(s[0], x, y[1], mask[1]);
    run_dropout(s[1], x, y[2], mask[2]);
    int64_t dropped = 0, changed = 0;
    for (int64_t i = 0; i < N; i++) {
        dropped += !mask[0][i];
        changed += mask[0][i] != mask[1][i];
        assert_true(mask[0][i] <= 1);
        assert_true(y[0][i] == (mask[0][i] ? x[i] * (1.0f / 0.75f) : 0.0f));
    }
    assert_in_range(dropped, N / 4 - N / 20, N / 4 + N / 20);
    assert_true(changed > N / 10);
    assert_memory_equal(mask[0], mask[2], N);
    assert_memory_equal(y[0], y[2], N * sizeof *y[0]);
    for (int i = 0; i < 3; i++)
        free(y[i]), free(mask[i]);
    dfg_session_destroy(s[0]);
    dfg_session_destroy(s[1]);
    dfg_program_destroy(p);
    dfg_graph_destroy(graph);
    onnx_builder_free(&b);
    free(x);
}

/* ---- gradients through the composed ops ----------------------------- */

#define GRAD_EPS 1e-3
#define GRAD_TOLERANCE 1e-2

/* The imported model's graph with L = sum(y * R) as output 1 (R fixed
 * random: every output element weighs in) and, with_gradient, dL/dx as
 * output 2, x being the model's one input. */
static dfg_program *compile_with_loss(const onnx_builder *b, int with_gradient)
{
    dfg_graph *g;
    assert_int_equal(onnx_builder_import(b, &g), DFG_OK);
    int32_t x = 0;
    while (g->values[x].kind != DFG_VALUE_INPUT)
        x++;
    dfg_value y = dfg_graph_handle(g, g->outputs[0]), weights, product, loss;
    dfg_tensor_info info;
    assert_int_equal(dfg_graph_value_info(g, y, &info), DFG_OK);
    /* R: the same in both programs */
    int64_t n_r = onnx_run_numel(info.rank, info.shape);
    float *r = malloc((size_t)n_r * sizeof *r);
    for (int64_t i = 0; i < n_r; i++)
        r[i] = (float)sin(1.0 + (double)i);
    assert_int_equal(dfg_graph_constant(g, "R", DFG_F32, info.rank, info.shape,
                                        r, &weights), DFG_OK);
    free(r);
    assert_int_equal(dfg_mul(g, y, weights, &product), DFG_OK);
    assert_int_equal(dfg_reduce_sum(g, product, 0, NULL, 0, &loss), DFG_OK);
    assert_int_equal(dfg_graph_output(g, loss, "L"), DFG_OK);
    if (with_gradient) {
        int32_t grad;
        if (dfg_autodiff(g, dfg_graph_index(g, loss), &x, 1, &grad) != DFG_OK)
            fail_msg("autodiff: %s", dfg_last_error());
        assert_true(grad >= 0);
        assert_int_equal(dfg_graph_output(g, dfg_graph_handle(g, grad), "dx"),
                         DFG_OK);
    }
    dfg_program *p;
    assert_int_equal(dfg_compile(g, NULL, &p), DFG_OK);
    assert_int_equal(dfg_program_verify(p), DFG_OK);
    dfg_graph_destroy(g);
    return p;
}

/* x holds distinct values 0.01 apart (shuffled), so that no perturbation
 * of GRAD_EPS changes which element a max picks. */
static void check_gradient(const onnx_builder *b, int32_t rank,
                           const int64_t *x_dims)
{
    const dfg_backend *cpu;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    dfg_program *forward = compile_with_loss(b, 0);
    dfg_program *backward = compile_with_loss(b, 1);
    dfg_session *fs, *bs;
    assert_int_equal(dfg_session_create(forward, cpu, NULL, &fs), DFG_OK);
    assert_int_equal(dfg_session_create(backward, cpu, NULL, &bs), DFG_OK);
    dfg_tensor_info y_info;
    assert_int_equal(dfg_program_output_info(forward, 0, &y_info), DFG_OK);
    int64_t n = onnx_run_numel(rank, x_dims);
    float *x = malloc((size_t)n * sizeof *x), *dx = malloc((size_t)n * sizeof *dx);
    float *y = malloc((size_t)onnx_run_numel(y_info.rank, y_info.shape) * sizeof *y);
    for (int64_t i = 0; i < n; i++)
        x[i] = (float)(0.01 * (double)(i - n / 2));
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)((onnx_run_uniform() + 1) / 2 * (double)(i + 1)) % (i + 1);
        float t = x[i];
        x[i] = x[j];
        x[j] = t;
    }
    float loss;
    const void *inputs[1] = {x};
    assert_int_equal(dfg_session_run(bs, inputs, (void *[]){y, &loss, dx}),
                     DFG_OK);
    double diff = 0, norm = 0;
    for (int64_t i = 0; i < n; i++) {
        float keep = x[i], up, down;
        x[i] = (float)(keep + GRAD_EPS);
        assert_int_equal(dfg_session_run(fs, inputs, (void *[]){y, &up}), DFG_OK);
        x[i] = (float)(keep - GRAD_EPS);
        assert_int_equal(dfg_session_run(fs, inputs, (void *[]){y, &down}), DFG_OK);
        x[i] = keep;
        double ref = ((double)up - down) / (2 * GRAD_EPS);
        diff += (dx[i] - ref) * (dx[i] - ref);
        norm += ref * ref;
    }
    assert_true(norm > 0);
    if (!(sqrt(diff / norm) < GRAD_TOLERANCE))
        fail_msg("relative gradient error %g", sqrt(diff / norm));
    free(x), free(dx), free(y);
    dfg_session_destroy(fs);
    dfg_session_destroy(bs);
    dfg_program_destroy(forward);
    dfg_program_destroy(backward);
}

static void test_gradients(void **state)
{
    (void)state;
    const int64_t x_dims[5] = {1, 2, 4, 4, 4}, w_dims[5] = {2, 2, 2, 2, 2};
    const int64_t k[3] = {2, 2, 2}, s[3] = {2, 1, 2};
    const int64_t pads[6] = {1, 0, 0, 0, 1, 1};
    const char *types[3] = {"Conv", "MaxPool", "AveragePool"};
    float *w = onnx_run_random_floats(onnx_run_numel(5, w_dims));
    for (int t = 0; t < 3; t++) {
        onnx_builder b;
        onnx_builder_init(&b, 13);
        onnx_builder_input(&b, "x", F32, 5, x_dims, NULL);
        if (t == 0)
            onnx_builder_initializer(&b, "w", F32, 5, w_dims, w,
                                     sizeof(float) * (size_t)onnx_run_numel(5, w_dims));
        Onnx__NodeProto *node = onnx_builder_node(
            &b, types[t], "y", (const char *[]){"x", t == 0 ? "w" : NULL, NULL},
            (const char *[]){"y", NULL});
        if (t > 0)
            onnx_builder_attr_ints(node, "kernel_shape", k, 3);
        onnx_builder_attr_ints(node, "strides", s, 3);
        onnx_builder_attr_ints(node, "pads", pads, 6);
        onnx_builder_output(&b, "y");
        check_gradient(&b, 5, x_dims);
        onnx_builder_free(&b);
    }
    free(w);

    const int64_t p_dims[2] = {3, 4}, p_pads[4] = {2, 1, 1, 3}, n_pads[1] = {4};
    onnx_builder b;
    onnx_builder_init(&b, 13);
    onnx_builder_input(&b, "x", F32, 2, p_dims, NULL);
    onnx_builder_initializer(&b, "pads", I64, 1, n_pads, p_pads, sizeof p_pads);
    Onnx__NodeProto *node = onnx_builder_node(
        &b, "Pad", "y", (const char *[]){"x", "pads", NULL},
        (const char *[]){"y", NULL});
    onnx_builder_attr_string(node, "mode", "reflect");
    onnx_builder_output(&b, "y");
    check_gradient(&b, 2, p_dims);
    onnx_builder_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_transpose_2d),
        cmocka_unit_test(test_pad_edge_reflect),
        cmocka_unit_test(test_pad_of_zeros),
        cmocka_unit_test(test_conv_3d),
        cmocka_unit_test(test_pools_3d),
        cmocka_unit_test(test_losses),
        cmocka_unit_test(test_training_dropout_ratio_0),
        cmocka_unit_test(test_training_dropout_drops),
        cmocka_unit_test(test_gradients),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
