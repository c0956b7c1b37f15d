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

#endif
