/* The index arithmetic of the data-movement ops (transpose, slice, expand,
 * pad, concat, split, gather), written once for every backend: each op's
 * operand types and attributes are checked and turned into a strided copy
 * (or a gather's [outer, dim, inner] view), which the CPU kernels run with
 * a loop and the CUDA backend hands to its kernels. Both backends thus
 * accept and reject the same steps with the same messages. Plain C over
 * dfg_type; every pointer is borrowed for the call. */
#ifndef DFG_LAYOUT_GEOMETRY_H
#define DFG_LAYOUT_GEOMETRY_H

#include <stdint.h>

#include "dfg/attrs.h"
#include "dfg/status.h"
#include "ir/tensor_type.h"

/* A copy over dims between two strided layouts: element (i0, ..) of the
 * walk is read at src_at + sum(i_d * src_strides[d]) elements from the
 * source and written at dst_at + sum(i_d * dst_strides[d]) from the
 * destination. Strides may be 0 (broadcast) or negative (a reversed
 * slice). */
typedef struct dfg_copy_geometry {
    int32_t rank;
    int64_t dims[DFG_MAX_RANK];
    int64_t src_strides[DFG_MAX_RANK];
    int64_t dst_strides[DFG_MAX_RANK];
    int64_t src_at, dst_at;
} dfg_copy_geometry;

/* Row-major element strides of a contiguous tensor of dims. */
void dfg_contiguous_strides(int32_t rank, const int64_t *dims,
                            int64_t *strides);

/* Drops size-1 dims and merges neighbours that both layouts walk as one,
 * so that the innermost run is as long as the layouts allow. Writes the
 * merged dims and strides (at most rank of them) and returns their count,
 * at least 1: a single element is one dim of 1 with strides 0. */
int32_t dfg_copy_dims_merge(int32_t rank, const int64_t *dims,
                            const int64_t *src_strides,
                            const int64_t *dst_strides, int64_t *merged_dims,
                            int64_t *merged_src, int64_t *merged_dst);

/* transpose: output dim i is input dim perm[i] (attrs->shape; reversed
 * when empty). */
dfg_status dfg_transpose_geometry(const dfg_attrs *attrs, const dfg_type *in,
                                  const dfg_type *out, dfg_copy_geometry *g);

/* slice with ONNX's clamping of starts and ends (dfg_slice_range) and any
 * non-zero steps. */
dfg_status dfg_slice_geometry(const dfg_attrs *attrs, const dfg_type *in,
                              const dfg_type *out, dfg_copy_geometry *g);

/* Numpy broadcast of in to out (expand, gemm's C into its output). The
 * message names no op: callers prefix it. */
dfg_status dfg_expand_geometry(const dfg_type *in, const dfg_type *out,
                               dfg_copy_geometry *g);

/* pad, constant mode: the copy of the input into the output's interior
 * (attrs->pads: the begins of every axis, then the ends); the caller
 * fills the rest with pad_value. */
dfg_status dfg_pad_geometry(const dfg_attrs *attrs, const dfg_type *in,
                            const dfg_type *out, dfg_copy_geometry *g);

/* concat / split: checks that parts[0..n) fit the whole along axis (same
 * rank and dtype, other dims equal, lengths summing up) and normalises
 * the axis. op names the op in messages. */
dfg_status dfg_parts_check(const char *op, const dfg_type *whole,
                           const dfg_type *parts, int32_t n, int64_t axis,
                           int32_t *axis_out);

/* The copy of one part of length part_len at position at along axis (as
 * [outer, part_len * inner] rows of the whole's [outer, whole_len *
 * inner]), into the whole (to_whole) or out of it. */
void dfg_part_geometry(const dfg_type *whole, int32_t axis, int64_t at,
                       int64_t part_len, int to_whole, dfg_copy_geometry *g);

/* gather: data seen as [outer, dim, inner] along the normalised axis, the
 * output as [outer, n_indices, inner]. */
typedef struct dfg_gather_geometry {
    int32_t axis;
    int64_t outer, dim, inner, n_indices;
} dfg_gather_geometry;

/* Checks the types of gather (i32 or i64 indices, the output's dtype and
 * dims) and fills *g; the indices' values are the backend's to check. */
dfg_status dfg_gather_geometry_make(const dfg_attrs *attrs,
                                    const dfg_type *data,
                                    const dfg_type *indices,
                                    const dfg_type *out,
                                    dfg_gather_geometry *g);

#endif
