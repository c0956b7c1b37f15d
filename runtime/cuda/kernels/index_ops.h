/* The index-driven ops the ONNX front end added, one element at a time:
 * arg_max / arg_min (one output per thread, walking its row),
 * gather_elements and scatter_nd (an index out of range raises the
 * session's status word, as gather does, instead of reading or writing
 * outside a buffer). Host code fills the structs (step_plan_extra.c); the
 * kernels (index.cu) are grid-stride loops around these functions, which
 * the CPU tests run against the CPU backend. */
#ifndef DFG_CUDA_INDEX_OPS_H
#define DFG_CUDA_INDEX_OPS_H

#include "runtime/cuda/kernels/layout_ops.h"

/* The input seen as [outer, n, inner]; one output per (outer, inner). */
typedef struct dfg_cuda_arg_reduce {
    int want_max;
    dfg_dtype dtype;
    int64_t outputs, n, inner;
} dfg_cuda_arg_reduce;

/* The index along the axis of output i's first extreme, as the CPU kernel
 * finds it: values compared in double, NaN never greater nor smaller, so
 * the first non-NaN extreme wins over a leading NaN. */
DFG_HOST_DEVICE static inline int64_t
dfg_cuda_arg_reduce_element(const dfg_cuda_arg_reduce *p, const void *in,
                            int64_t i)
{
    int64_t outer = i / p->inner, lane = i - outer * p->inner;
    int64_t base = outer * p->n * p->inner + lane, best = 0;
    int integer = dfg_cuda_is_integer(p->dtype);
    double best_value = 0.0;
    for (int64_t k = 0; k < p->n; k++) {
        int64_t at = base + k * p->inner;
        double v = integer ? (double)dfg_cuda_load_i64(in, p->dtype, at)
                           : (double)dfg_cuda_load_f32(in, p->dtype, at);
        if (k == 0 || (p->want_max ? v > best_value : v < best_value) ||
            (best_value != best_value && v == v)) {
            best = k;
            best_value = v;
        }
    }
    return best;
}

/* gather_elements: out[p] = data[p with p[axis] = indices[p]]. */
typedef struct dfg_cuda_gather_elements {
    int32_t rank, axis;
    int64_t n;                          /* output (= indices) elements */
    int64_t index_dims[DFG_MAX_RANK];
    int64_t data_strides[DFG_MAX_RANK];
    int64_t dim;                        /* data's size along axis */
    int64_t element_size;
    dfg_dtype index_dtype;
    int32_t step;
} dfg_cuda_gather_elements;

/* Data element read by output element i, or -1 (index out of range). */
DFG_HOST_DEVICE static inline int64_t
dfg_cuda_gather_elements_source(const dfg_cuda_gather_elements *p,
                                const void *indices, int64_t i)
{
    int64_t k = dfg_cuda_index_at(indices, p->index_dtype, i, p->dim);
    if (k < 0)
        return -1;
    int64_t offset = 0, rest = i;
    for (int32_t d = p->rank - 1; d >= 0; d--) {
        int64_t position = rest % p->index_dims[d];
        rest /= p->index_dims[d];
        offset += (d == p->axis ? k : position) * p->data_strides[d];
    }
    return offset;
}

/* scatter_nd: the output is data (copied first), then each of `tuples`
 * index tuples of k entries names a slice of `slice` elements that the
 * matching slice of updates replaces. */
typedef struct dfg_cuda_scatter_nd {
    int64_t n;                          /* update elements: tuples * slice */
    int64_t k, slice;
    int64_t data_dims[DFG_MAX_RANK];
    int64_t data_strides[DFG_MAX_RANK];
    int64_t element_size;
    int64_t data_bytes;                 /* the copy of data into the output */
    dfg_dtype index_dtype;
    int32_t step;
} dfg_cuda_scatter_nd;

/* Output element written by update element i, or -1 (index out of
 * range). Tuples naming the same slice race on the device; ONNX leaves
 * their order undefined (the CPU kernel applies them in turn). */
DFG_HOST_DEVICE static inline int64_t
dfg_cuda_scatter_nd_target(const dfg_cuda_scatter_nd *p, const void *indices,
                           int64_t i)
{
    int64_t tuple = i / p->slice, within = i - tuple * p->slice;
    int64_t offset = within;
    for (int64_t j = 0; j < p->k; j++) {
        int64_t v = dfg_cuda_index_at(indices, p->index_dtype, tuple * p->k + j,
                                      p->data_dims[j]);
        if (v < 0)
            return -1;
        offset += v * p->data_strides[j];
    }
    return offset;
}

#endif
