/* resize and top_k on the CUDA backend, one element at a time:
 *   resize: each output element finds its taps along every axis with
 *     src/math/resize_coords.h (the CPU kernel's arithmetic) and copies
 *     the nearest one or weighs them (f32, accumulated in double, in the
 *     CPU kernel's order);
 *   top_k: an element's rank in its slice is how many elements rank
 *     before it (the CPU kernel's order: by value, NaN last, ties to the
 *     lower index, so ranks are distinct); sorted output puts each of the
 *     k best at its rank, one thread per element, and unsorted output
 *     walks the slice in input order, one thread per slice. O(n) per
 *     element: made for the small k and n of ONNX models' TopK.
 * Host code fills the structs (step_plan_index.c); the kernels
 * (index.cu) are grid-stride loops around these functions, which the CPU
 * tests run against the CPU backend. */
#ifndef DFG_CUDA_SAMPLING_OPS_H
#define DFG_CUDA_SAMPLING_OPS_H

#include "dfg/attrs.h"
#include "math/resize_coords.h"
#include "runtime/cuda/kernels/element_access.h"

typedef struct dfg_cuda_resize {
    dfg_attrs attrs;                  /* the step's: mode, coordinates, .. */
    dfg_dtype dtype;
    int nearest;
    int32_t rank;
    int64_t n;                        /* output elements */
    int64_t element_size;
    int64_t out_dims[DFG_MAX_RANK], in_dims[DFG_MAX_RANK];
    int64_t in_strides[DFG_MAX_RANK];
    double scale[DFG_MAX_RANK];
} dfg_cuda_resize;

/* Output element e. */
DFG_HOST_DEVICE static inline void
dfg_cuda_resize_element(const dfg_cuda_resize *p, const void *in, void *out,
                        int64_t e)
{
    dfg_resize_taps taps[DFG_MAX_RANK];
    int32_t t[DFG_MAX_RANK];
    int64_t rest = e, offset = 0;
    for (int32_t d = p->rank - 1; d >= 0; d--) {
        dfg_resize_axis_taps(&p->attrs, rest % p->out_dims[d], p->scale[d],
                             p->in_dims[d], &taps[d]);
        rest /= p->out_dims[d];
        t[d] = 0;
        if (taps[d].n == 0) { /* every tap excluded: nothing to weigh */
            dfg_cuda_store_f32(out, p->dtype, e, 0.0f);
            return;
        }
        offset += taps[d].index[0] * p->in_strides[d];
    }
    if (p->nearest) {
        dfg_cuda_copy_element(out, e, in, offset, p->element_size);
        return;
    }
    double acc = 0.0;
    for (;;) {
        double weight = 1.0;
        offset = 0;
        for (int32_t d = 0; d < p->rank; d++) {
            weight *= taps[d].weight[t[d]];
            offset += taps[d].index[t[d]] * p->in_strides[d];
        }
        acc += weight * dfg_cuda_load_f32(in, p->dtype, offset);
        int32_t d = p->rank - 1;
        while (d >= 0 && ++t[d] == taps[d].n)
            t[d--] = 0;
        if (d < 0)
            break;
    }
    dfg_cuda_store_f32(out, p->dtype, e, (float)acc);
}

typedef struct dfg_cuda_top_k {
    dfg_dtype dtype;
    int largest, sorted;
    int64_t slices;                   /* outer * inner */
    int64_t n, inner, k;
    int64_t element_size;
} dfg_cuda_top_k;

/* First input element of slice s, and its first output slot. */
DFG_HOST_DEVICE static inline void dfg_cuda_top_k_slice(const dfg_cuda_top_k *p,
                                                        int64_t s,
                                                        int64_t *base,
                                                        int64_t *base_out)
{
    int64_t outer = s / p->inner, lane = s - outer * p->inner;
    *base = outer * p->n * p->inner + lane;
    *base_out = outer * p->k * p->inner + lane;
}

/* 1 if element i of the slice at base ranks before element j. */
DFG_HOST_DEVICE static inline int
dfg_cuda_top_k_before(const dfg_cuda_top_k *p, const void *in, int64_t base,
                      int64_t i, int64_t j)
{
    int64_t at_i = base + i * p->inner, at_j = base + j * p->inner;
    if (dfg_cuda_is_integer(p->dtype)) {
        int64_t vi = dfg_cuda_load_i64(in, p->dtype, at_i);
        int64_t vj = dfg_cuda_load_i64(in, p->dtype, at_j);
        if (vi != vj)
            return p->largest ? vi > vj : vi < vj;
        return i < j;
    }
    float vi = dfg_cuda_load_f32(in, p->dtype, at_i);
    float vj = dfg_cuda_load_f32(in, p->dtype, at_j);
    if (vi != vi || vj != vj) /* NaN last, NaNs by index */
        return vj != vj && (vi == vi || i < j);
    if (vi != vj)
        return p->largest ? vi > vj : vi < vj;
    return i < j;
}

/* How many elements of the slice rank before element i. */
DFG_HOST_DEVICE static inline int64_t
dfg_cuda_top_k_rank(const dfg_cuda_top_k *p, const void *in, int64_t base,
                    int64_t i)
{
    int64_t rank = 0;
    for (int64_t j = 0; j < p->n; j++)
        rank += dfg_cuda_top_k_before(p, in, base, j, i);
    return rank;
}

/* Element i of the slice into output slot `slot`: its value and index. */
DFG_HOST_DEVICE static inline void
dfg_cuda_top_k_write(const dfg_cuda_top_k *p, const void *in, void *values,
                     int64_t *indices, int64_t base, int64_t base_out,
                     int64_t i, int64_t slot)
{
    int64_t at = base_out + slot * p->inner;
    dfg_cuda_copy_element(values, at, in, base + i * p->inner,
                          p->element_size);
    indices[at] = i;
}

/* Unsorted output: the slice's k best in input order. */
DFG_HOST_DEVICE static inline void
dfg_cuda_top_k_unsorted_slice(const dfg_cuda_top_k *p, const void *in,
                              void *values, int64_t *indices, int64_t s)
{
    int64_t base, base_out, slot = 0;
    dfg_cuda_top_k_slice(p, s, &base, &base_out);
    for (int64_t i = 0; i < p->n && slot < p->k; i++)
        if (dfg_cuda_top_k_rank(p, in, base, i) < p->k)
            dfg_cuda_top_k_write(p, in, values, indices, base, base_out, i,
                                 slot++);
}

/* Sorted output, element e of slices * n: written at its rank when among
 * the k best. */
DFG_HOST_DEVICE static inline void
dfg_cuda_top_k_sorted_element(const dfg_cuda_top_k *p, const void *in,
                              void *values, int64_t *indices, int64_t e)
{
    int64_t s = e / p->n, i = e - s * p->n, base, base_out;
    dfg_cuda_top_k_slice(p, s, &base, &base_out);
    int64_t rank = dfg_cuda_top_k_rank(p, in, base, i);
    if (rank < p->k)
        dfg_cuda_top_k_write(p, in, values, indices, base, base_out, i, rank);
}

#endif
