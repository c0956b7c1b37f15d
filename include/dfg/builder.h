/* Typed builder: one function per op over dfg_graph_node().
 *
 * Each function records one node with a generated name ("conv2d_3") and
 * writes its result into *out (split: outs[0..n_outputs)). Inputs are
 * values of the same graph; DFG_NO_VALUE stands for an absent optional
 * operand where the signature says "_or_none". Arrays passed in (shapes,
 * axes, pads) are copied; the caller keeps them. A failing call returns the
 * status of dfg_graph_node(), leaves a message naming the node, the op and
 * the operand shapes (dfg_last_error()), and leaves the graph unchanged.
 * docs/ops.md describes every op's operands, attributes and shape rule. */
#ifndef DFG_BUILDER_H
#define DFG_BUILDER_H

#include <stdint.h>
#include "dfg/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Elementwise with numpy broadcasting; both operands of one dtype. */
dfg_status dfg_add(dfg_graph *g, dfg_value a, dfg_value b, dfg_value *out);
dfg_status dfg_sub(dfg_graph *g, dfg_value a, dfg_value b, dfg_value *out);
dfg_status dfg_mul(dfg_graph *g, dfg_value a, dfg_value b, dfg_value *out);
dfg_status dfg_div(dfg_graph *g, dfg_value a, dfg_value b, dfg_value *out);
dfg_status dfg_pow(dfg_graph *g, dfg_value a, dfg_value b, dfg_value *out);
dfg_status dfg_max(dfg_graph *g, dfg_value a, dfg_value b, dfg_value *out);
dfg_status dfg_min(dfg_graph *g, dfg_value a, dfg_value b, dfg_value *out);
/* Comparisons: broadcast like the above, the result is bool. */
dfg_status dfg_equal(dfg_graph *g, dfg_value a, dfg_value b, dfg_value *out);
dfg_status dfg_less(dfg_graph *g, dfg_value a, dfg_value b, dfg_value *out);
dfg_status dfg_greater(dfg_graph *g, dfg_value a, dfg_value b, dfg_value *out);
/* cond (bool) ? x : y, all three broadcast together. */
dfg_status dfg_where(dfg_graph *g, dfg_value cond, dfg_value x, dfg_value y,
                     dfg_value *out);

/* Unary elementwise: the result has x's type. */
dfg_status dfg_neg(dfg_graph *g, dfg_value x, dfg_value *out);
dfg_status dfg_abs(dfg_graph *g, dfg_value x, dfg_value *out);
dfg_status dfg_exp(dfg_graph *g, dfg_value x, dfg_value *out);
dfg_status dfg_log(dfg_graph *g, dfg_value x, dfg_value *out);
dfg_status dfg_sqrt(dfg_graph *g, dfg_value x, dfg_value *out);
dfg_status dfg_reciprocal(dfg_graph *g, dfg_value x, dfg_value *out);
dfg_status dfg_relu(dfg_graph *g, dfg_value x, dfg_value *out);
dfg_status dfg_sigmoid(dfg_graph *g, dfg_value x, dfg_value *out);
dfg_status dfg_tanh(dfg_graph *g, dfg_value x, dfg_value *out);
dfg_status dfg_erf(dfg_graph *g, dfg_value x, dfg_value *out);
dfg_status dfg_identity(dfg_graph *g, dfg_value x, dfg_value *out);
dfg_status dfg_leaky_relu(dfg_graph *g, dfg_value x, float alpha,
                          dfg_value *out);
/* approximate: DFG_GELU_ERF or DFG_GELU_TANH. */
dfg_status dfg_gelu(dfg_graph *g, dfg_value x, int32_t approximate,
                    dfg_value *out);
dfg_status dfg_clip(dfg_graph *g, dfg_value x, float min, float max,
                    dfg_value *out);
dfg_status dfg_cast(dfg_graph *g, dfg_value x, dfg_dtype to, dfg_value *out);

/* Numpy matmul: 1-D operands and broadcast batch dims. */
dfg_status dfg_matmul(dfg_graph *g, dfg_value a, dfg_value b, dfg_value *out);

typedef struct dfg_gemm_params {
    float alpha, beta;       /* alpha * A' B' + beta * C */
    int32_t trans_a, trans_b;
} dfg_gemm_params;
/* A, B 2-D; c_or_none broadcasts to [M, N]. params NULL: alpha = beta = 1,
 * no transposes. */
dfg_status dfg_gemm(dfg_graph *g, dfg_value a, dfg_value b, dfg_value c_or_none,
                    const dfg_gemm_params *params, dfg_value *out);

/* Window parameters; a zero stride, dilation or group means 1, so a
 * zero-initialised struct is a stride-1 convolution without padding. */
typedef struct dfg_conv2d_params {
    int32_t strides[2];   /* height, width */
    int32_t dilations[2];
    int64_t pads[4];      /* top, left, bottom, right */
    int32_t group;
} dfg_conv2d_params;
/* x [N,C,H,W], w [M,C/group,kh,kw], bias_or_none [M]. params NULL: the
 * defaults. */
dfg_status dfg_conv2d(dfg_graph *g, dfg_value x, dfg_value w,
                      dfg_value bias_or_none, const dfg_conv2d_params *params,
                      dfg_value *out);

typedef struct dfg_pool_params {
    int32_t kernel[2];    /* height, width; required */
    int32_t strides[2];   /* 0 means 1 */
    int32_t dilations[2]; /* 0 means 1 */
    int64_t pads[4];      /* top, left, bottom, right */
    int32_t ceil_mode;
    int32_t count_include_pad; /* average_pool only */
} dfg_pool_params;
/* x [N,C,H,W]; params must not be NULL. */
dfg_status dfg_max_pool(dfg_graph *g, dfg_value x,
                        const dfg_pool_params *params, dfg_value *out);
dfg_status dfg_average_pool(dfg_graph *g, dfg_value x,
                            const dfg_pool_params *params, dfg_value *out);
dfg_status dfg_global_average_pool(dfg_graph *g, dfg_value x, dfg_value *out);

/* Inference batch norm: scale, bias, mean, var are [C]. */
dfg_status dfg_batch_norm(dfg_graph *g, dfg_value x, dfg_value scale,
                          dfg_value bias, dfg_value mean, dfg_value var,
                          float epsilon, dfg_value *out);
/* Normalises over axes [axis, rank); scale (and bias) have those dims. */
dfg_status dfg_layer_norm(dfg_graph *g, dfg_value x, dfg_value scale,
                          dfg_value bias_or_none, int32_t axis, float epsilon,
                          dfg_value *out);
dfg_status dfg_softmax(dfg_graph *g, dfg_value x, int32_t axis,
                       dfg_value *out);
dfg_status dfg_log_softmax(dfg_graph *g, dfg_value x, int32_t axis,
                           dfg_value *out);

/* Reductions over axes[0..n_axes) (n_axes 0: every axis); keepdims keeps
 * the reduced axes as size 1. */
dfg_status dfg_reduce_sum(dfg_graph *g, dfg_value x, int32_t n_axes,
                          const int64_t *axes, int32_t keepdims,
                          dfg_value *out);
dfg_status dfg_reduce_mean(dfg_graph *g, dfg_value x, int32_t n_axes,
                           const int64_t *axes, int32_t keepdims,
                           dfg_value *out);
dfg_status dfg_reduce_max(dfg_graph *g, dfg_value x, int32_t n_axes,
                          const int64_t *axes, int32_t keepdims,
                          dfg_value *out);

/* shape[i] == 0 copies x's dim i; one -1 is inferred. */
dfg_status dfg_reshape(dfg_graph *g, dfg_value x, int32_t rank,
                       const int64_t *shape, dfg_value *out);
dfg_status dfg_flatten(dfg_graph *g, dfg_value x, int32_t axis,
                       dfg_value *out);
/* perm of n_perm == rank entries, or n_perm 0 (perm may be NULL) to
 * reverse the axes. */
dfg_status dfg_transpose(dfg_graph *g, dfg_value x, int32_t n_perm,
                         const int64_t *perm, dfg_value *out);
dfg_status dfg_concat(dfg_graph *g, int32_t n_inputs, const dfg_value *inputs,
                      int32_t axis, dfg_value *out);
/* sizes_or_null: n_outputs sizes along axis; NULL splits evenly. */
dfg_status dfg_split(dfg_graph *g, dfg_value x, int32_t axis,
                     int32_t n_outputs, const int64_t *sizes_or_null,
                     dfg_value *outs);
/* ONNX Slice over axes[0..n_axes); steps_or_null NULL means all 1. */
dfg_status dfg_slice(dfg_graph *g, dfg_value x, int32_t n_axes,
                     const int64_t *axes, const int64_t *starts,
                     const int64_t *ends, const int64_t *steps_or_null,
                     dfg_value *out);
/* n_axes 0 squeezes every size-1 axis. */
dfg_status dfg_squeeze(dfg_graph *g, dfg_value x, int32_t n_axes,
                       const int64_t *axes, dfg_value *out);
dfg_status dfg_unsqueeze(dfg_graph *g, dfg_value x, int32_t n_axes,
                         const int64_t *axes, dfg_value *out);
/* Bidirectional broadcast of x with shape. */
dfg_status dfg_expand(dfg_graph *g, dfg_value x, int32_t rank,
                      const int64_t *shape, dfg_value *out);
/* indices: i32 or i64; the result has rank(data) + rank(indices) - 1. */
dfg_status dfg_gather(dfg_graph *g, dfg_value data, dfg_value indices,
                      int32_t axis, dfg_value *out);
/* pads: the begins of every axis of x, then the ends (2 * rank(x)
 * entries); the border holds value. */
dfg_status dfg_pad(dfg_graph *g, dfg_value x, const int64_t *pads, float value,
                   dfg_value *out);

/* Ops added for the ONNX front end (src/ir/builder_extra.c). Rounding and
 * trigonometry: float dtypes, the result has x's type. */
dfg_status dfg_floor(dfg_graph *g, dfg_value x, dfg_value *out);
dfg_status dfg_ceil(dfg_graph *g, dfg_value x, dfg_value *out);
dfg_status dfg_round(dfg_graph *g, dfg_value x, dfg_value *out);
dfg_status dfg_sin(dfg_graph *g, dfg_value x, dfg_value *out);
dfg_status dfg_cos(dfg_graph *g, dfg_value x, dfg_value *out);
dfg_status dfg_tan(dfg_graph *g, dfg_value x, dfg_value *out);
dfg_status dfg_asin(dfg_graph *g, dfg_value x, dfg_value *out);
dfg_status dfg_acos(dfg_graph *g, dfg_value x, dfg_value *out);
dfg_status dfg_atan(dfg_graph *g, dfg_value x, dfg_value *out);
dfg_status dfg_sinh(dfg_graph *g, dfg_value x, dfg_value *out);
dfg_status dfg_cosh(dfg_graph *g, dfg_value x, dfg_value *out);
dfg_status dfg_asinh(dfg_graph *g, dfg_value x, dfg_value *out);
dfg_status dfg_acosh(dfg_graph *g, dfg_value x, dfg_value *out);
dfg_status dfg_atanh(dfg_graph *g, dfg_value x, dfg_value *out);
/* a mod b with the divisor's sign (Python's %), and fmod with the
 * dividend's (C's); broadcasting, numeric dtypes. */
dfg_status dfg_mod(dfg_graph *g, dfg_value a, dfg_value b, dfg_value *out);
dfg_status dfg_fmod(dfg_graph *g, dfg_value a, dfg_value b, dfg_value *out);
/* The i64 index of the first extreme along axis. */
dfg_status dfg_arg_max(dfg_graph *g, dfg_value x, int32_t axis,
                       int32_t keepdims, dfg_value *out);
dfg_status dfg_arg_min(dfg_graph *g, dfg_value x, int32_t axis,
                       int32_t keepdims, dfg_value *out);
/* out[p] = data[p with p[axis] = indices[p]]; indices i32 or i64, negative
 * ones count from the end. */
dfg_status dfg_gather_elements(dfg_graph *g, dfg_value data,
                               dfg_value indices, int32_t axis,
                               dfg_value *out);
/* data with the slices named by indices [..., k] replaced by updates. */
dfg_status dfg_scatter_nd(dfg_graph *g, dfg_value data, dfg_value indices,
                          dfg_value updates, dfg_value *out);

/* Sampling of resize (ONNX Resize). A zero-initialised struct is nearest
 * with half_pixel coordinates, rounding ties down, scales from the sizes. */
typedef struct dfg_resize_params {
    int32_t mode;             /* dfg_resize_mode */
    int32_t coordinates;      /* dfg_resize_coordinates */
    int32_t nearest_rounding; /* dfg_resize_nearest */
    float cubic_coeff_a;      /* 0 means -0.75 */
    int32_t exclude_outside;
    /* rank entries, output / input per axis as the coordinate transform
     * sees it (ONNX's scales), or NULL for sizes / input dims. */
    const float *scales_or_null;
} dfg_resize_params;
/* x resized to sizes (rank == rank(x) entries); params NULL: the
 * defaults. Linear and cubic need a float x. */
dfg_status dfg_resize(dfg_graph *g, dfg_value x, int32_t rank,
                      const int64_t *sizes, const dfg_resize_params *params,
                      dfg_value *out);
/* The k largest (largest = 1) or smallest elements along axis, best first
 * when sorted (else in input order), and their i64 indices; equal values
 * go to the lower index. */
dfg_status dfg_top_k(dfg_graph *g, dfg_value x, int64_t k, int32_t axis,
                     int32_t largest, int32_t sorted, dfg_value *values,
                     dfg_value *indices);
/* Dropout with drop probability p in [0, 1): the identity in an inference
 * program; a training step (include/dfg/training.h) drops each element
 * with probability p, from a seeded mask drawn anew at every run, and
 * scales the rest by 1 / (1 - p). */
dfg_status dfg_dropout(dfg_graph *g, dfg_value x, float p, dfg_value *out);

/* Losses, for training graphs (include/dfg/training.h). */
/* The mean over the N rows of logits [N,C] (f32) of the cross-entropy of
 * softmax(row) against the class labels [N] (i32 or i64): a scalar. */
dfg_status dfg_softmax_cross_entropy(dfg_graph *g, dfg_value logits,
                                     dfg_value labels, dfg_value *out);
/* mean((prediction - target)^2) over every element: a scalar. */
dfg_status dfg_mean_squared_error(dfg_graph *g, dfg_value prediction,
                                  dfg_value target, dfg_value *out);

#ifdef __cplusplus
}
#endif
#endif
