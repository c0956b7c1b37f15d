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
} dfg_attrs;

/* Fills *attrs with the defaults named above. */
void dfg_attrs_init(dfg_attrs *attrs);

#ifdef __cplusplus
}
#endif
#endif
