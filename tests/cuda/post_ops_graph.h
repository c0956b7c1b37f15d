/* A graph whose fused form (the CUDA target's, fuse_operators) has a
 * product with each kind of epilogue the CUDA backend runs: conv2d + bias
 * + SiLU, depthwise conv2d + bias + clip, conv2d + bias + residual sum +
 * GELU (erf), matmul + bias + sigmoid, matmul + residual sum + GELU
 * (tanh). For tests on the emulated backend and on a device. */
#ifndef DFG_TEST_POST_OPS_GRAPH_H
#define DFG_TEST_POST_OPS_GRAPH_H

#include "dfg/graph.h"

/* x [2, 8, 10, 10] -> y [2, 32], f32 */
#define POST_OPS_GRAPH_INPUTS (2 * 8 * 10 * 10)
#define POST_OPS_GRAPH_OUTPUTS (2 * 32)
/* How many steps fusion removes from it. */
#define POST_OPS_GRAPH_FUSED_AWAY 9

/* NULL if building failed (dfg_last_error says why). */
dfg_graph *post_ops_graph(void);

/* One product and what follows it (tests/cuda/test_cuda_lt_mapping.c): x
 * [PRODUCT_M, PRODUCT_K] times a weight [PRODUCT_K, PRODUCT_N] (each with
 * a leading [PRODUCT_BATCH] when batched), or a gemm of x and a weight
 * stored [N, K] (trans_b, alpha 0.75) with C; then an add of a weight
 * [N], an add of the input r (the output's shape), an activation. With a
 * transpose, an operand is an input stored with its last two dims swapped
 * and transposed back before the product: x (PRODUCT_TRANSPOSE_A), or the
 * input bt in place of the weight (PRODUCT_TRANSPOSE_B; bt also a graph
 * output, bt_t, with PRODUCT_TRANSPOSE_SHARED). */
enum { PRODUCT_M = 5, PRODUCT_K = 12, PRODUCT_N = 8, PRODUCT_BATCH = 3 };
typedef enum product_activation {
    PRODUCT_NONE, PRODUCT_RELU, PRODUCT_GELU_TANH, PRODUCT_GELU_ERF,
    PRODUCT_SIGMOID, PRODUCT_RELU_SIGMOID
} product_activation;
typedef enum product_transpose {
    PRODUCT_PLAIN, PRODUCT_TRANSPOSE_A, PRODUCT_TRANSPOSE_B,
    PRODUCT_TRANSPOSE_SHARED
} product_transpose;
typedef struct product_graph_spec {
    int gemm;       /* 1: a gemm */
    int gemm_c;     /* the gemm's C: 0 none, 1 [N] (a bias), 2 [M, N] */
    int batched;
    int bias;       /* an add of [N] after the product */
    int residual;   /* an add of the input r */
    product_activation act;
    product_transpose transpose;
} product_graph_spec;

/* Inputs x, then r with a residual, then bt when B is transposed; outputs
 * y, then the transposed bt when shared. NULL if building failed. */
dfg_graph *product_graph(const product_graph_spec *spec);

/* The element counts of product_graph(spec)'s inputs (*n_in of them, at
 * most 3) and outputs (*n_out, at most 2), in order. */
void product_graph_sizes(const product_graph_spec *spec, int64_t *in,
                         int32_t *n_in, int64_t *out, int32_t *n_out);

/* A training graph of products (input x [4, 6, 5]; weights w [5, 3] and
 * v [4, 3, 2]): loss = mean((relu(x . w) . v)^2), whose gradients
 * autodiff writes with transposes of the last two dims. */
dfg_graph *matmul_training_graph(void);

/* Two conv2d of x [1, 3, 6, 6]: y with padding no symmetric pad
 * reproduces (bottom and right only), z without padding. */
dfg_graph *conv_pads_graph(void);

#endif
