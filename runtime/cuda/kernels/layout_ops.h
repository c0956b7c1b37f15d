/* Data movement on the CUDA backend, one output element at a time:
 *   - a strided copy between two layouts of the same dims, under
 *     transpose, slice, expand, pad, concat, split and the broadcast of a
 *     bias (gemm's C, conv2d's bias) into an output;
 *   - gather, whose indices are only known on the device: an index out of
 *     range writes zero bits and raises the session's status word, which
 *     synchronize() turns into an error naming the step;
 *   - the im2col chunk of a convolution (src/math/im2col.h), and the
 *     col2im that adds a chunk back into an input gradient.
 * Host code fills the parameter structs (layout_plan.c); the kernels
 * (layout.cu, conv.cu) are grid-stride loops around the functions here. */
#ifndef DFG_CUDA_LAYOUT_OPS_H
#define DFG_CUDA_LAYOUT_OPS_H

#include "math/im2col.h"
#include "math/index_split.h"
#include "runtime/cuda/kernels/element_access.h"

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
    int index32;               /* n fits 32-bit index arithmetic */
} dfg_cuda_strided_copy;

/* Source and destination element offsets of element `linear`; narrow is
 * c->index32, a constant in a kernel instantiated for it
 * (math/index_split.h). */
DFG_HOST_DEVICE static inline void
dfg_cuda_strided_offsets(const dfg_cuda_strided_copy *c, int64_t linear,
                         int narrow, int64_t *src, int64_t *dst)
{
    int64_t s = 0, d = 0;
    for (int32_t i = c->rank - 1; i >= 0; i--) {
        int64_t index = dfg_index_split(&linear, c->dims[i], narrow);
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

/* Element i of an i32 or i64 index tensor, made non-negative against an
 * axis of dim (ONNX's negative indices count from its end); -1 if it lies
 * outside [-dim, dim). */
DFG_HOST_DEVICE static inline int64_t dfg_cuda_index_at(const void *indices,
                                                        dfg_dtype dtype,
                                                        int64_t i, int64_t dim)
{
    int64_t k = dtype == DFG_I32 ? ((const int32_t *)indices)[i]
                                 : ((const int64_t *)indices)[i];
    if (k < -dim || k >= dim)
        return -1;
    return k < 0 ? k + dim : k;
}

/* Source element of output element i, or -1 when its index is out of
 * range for the gathered axis. gather_grad walks the same map backwards:
 * dy element i adds into the data element this returns. */
DFG_HOST_DEVICE static inline int64_t
dfg_cuda_gather_source(const dfg_cuda_gather *g, const void *indices,
                       int64_t i)
{
    int64_t within = i % g->inner, t = i / g->inner;
    int64_t j = t % g->n_indices, outer = t / g->n_indices;
    int64_t k = dfg_cuda_index_at(indices, g->index_dtype, j, g->dim);
    if (k < 0)
        return -1;
    return (outer * g->dim + k) * g->inner + within;
}

/* The im2col chunks [k, cols] for output pixels [first_pixel, .. + cols)
 * of `units` (image, group) pairs, side by side: unit u is image
 * u / groups and group u % groups of the batch, whose input starts
 * u / groups * image_stride + u % groups * group_stride elements from x.
 * In the input's dtype (element_size bytes; zero bits are 0.0). */
typedef struct dfg_cuda_im2col {
    dfg_im2col_dims dims;
    int64_t rows, cols, first_pixel;
    int64_t element_size;
    int64_t units, groups;           /* >= 1 */
    int64_t image_stride, group_stride;
    int index32;                     /* dfg_cuda_im2col_narrow */
} dfg_cuda_im2col;

/* Entries of all the chunks. */
DFG_HOST_DEVICE static inline int64_t
dfg_cuda_im2col_entries(const dfg_cuda_im2col *c)
{
    return c->units * c->rows * c->cols;
}

/* Whether the chunks' index arithmetic fits 32 bits: their entries and
 * the pixels of an image. */
DFG_HOST_DEVICE static inline int
dfg_cuda_im2col_narrow(const dfg_cuda_im2col *c)
{
    return dfg_index_fits_narrow(dfg_cuda_im2col_entries(c)) &&
           dfg_index_fits_narrow(c->dims.out_h * c->dims.out_w);
}

/* Entry i (row-major over [units, rows, cols]) of the chunks; narrow is
 * c->index32, a constant in a kernel instantiated for it. */
DFG_HOST_DEVICE static inline void
dfg_cuda_im2col_element(const dfg_cuda_im2col *c, const void *x, void *col,
                        int64_t i, int narrow)
{
    int64_t unit = i;
    int64_t j = dfg_index_split(&unit, c->cols, narrow);
    int64_t row = dfg_index_split(&unit, c->rows, narrow);
    int64_t group = dfg_index_split(&unit, c->groups, narrow), image = unit;
    int64_t src = dfg_im2col_source(&c->dims, row, c->first_pixel + j, narrow);
    x = (const char *)x + (image * c->image_stride + group * c->group_stride) *
                              c->element_size;
    const uint64_t zero = 0;
    if (src >= 0)
        dfg_cuda_copy_element(col, i, x, src, c->element_size);
    else
        dfg_cuda_copy_element(col, i, &zero, 0, c->element_size);
}

/* conv2d_grad_input's col2im: the chunk [k, cols] of col = w^T dy added
 * back into the group's input gradient [C/group, in_h, in_w]. */
typedef struct dfg_cuda_col2im {
    dfg_im2col_dims dims;
    int64_t inputs;            /* C/group * in_h * in_w */
    int64_t cols, first_pixel;
} dfg_cuda_col2im;

/* Input-gradient element i plus every chunk entry read from it, added in
 * ascending im2col row, the order in which the CPU kernel's row-major walk
 * of the chunk adds them (each row reads an element at most once). */
DFG_HOST_DEVICE static inline float
dfg_cuda_col2im_element(const dfg_cuda_col2im *c, const float *col,
                        int64_t i, float value)
{
    const dfg_im2col_dims *d = &c->dims;
    int64_t ix = i % d->in_w, rest = i / d->in_w;
    int64_t iy = rest % d->in_h, channel = rest / d->in_h;
    for (int64_t ty = 0; ty < d->kernel_h; ty++) {
        int64_t sy = iy + d->pad_top - ty * d->dilation_h;
        if (sy < 0 || sy % d->stride_h != 0 || sy / d->stride_h >= d->out_h)
            continue;
        for (int64_t tx = 0; tx < d->kernel_w; tx++) {
            int64_t sx = ix + d->pad_left - tx * d->dilation_w;
            if (sx < 0 || sx % d->stride_w != 0 ||
                sx / d->stride_w >= d->out_w)
                continue;
            int64_t j = (sy / d->stride_h) * d->out_w + sx / d->stride_w -
                        c->first_pixel;
            if (j < 0 || j >= c->cols)
                continue;
            int64_t row = (channel * d->kernel_h + ty) * d->kernel_w + tx;
            value += col[row * c->cols + j];
        }
    }
    return value;
}

#endif
