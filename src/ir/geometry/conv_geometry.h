/* Conv2d geometry and im2col chunking policy, shared by the compiler (the
 * workspace rule sizes the step's scratch tensor from it) and by every
 * backend (the kernels walk the same chunks), so that the bytes planned and
 * the bytes used can never disagree.
 *
 * Why chunks: a full im2col matrix has C/group*kh*kw rows and one column per
 * output pixel. For a 3x3 conv over a 56x56x256 activation that is 9x the
 * activation itself, larger than any tensor of the model, and it would set
 * the arena's peak. Splitting the output pixels into chunks bounds the
 * scratch by DFG_CONV_IM2COL_BUDGET_BYTES whatever the model; GEMM
 * efficiency is barely affected as long as a chunk keeps a few hundred
 * columns, which 1 MiB gives for every K up to a few thousand. A 1x1
 * convolution with stride 1 and no padding is already a GEMM on the input
 * (its im2col matrix is the input), so it needs no scratch at all.
 *
 * A depthwise convolution (one input channel per group, group > 1) needs
 * none either: its im2col GEMM would have a single output row per group,
 * which runs at a small fraction of a direct stencil's speed, so the
 * forward kernels compute each output plane directly from its one input
 * plane (dfg_conv_forward_workspace_bytes).
 *
 * Any workspace from the least (one output row's im2col columns, or one
 * chunk if that is smaller) up to the full one works: the kernels refit
 * the chunks to the bytes the plan gave the step (dfg_conv_geometry_fit),
 * and the planner gives a conv at the arena's peak only what fits under
 * it (passes/workspace_fit.c). A step's workspace beyond the op's full
 * bytes is a backend library's scratch, planned only with the full ones,
 * so the op's part of a step's workspace is min(planned, full). */
#ifndef DFG_CONV_GEOMETRY_H
#define DFG_CONV_GEOMETRY_H

#include <stdint.h>
#include "dfg/attrs.h"
#include "dfg/status.h"
#include "ir/tensor_type.h"

/* Upper bound of the im2col chunk (f32), unless a single column (K floats)
 * is larger: one column is the least a chunk can hold. */
#define DFG_CONV_IM2COL_BUDGET_BYTES ((int64_t)1 << 20)

/* When one image's im2col matrix is small, the forward workspace holds
 * the matrices of up to this many (image, group) pairs side by side,
 * within the budget: the CPU threads then each take whole images, with
 * one synchronisation per batch of them instead of two per image (small
 * images in large batches, like the bundled CNN's 8x8 ones, would spend
 * more time synchronising than multiplying). */
#define DFG_CONV_MAX_SLOTS 4

/* Planes an in-place depthwise conv works on at once, each in its own
 * slot of the workspace (dfg_conv_in_place_workspace_bytes): a constant,
 * so that the plan does not depend on the threads of the process that
 * compiles or runs it; threads past it stay idle. */
#define DFG_CONV_IN_PLACE_SLOTS 32

typedef struct dfg_conv_geometry {
    int64_t batch;                  /* N */
    int64_t in_channels;            /* C */
    int64_t in_h, in_w;
    int64_t out_channels;           /* M */
    int64_t kernel_h, kernel_w;
    int64_t out_h, out_w;
    int64_t group;
    int64_t stride[2], dilation[2]; /* height, width */
    int64_t pad_top, pad_left;      /* the bottom/right pads only shape out_h/w */
    int64_t channels_per_group;     /* C / group */
    int64_t filters_per_group;      /* M / group */
    int64_t k;                      /* rows of im2col: C/group * kh * kw */
    int64_t pixels;                 /* out_h * out_w, per image */
    int direct;                     /* GEMM straight on the input, no im2col */
    int depthwise;                  /* one input channel per group, group > 1 */
    int64_t chunk;                  /* output pixels per im2col chunk (>= 1) */
    int64_t slots;                  /* whole-image matrices in the forward
                                       workspace (>= 1; 1 when chunk < pixels) */
} dfg_conv_geometry;

/* Fills *g from the conv2d attributes and the types of x [N,C,H,W], the
 * weights [M,C/group,kh,kw] and y [N,M,OH,OW] (as the shape rule made it).
 * DFG_ERR_SHAPE / _INVALID_ARGUMENT / _OVERFLOW with a message if they do
 * not fit together. */
dfg_status dfg_conv_geometry_make(const dfg_attrs *attrs, const dfg_type *x,
                                  const dfg_type *w, const dfg_type *y,
                                  dfg_conv_geometry *g);

/* Refits chunk and slots to an im2col scratch of im2col_bytes (f32), as
 * dfg_conv_geometry_make does to DFG_CONV_IM2COL_BUDGET_BYTES. */
void dfg_conv_geometry_fit(dfg_conv_geometry *g, int64_t im2col_bytes);

/* Output pixels of the least chunk: one output row (>= 1). */
int64_t dfg_conv_least_columns(const dfg_conv_geometry *g);

/* Bytes of the im2col chunk buffer: 0 for a direct conv, else
 * k * chunk * sizeof(float). */
int64_t dfg_conv_workspace_bytes(const dfg_conv_geometry *g);

/* Bytes of the forward conv2d step's workspace (its op table rule): 0 for
 * a depthwise conv, which runs as a direct stencil, else `slots` im2col
 * chunks (a backend may use just the first). */
int64_t dfg_conv_forward_workspace_bytes(const dfg_conv_geometry *g);

/* The least forward workspace the kernels work with: 0 where the full one
 * is 0, else one least chunk (k * dfg_conv_least_columns floats, at most
 * the full chunk); g as dfg_conv_geometry_make made it. */
int64_t dfg_conv_forward_least_workspace_bytes(const dfg_conv_geometry *g);

/* 1 if a conv2d with these operands (its inputs in[0..n_in), absent
 * ones of rank -1, and outputs) may write y over x's bytes: a depthwise
 * conv with one filter per group, stride 1, y of x's type, both plain,
 * and no residual (input 3, which a sum post-op loads into y before the
 * stencil reads x). Each output row then reads input rows from pad_top
 * rows above it on, so a plane's output rows can be held back in a ring
 * of pad_top + 1 rows and written over input rows no later output row
 * reads. The alias pass plans such an output over a dying x only where
 * the step runs dfg's kernel, and the loader accepts exactly these
 * overlaps (dfg_op_may_write_over_input). */
int dfg_conv_may_write_over_x(const dfg_attrs *attrs, const dfg_type *in,
                              int32_t n_in, const dfg_type *out,
                              int32_t n_out);

/* Rows of one plane's ring when y is written over x: min(pad_top + 1,
 * out_h). */
int64_t dfg_conv_in_place_ring_rows(const dfg_conv_geometry *g);

/* The workspace of a conv2d step writing y over x
 * (dfg_conv_may_write_over_x): min(planes, DFG_CONV_IN_PLACE_SLOTS)
 * slots of one ring (f32) each. */
int64_t dfg_conv_in_place_workspace_bytes(const dfg_conv_geometry *g);

#endif
