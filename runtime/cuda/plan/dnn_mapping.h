/* Convolutions as cuDNN's convolution API takes them (dnn.h runs them):
 * which steps it can take, the 4-D shapes and the convolution parameters
 * of its descriptors, and the choice of an algorithm among cuDNN's
 * candidates. Plain C, no cuDNN header: the CPU tests check the mapping
 * and the choice. */
#ifndef DFG_CUDA_DNN_MAPPING_H
#define DFG_CUDA_DNN_MAPPING_H

#include <stddef.h>

#include "runtime/cuda/plan/step_plan_types.h"

/* Set to 0 to run every convolution on the backend's own path (im2col and
 * cuBLAS) in a build with cuDNN. */
#define DFG_CUDA_CUDNN_ENV "DFG_CUDA_CUDNN"

/* 0 if value (the variable's, NULL when unset) turns cuDNN off ("0",
 * "off", "no", "false"), else 1. */
int dfg_cuda_dnn_enabled(const char *value);

/* 1 if attrs' post-ops are an epilogue cuDNN fuses into conv2d: a ReLU, a
 * residual sum (input 3), or the sum then a ReLU, with *relu and
 * *residual set; 0 for none or any other list (cuDNN then adds the bias
 * and a leading residual sum, and the epilogue kernel applies the rest:
 * step_plan_types.h). */
int dfg_cuda_conv_epilogue_make(const dfg_attrs *attrs, int *relu,
                                int *residual);

/* dfg_cuda_target.conv_layout: DFG_LAYOUT_NHWC for a 16-bit conv2d that
 * cuDNN runs on tensor cores channels-last (one group, input and output
 * channels multiples of 8, padding a symmetric pad reproduces), else
 * DFG_LAYOUT_PLAIN (f32, TF32 included, stays NCHW). */
int32_t dfg_cuda_conv_layout(const dfg_attrs *attrs, const dfg_type *in,
                             int32_t n_in, const dfg_type *out);

typedef enum dfg_cuda_dnn_direction {
    DFG_CUDA_DNN_FORWARD,          /* conv2d: y from x and w */
    DFG_CUDA_DNN_BACKWARD_DATA,    /* conv2d_grad_input: dx from dy and w */
    DFG_CUDA_DNN_BACKWARD_FILTER   /* conv2d_grad_weight: dw from dy and x */
} dfg_cuda_dnn_direction;

/* The descriptors of one convolution: x [N, C, H, W], w [K, C/groups, R,
 * S] and y [N, K, P, Q] of the forward conv (NCHW), symmetric padding,
 * cross-correlation. The forward epilogue: y = relu?(conv + bias +
 * residual); `fused` when it has a bias and a ReLU, which cuDNN's
 * ConvolutionBiasActivationForward computes in one call (else a plain
 * forward with beta = 1 over the residual, a bias added, a ReLU in
 * place). */
typedef struct dfg_cuda_dnn_conv {
    dfg_cuda_dnn_direction direction;
    int32_t x[4], w[4], y[4];
    int32_t pad[2], stride[2], dilation[2];
    int32_t groups;
    dfg_dtype dtype;
    int has_bias, residual, relu, fused;
    int tf32; /* f32 on TF32 tensor cores allowed (the step plan's) */
    int nhwc; /* x, y, the residual and the filter (KRSC) channels-last */
} dfg_cuda_dnn_conv;

/* 1 with *out when cuDNN can run plan (a conv2d, conv2d_grad_input or
 * conv2d_grad_weight step's), else 0 with *why (a static phrase): sizes
 * beyond 32 bits, padding no symmetric pad reproduces, a gradient written
 * over its input, an operand of another dtype. */
int dfg_cuda_dnn_conv_make(const dfg_cuda_step_plan *plan,
                           dfg_cuda_dnn_conv *out, const char **why);

/* One of cuDNN's candidate algorithms (its *AlgoPerf_t, in its heuristic
 * order): whether it can run, whether its results are bitwise the same
 * run after run, whether it uses tensor-core math (TF32 for f32), the
 * workspace it needs. */
typedef struct dfg_cuda_dnn_candidate {
    int algo;
    int ok;
    int deterministic;
    int tensor_math;
    size_t workspace_bytes;
} dfg_cuda_dnn_candidate;

/* The index of the first candidate that runs, is deterministic, needs at
 * most workspace_bytes, uses tensor-core math only where allow_tensor_math
 * (f32 stays strict FP32, as the CPU reference) and is required_algo
 * unless that is -1; -1 if none. */
int32_t dfg_cuda_dnn_pick(const dfg_cuda_dnn_candidate *candidates,
                          int32_t n, size_t workspace_bytes,
                          int allow_tensor_math, int required_algo);

#endif
