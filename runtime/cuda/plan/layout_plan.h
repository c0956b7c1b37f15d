/* Host side of the data-movement ops on the CUDA backend: each op's
 * operands turned into the strided copies, fills and gathers of
 * layout_ops.h, from the geometry the CPU kernels use too
 * (layout_geometry.h). Plain C, tested on the CPU by running the copies
 * through dfg_cuda_strided_offsets and comparing with the CPU backend. */
#ifndef DFG_CUDA_LAYOUT_PLAN_H
#define DFG_CUDA_LAYOUT_PLAN_H

#include "ir/geometry/conv_geometry.h"
#include "ir/geometry/layout_geometry.h"
#include "runtime/cuda/kernels/layout_ops.h"
#include "ir/tensor_type.h"
#include "runtime/step_args.h"

/* A copy over dims between two strided layouts, with size-1 dims dropped
 * and neighbours both layouts walk as one merged. */
void dfg_cuda_strided_copy_make(int32_t rank, const int64_t *dims,
                                const int64_t *src_strides,
                                const int64_t *dst_strides,
                                int64_t element_size,
                                dfg_cuda_strided_copy *out);

/* The copy of each op; *src_at / *dst_at receive element offsets to add
 * to the input / output pointers. */
dfg_status dfg_cuda_transpose_plan(const dfg_attrs *attrs, const dfg_type *in,
                                   const dfg_type *out,
                                   dfg_cuda_strided_copy *copy);
dfg_status dfg_cuda_slice_plan(const dfg_attrs *attrs, const dfg_type *in,
                               const dfg_type *out, int64_t *src_at,
                               dfg_cuda_strided_copy *copy);
/* Numpy broadcast of in to out (expand, and gemm's C into its output). */
dfg_status dfg_cuda_expand_plan(const dfg_type *in, const dfg_type *out,
                                dfg_cuda_strided_copy *copy);
/* pad: fill the output with *fill (pad_value as the dtype's bits, as
 * cast converts it), then copy the input to its interior at *dst_at. */
dfg_status dfg_cuda_pad_plan(const dfg_attrs *attrs, const dfg_type *in,
                             const dfg_type *out, uint64_t *fill,
                             int64_t *dst_at, dfg_cuda_strided_copy *copy);

/* Part i of a concat (to_whole) or split step's parts along axis (its
 * dfg_parts_check'ed one), which starts at *pos in the whole: the copy
 * into or out of the whole, *whole_at the whole's offset; *pos moves past
 * it. An nhwc whole (concat along the channels) is walked as the
 * [N, H, W, C] tensor it is, along its last dim. */
void dfg_cuda_step_part(const dfg_kernel_args *a, int to_whole, int32_t axis,
                        int32_t i, int64_t *pos, int64_t *whole_at,
                        dfg_cuda_strided_copy *copy);

/* gather of data along attrs.axis by indices (i32 or i64). */
dfg_status dfg_cuda_gather_plan(const dfg_attrs *attrs, const dfg_type *data,
                                const dfg_type *indices, const dfg_type *out,
                                int32_t step, dfg_cuda_gather *gather);

/* reorder of a 4-D tensor between plain (NCHW) and nhwc, either way; any
 * other layout is refused by name. */
dfg_status dfg_cuda_reorder_plan(const dfg_type *in, const dfg_type *out,
                                 dfg_cuda_strided_copy *copy);

/* conv2d's bias [M] broadcast to y [N, M, OH, OW]. */
void dfg_cuda_conv_bias_plan(const dfg_conv_geometry *g, int64_t element_size,
                             dfg_cuda_strided_copy *copy);

#endif
