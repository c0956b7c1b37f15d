/* Strided element copy (see strided_copy.h). */
#include "strided_copy.h"

#include <string.h>

#include "parallel.h"

/* n elements of a fixed size; size is a constant after inlining, so each
 * memcpy is one load and one store. */
static inline void copy_run_sized(char *dst, int64_t dst_stride,
                                  const char *src, int64_t src_stride,
                                  int64_t n, size_t size)
{
    for (int64_t i = 0; i < n; i++)
        memcpy(dst + i * dst_stride * (int64_t)size,
               src + i * src_stride * (int64_t)size, size);
}

static void copy_run(char *dst, int64_t dst_stride, const char *src,
                     int64_t src_stride, int64_t n, size_t size)
{
    if (dst_stride == 1 && src_stride == 1) {
        memcpy(dst, src, (size_t)n * size);
        return;
    }
    switch (size) {
    case 1: copy_run_sized(dst, dst_stride, src, src_stride, n, 1); break;
    case 2: copy_run_sized(dst, dst_stride, src, src_stride, n, 2); break;
    case 4: copy_run_sized(dst, dst_stride, src, src_stride, n, 4); break;
    case 8: copy_run_sized(dst, dst_stride, src, src_stride, n, 8); break;
    default: copy_run_sized(dst, dst_stride, src, src_stride, n, size); break;
    }
}

void dfg_cpu_contiguous_strides(int32_t rank, const int64_t *dims,
                                int64_t *strides)
{
    int64_t s = 1;
    for (int32_t d = rank - 1; d >= 0; d--) {
        strides[d] = s;
        s *= dims[d];
    }
}

void dfg_cpu_strided_copy(int32_t rank, const int64_t *dims,
                          const dfg_strided *src, const dfg_strided *dst,
                          size_t elem_size)
{
    /* Drop size-1 dims and merge neighbours that both sides walk as one,
     * so that the innermost run is as long as the layouts allow. */
    int64_t d[DFG_MAX_RANK], ss[DFG_MAX_RANK], ds[DFG_MAX_RANK];
    int32_t r = 0;
    int64_t total = 1;
    for (int32_t i = 0; i < rank; i++) {
        if (dims[i] == 0)
            return;
        total *= dims[i];
        if (dims[i] == 1)
            continue;
        if (r > 0 && ss[r - 1] == src->strides[i] * dims[i] &&
            ds[r - 1] == dst->strides[i] * dims[i]) {
            d[r - 1] *= dims[i];
        } else {
            d[r] = dims[i];
            r++;
        }
        ss[r - 1] = src->strides[i];
        ds[r - 1] = dst->strides[i];
    }
    if (r == 0) {
        d[0] = 1, ss[0] = 0, ds[0] = 0;
        r = 1;
    }
    int64_t inner = d[r - 1], rows = total / inner;
#pragma omp parallel for if (total >= DFG_CPU_PARALLEL_MIN_ELEMENTS)
    for (int64_t row = 0; row < rows; row++) {
        int64_t src_at = 0, dst_at = 0, rest = row;
        for (int32_t i = r - 2; i >= 0; i--) {
            int64_t index = rest % d[i];
            rest /= d[i];
            src_at += index * ss[i];
            dst_at += index * ds[i];
        }
        copy_run(dst->base + dst_at * (int64_t)elem_size, ds[r - 1],
                 src->base + src_at * (int64_t)elem_size, ss[r - 1], inner,
                 elem_size);
    }
}
