/* Operator attributes: one plain struct shared by every op.
 *
 * Each op reads only the fields its documentation (docs/ops.md and the
 * comments below) names; dfg_attrs_init() sets neutral defaults. The struct
 * is copied into the graph when an op is recorded. */
#ifndef DFG_ATTRS_H
#define DFG_ATTRS_H

#include <stdint.h>
#include "dfg/dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DFG_MAX_RANK 8
#define DFG_MAX_SPLIT 64

typedef enum dfg_gelu_approximation {
    DFG_GELU_ERF = 0,
    DFG_GELU_TANH = 1
} dfg_gelu_approximation;

/* resize: how values are sampled (mode), how an output coordinate maps to
 * an input one (coordinates, as ONNX's coordinate_transformation_mode),
 * and how nearest rounds that coordinate (ONNX's nearest_mode). */
typedef enum dfg_resize_mode {
    DFG_RESIZE_NEAREST = 0,
    DFG_RESIZE_LINEAR = 1,
    DFG_RESIZE_CUBIC = 2,
    DFG_RESIZE_MODE_COUNT
} dfg_resize_mode;

typedef enum dfg_resize_coordinates {
    DFG_RESIZE_HALF_PIXEL = 0,
    DFG_RESIZE_PYTORCH_HALF_PIXEL = 1,
    DFG_RESIZE_ALIGN_CORNERS = 2,
    DFG_RESIZE_ASYMMETRIC = 3,
    DFG_RESIZE_TF_HALF_PIXEL_FOR_NN = 4,
    DFG_RESIZE_COORDINATES_COUNT
} dfg_resize_coordinates;

typedef enum dfg_resize_nearest {
    DFG_RESIZE_ROUND_PREFER_FLOOR = 0,
    DFG_RESIZE_ROUND_PREFER_CEIL = 1,
    DFG_RESIZE_FLOOR = 2,
    DFG_RESIZE_CEIL = 3,
    DFG_RESIZE_NEAREST_COUNT
} dfg_resize_nearest;

/* conv2d, matmul, gemm: what their fused post-ops do to each output
 * element, in order (set by the fusion passes, passes/fusion/fuse_conv.c and
 * fuse_matmul.c; docs/ops.md). alpha and beta are the clip bounds (CLIP)
 * or the slope and offset of clip(alpha x + beta, 0, 1) (HARDSIGMOID);
 * the others take none. SUM adds input 3 (the residual, the output's
 * shape; a conv2d's or a matmul's) and comes first. HARDSWISH is
 * x * clip(x / 6 + 1 / 2, 0, 1), SILU x * sigmoid(x). */
#define DFG_MAX_POST_OPS 4
typedef enum dfg_post_op {
    DFG_POST_RELU = 0,
    DFG_POST_CLIP = 1,
    DFG_POST_SIGMOID = 2,
    DFG_POST_HARDSIGMOID = 3,
    DFG_POST_HARDSWISH = 4,
    DFG_POST_SILU = 5,
    DFG_POST_GELU_ERF = 6,
    DFG_POST_GELU_TANH = 7,
    DFG_POST_SUM = 8,
    DFG_POST_TANH = 9,
    DFG_POST_OP_COUNT
} dfg_post_op;

/* How a tensor's elements lie in memory. Plain is row-major in its dims
 * (NCHW for images). The blocked ones are oneDNN's nChw8c / nChw16c for
 * a 4-D f32 [N, C, H, W] tensor whose C is a multiple of the block:
 * element (n, c, h, w) at ((n C/b + c/b) H W + h W + w) b + c mod b, so
 * a channel range that starts and ends on a block lies in the same bytes
 * as in NCHW (docs/program-format.md). NHWC (channels last) is a 4-D
 * [N, C, H, W] tensor whose element (n, c, h, w) lies at ((n H + h) W +
 * w) C + c: the CUDA backend's 16-bit convolutions take it (tensor
 * cores). Only the layout-assignment pass (passes/layout_assign.c) gives
 * a tensor a layout other than plain. */
typedef enum dfg_layout {
    DFG_LAYOUT_PLAIN = 0,
    DFG_LAYOUT_NCHW8C = 1,
    DFG_LAYOUT_NCHW16C = 2,
    DFG_LAYOUT_NHWC = 3,
    DFG_LAYOUT_COUNT
} dfg_layout;

typedef struct dfg_attrs {
    /* leaky_relu slope (default 0.01 in dfg_leaky_relu), gemm alpha (1). */
    float alpha;
    /* gemm beta (1). */
    float beta;
    /* batch_norm, layer_norm (1e-5). */
    float epsilon;
    /* clip bounds (-inf, +inf). */
    float clip_min, clip_max;
    /* pad: the constant written into the border (0). */
    float pad_value;
    /* softmax, log_softmax, layer_norm, flatten, concat, split, gather;
     * negative counts from the back (0). */
    int32_t axis;
    /* reduce_*: keep reduced axes as size 1 (1). */
    int32_t keepdims;
    /* gemm: transpose A / B (0). */
    int32_t trans_a, trans_b;
    /* gelu: DFG_GELU_ERF or DFG_GELU_TANH. */
    int32_t approximate;
    /* cast: target dtype. */
    dfg_dtype to;
    /* conv2d: groups (1). */
    int32_t group;
    /* pools: kernel height and width. */
    int32_t kernel[2];
    /* conv2d, pools: stride (1,1) and dilation (1,1) in height, width. */
    int32_t strides[2];
    int32_t dilations[2];
    /* average_pool: count padding in the divisor (0); pools: ceil_mode (0). */
    int32_t count_include_pad;
    int32_t ceil_mode;
    /* conv2d and pools: (top, left, bottom, right), as ONNX orders them.
     * pad: begins of every axis, then ends of every axis (2 * rank). */
    int64_t pads[2 * DFG_MAX_RANK];
    /* reduce_*, squeeze, unsqueeze, slice: the axes (n_axes of them). A
     * reduce with n_axes == 0 reduces every axis. */
    int32_t n_axes;
    int64_t axes[DFG_MAX_RANK];
    /* slice: per entry of axes, start, end (exclusive) and step. */
    int64_t starts[DFG_MAX_RANK];
    int64_t ends[DFG_MAX_RANK];
    int64_t steps[DFG_MAX_RANK];
    /* reshape (0 copies the input dim, one -1 is inferred), expand, and
     * transpose (perm; n_shape == 0 reverses the axes). */
    int32_t n_shape;
    int64_t shape[DFG_MAX_RANK];
    /* split: the size of each output along axis (n_split of them);
     * n_split == 0 splits evenly into the requested number of outputs. */
    int32_t n_split;
    int64_t split[DFG_MAX_SPLIT];
    /* Fields added in program file version 2. */
    /* resize: the output's shape is shape/n_shape; resize_mode
     * (DFG_RESIZE_NEAREST), coordinates (DFG_RESIZE_HALF_PIXEL),
     * nearest_rounding (DFG_RESIZE_ROUND_PREFER_FLOOR), cubic_coeff_a
     * (-0.75), exclude_outside (0: taps outside the input take the edge
     * value; 1: they get weight 0 and the rest are renormalised). scales:
     * per axis, output / input as the coordinate transform sees it (ONNX's
     * scales input, which need not equal the ratio of the sizes); n_scales
     * == 0 means the ratio of the sizes. */
    int32_t resize_mode;
    int32_t coordinates;
    int32_t nearest_rounding;
    int32_t exclude_outside;
    float cubic_coeff_a;
    int32_t n_scales;
    float scales[DFG_MAX_RANK];
    /* top_k: how many (k >= 0, at most the axis' size) along attrs.axis,
     * the largest (1) or the smallest (0), sorted (1) or in input order
     * (0). */
    int64_t k;
    int32_t largest;
    int32_t sorted;
    /* Fields added in program file version 4. */
    /* conv2d, matmul, gemm: their post-ops (dfg_post_op), none by default. */
    int32_t n_post_ops;
    int32_t post_ops[DFG_MAX_POST_OPS];
    float post_op_alpha[DFG_MAX_POST_OPS];
    float post_op_beta[DFG_MAX_POST_OPS];
    /* Fields added in program file version 5. */
    /* reorder: the output's layout (dfg_layout, plain by default). */
    int32_t layout;
} dfg_attrs;

/* Fills *attrs with the defaults named above. */
void dfg_attrs_init(dfg_attrs *attrs);

#ifdef __cplusplus
}
#endif
#endif
