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

/* The offsets in elements, in src (*src_at) and dst (*dst_at), of index
 * `at` of the row-major walk over dims d[0..n). */
static void walk_offsets(int32_t n, const int64_t *d, const int64_t *ss,
                         const int64_t *ds, int64_t at, int64_t *src_at,
                         int64_t *dst_at)
{
    int64_t s = 0, t = 0;
    for (int32_t i = n - 1; i >= 0; i--) {
        int64_t index = at % d[i];
        at /= d[i];
        s += index * ss[i];
        t += index * ds[i];
    }
    *src_at = s;
    *dst_at = t;
}

/* A transpose of the two innermost dims (src runs along dst's rows,
 * dst along its own): square tiles, so that the source lines a tile
 * reads, one per column, are read whole before they leave the cache
 * (row by row, each element of a dst row is a source line of its own;
 * vit_b_16's K^T, [197, 12, 64] -> [12, 64, 197], took 3x as long). */
#define TILE 16

static void copy_tiles(char *dst, int64_t dst_row, const char *src,
                       int64_t src_column, int64_t rows, int64_t columns,
                       size_t size)
{
    for (int64_t j0 = 0; j0 < columns; j0 += TILE) {
        int64_t n = columns - j0 < TILE ? columns - j0 : TILE;
        for (int64_t i = 0; i < rows; i++)
            copy_run(dst + (i * dst_row + j0) * (int64_t)size, 1,
                     src + (i + j0 * src_column) * (int64_t)size, src_column,
                     n, size);
    }
}

static void strided_copy_tiled(int32_t r, const int64_t *d, const int64_t *ss,
                               const int64_t *ds, const dfg_strided *src,
                               const dfg_strided *dst, size_t elem_size,
                               int64_t total)
{
    int64_t rows = d[r - 2], columns = d[r - 1];
    int64_t bands = (rows + TILE - 1) / TILE, outer = total / (rows * columns);
#pragma omp parallel for if (total >= DFG_CPU_PARALLEL_MIN_ELEMENTS)
    for (int64_t t = 0; t < outer * bands; t++) {
        int64_t src_at, dst_at;
        walk_offsets(r - 2, d, ss, ds, t / bands, &src_at, &dst_at);
        int64_t i0 = t % bands * TILE;
        copy_tiles(dst->base + (dst_at + i0 * ds[r - 2]) * (int64_t)elem_size,
                   ds[r - 2], src->base + (src_at + i0) * (int64_t)elem_size,
                   ss[r - 1], rows - i0 < TILE ? rows - i0 : TILE, columns,
                   elem_size);
    }
}

void dfg_cpu_strided_copy(int32_t rank, const int64_t *dims,
                          const dfg_strided *src, const dfg_strided *dst,
                          size_t elem_size)
{
    int64_t total = 1;
    for (int32_t i = 0; i < rank; i++) {
        if (dims[i] == 0)
            return;
        total *= dims[i];
    }
    int64_t d[DFG_MAX_RANK], ss[DFG_MAX_RANK], ds[DFG_MAX_RANK];
    int32_t r = dfg_copy_dims_merge(rank, dims, src->strides, dst->strides, d,
                                    ss, ds);
    if (r >= 2 && ds[r - 1] == 1 && ss[r - 1] != 1 && ss[r - 2] == 1) {
        strided_copy_tiled(r, d, ss, ds, src, dst, elem_size, total);
        return;
    }
    int64_t inner = d[r - 1], rows = total / inner;
#pragma omp parallel for if (total >= DFG_CPU_PARALLEL_MIN_ELEMENTS)
    for (int64_t row = 0; row < rows; row++) {
        int64_t src_at, dst_at;
        walk_offsets(r - 1, d, ss, ds, row, &src_at, &dst_at);
        copy_run(dst->base + dst_at * (int64_t)elem_size, ds[r - 1],
                 src->base + src_at * (int64_t)elem_size, ss[r - 1], inner,
                 elem_size);
    }
}

void dfg_cpu_copy_geometry_run(const dfg_copy_geometry *g, const void *src,
                               void *dst, size_t elem_size)
{
    dfg_strided from = {(char *)src + g->src_at * (int64_t)elem_size, {0}};
    dfg_strided to = {(char *)dst + g->dst_at * (int64_t)elem_size, {0}};
    memcpy(from.strides, g->src_strides, sizeof from.strides);
    memcpy(to.strides, g->dst_strides, sizeof to.strides);
    dfg_cpu_strided_copy(g->rank, g->dims, &from, &to, elem_size);
}
