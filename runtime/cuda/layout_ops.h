/* Data movement on the CUDA backend, one output element at a time:
 *   - a strided copy between two layouts of the same dims, under
 *     transpose, slice, expand, pad, concat, split and the broadcast of a
 *     bias (gemm's C, conv2d's bias) into an output;
 *   - gather, whose indices are only known on the device: an index out of
 *     range writes zero bits and raises the session's status word, which
 *     synchronize() turns into an error naming the step;
 *   - the im2col chunk of a convolution (src/math/im2col.h).
 * Host code fills the parameter structs (layout_plan.c); the kernels
 * (layout.cu, im2col.cu) are grid-stride loops around the functions here. */
#ifndef DFG_CUDA_LAYOUT_OPS_H
#define DFG_CUDA_LAYOUT_OPS_H

#include "element_access.h"
#include "math/im2col.h"

/* dst[i] = src[i] over every index i of dims: element (i0, ..) is at
 * sum(i_d * strides[d]) elements from the base pointers. Dims are merged
 * where both layouts allow (dfg_cuda_strided_copy_make), so most copies
 * are rank 1 or 2. */
typedef struct dfg_cuda_strided_copy {
    int32_t rank;
    int64_t n;                 /* elements */
    int64_t element_size;
    int64_t dims[DFG_MAX_RANK];
    int64_t src_strides[DFG_MAX_RANK];
    int64_t dst_strides[DFG_MAX_RANK];
} dfg_cuda_strided_copy;

/* Source and destination element offsets of element `linear`. */
DFG_HOST_DEVICE static inline void
dfg_cuda_strided_offsets(const dfg_cuda_strided_copy *c, int64_t linear,
                         int64_t *src, int64_t *dst)
{
    int64_t s = 0, d = 0;
    for (int32_t i = c->rank - 1; i >= 0; i--) {
        int64_t index = linear % c->dims[i];
        linear /= c->dims[i];
        s += index * c->src_strides[i];
        d += index * c->dst_strides[i];
    }
    *src = s;
    *dst = d;
}

typedef struct dfg_cuda_gather {
    int64_t n;                 /* output elements */
    int64_t n_indices, dim, inner;
    int64_t element_size;
    dfg_dtype index_dtype;     /* i32 or i64 */
    int32_t step;              /* reported when an index is out of range */
} dfg_cuda_gather;

/* Source element of output element i, or -1 when its index is out of
 * range for the gathered axis. */
DFG_HOST_DEVICE static inline int64_t
dfg_cuda_gather_source(const dfg_cuda_gather *g, const void *indices,
                       int64_t i)
{
    int64_t within = i % g->inner, t = i / g->inner;
    int64_t j = t % g->n_indices, outer = t / g->n_indices;
    int64_t k = g->index_dtype == DFG_I32 ? ((const int32_t *)indices)[j]
                                          : ((const int64_t *)indices)[j];
    if (k < -g->dim || k >= g->dim)
        return -1;
    if (k < 0)
        k += g->dim;
    return (outer * g->dim + k) * g->inner + within;
}

/* The im2col chunk [k, cols] for output pixels [first_pixel, .. + cols),
 * in the input's dtype (element_size bytes; zero bits are 0.0). */
typedef struct dfg_cuda_im2col {
    dfg_im2col_dims dims;
    int64_t rows, cols, first_pixel;
    int64_t element_size;
} dfg_cuda_im2col;

/* Entry i (row-major over [rows, cols]) of the chunk. */
DFG_HOST_DEVICE static inline void
dfg_cuda_im2col_element(const dfg_cuda_im2col *c, const void *x, void *col,
                        int64_t i)
{
    int64_t row = i / c->cols, j = i - row * c->cols;
    int64_t src = dfg_im2col_source(&c->dims, row, c->first_pixel + j);
    const uint64_t zero = 0;
    if (src >= 0)
        dfg_cuda_copy_element(col, i, x, src, c->element_size);
    else
        dfg_cuda_copy_element(col, i, &zero, 0, c->element_size);
}

#endif
