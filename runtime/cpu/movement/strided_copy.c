/* Strided element copy (see strided_copy.h). */
#include "runtime/cpu/movement/strided_copy.h"

#include <string.h>

#include "runtime/cpu/parallel.h"
#include "runtime/cpu/elementwise/vector_clones.h"

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
 * `at` of the row-major walk over dims d[0..n), and (index, if not NULL)
 * its coordinates. */
static void walk_offsets(int32_t n, const int64_t *d, const int64_t *ss,
                         const int64_t *ds, int64_t at, int64_t *index,
                         int64_t *src_at, int64_t *dst_at)
{
    int64_t s = 0, t = 0;
    for (int32_t i = n - 1; i >= 0; i--) {
        int64_t coordinate = at % d[i];
        at /= d[i];
        s += coordinate * ss[i];
        t += coordinate * ds[i];
        if (index)
            index[i] = coordinate;
    }
    *src_at = s;
    *dst_at = t;
}

/* Rows [first, end) of the row-major walk over d[0..r - 1) (a row: d[r -
 * 1] elements along the innermost dim), copied one after the other: the
 * first row's offsets from its index, the next ones' by stepping the
 * indices as an odometer does (a row of 64 floats, vit_b_16's heads
 * moved about, cost less than the divisions that placed it). */
static void copy_rows(int32_t r, const int64_t *d, const int64_t *ss,
                      const int64_t *ds, const dfg_strided *src,
                      const dfg_strided *dst, size_t elem_size,
                      int64_t first, int64_t end)
{
    if (first >= end)
        return;
    int64_t index[DFG_MAX_RANK], src_at, dst_at;
    walk_offsets(r - 1, d, ss, ds, first, index, &src_at, &dst_at);
    for (int64_t row = first; row < end; row++) {
        copy_run(dst->base + dst_at * (int64_t)elem_size, ds[r - 1],
                 src->base + src_at * (int64_t)elem_size, ss[r - 1],
                 d[r - 1], elem_size);
        for (int32_t i = r - 2; i >= 0; i--) {
            src_at += ss[i];
            dst_at += ds[i];
            if (++index[i] < d[i])
                break;
            src_at -= ss[i] * d[i];
            dst_at -= ds[i] * d[i];
            index[i] = 0;
        }
    }
}

/* A transpose of the two innermost dims (src runs along dst's rows,
 * dst along its own): square tiles, so that the source lines a tile
 * reads, one per column, are read whole before they leave the cache
 * (row by row, each element of a dst row is a source line of its own;
 * vit_b_16's K^T, [197, 12, 64] -> [12, 64, 197], took 3x as long). */
#define TILE 16

typedef uint32_t lanes8 __attribute__((vector_size(32)));

/* dst[i * dst_row + j] = src[i + j * src_column] for i, j < 8, elements
 * of 4 bytes: eight row loads, three rounds of eight two-vector shuffles
 * (AVX2's unpack, shuffle and 128-bit permute), eight row stores, where
 * one element at a time is 64 loads and stores. */
DFG_VECTOR_LOOP(transpose_8x8_4,
                (char *dst, int64_t dst_row, const char *src,
                 int64_t src_column),
                (dst, dst_row, src, src_column))
{
    lanes8 a[8], t[8], u[8], v;
    for (int j = 0; j < 8; j++)
        memcpy(&a[j], src + j * src_column * 4, sizeof a[j]);
    for (int k = 0; k < 8; k += 2) {
        t[k] = __builtin_shufflevector(a[k], a[k + 1], 0, 8, 1, 9, 4, 12, 5,
                                       13);
        t[k + 1] = __builtin_shufflevector(a[k], a[k + 1], 2, 10, 3, 11, 6,
                                           14, 7, 15);
    }
    for (int k = 0; k < 8; k += 4)
        for (int h = 0; h < 2; h++) {
            u[k + 2 * h] = __builtin_shufflevector(t[k + h], t[k + h + 2], 0,
                                                   1, 8, 9, 4, 5, 12, 13);
            u[k + 2 * h + 1] = __builtin_shufflevector(
                t[k + h], t[k + h + 2], 2, 3, 10, 11, 6, 7, 14, 15);
        }
    for (int i = 0; i < 4; i++) {
        v = __builtin_shufflevector(u[i], u[i + 4], 0, 1, 2, 3, 8, 9, 10, 11);
        memcpy(dst + i * dst_row * 4, &v, sizeof v);
        v = __builtin_shufflevector(u[i], u[i + 4], 4, 5, 6, 7, 12, 13, 14,
                                    15);
        memcpy(dst + (i + 4) * dst_row * 4, &v, sizeof v);
    }
}

/* dst[i * C + j] = src[i + j * src_column] for i < rows, j < C: C
 * source rows interleaved into one contiguous run, elements of 4 bytes. */
#define INTERLEAVE(C)                                                       \
    for (int64_t i = 0; i < rows; i++)                                      \
        for (int64_t j = 0; j < (C); j++)                                   \
            dst[i * (C) + j] = src[i + j * src_column]

typedef uint32_t lanes16 __attribute__((vector_size(64)));

/* dst[0..24) = a0 b0 c0 a1 b1 c1 .. a7 b7 c7 from rows a, b, c: three
 * shuffles of 8 lanes out of a and b joined and c (the compiler does not
 * vectorize a group of three stores itself). */
static inline __attribute__((always_inline)) void
interleave_3x8(uint32_t *dst, const uint32_t *a_row, const uint32_t *b_row,
               const uint32_t *c_row)
{
    lanes8 a, b, c, o;
    memcpy(&a, a_row, sizeof a);
    memcpy(&b, b_row, sizeof b);
    memcpy(&c, c_row, sizeof c);
    lanes16 ab = __builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
                                         10, 11, 12, 13, 14, 15);
    lanes16 cc = __builtin_shufflevector(c, c, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1,
                                         2, 3, 4, 5, 6, 7);
    o = __builtin_shufflevector(ab, cc, 0, 8, 16, 1, 9, 17, 2, 10);
    memcpy(dst, &o, sizeof o);
    o = __builtin_shufflevector(ab, cc, 18, 3, 11, 19, 4, 12, 20, 5);
    memcpy(dst + 8, &o, sizeof o);
    o = __builtin_shufflevector(ab, cc, 13, 21, 6, 14, 22, 7, 15, 23);
    memcpy(dst + 16, &o, sizeof o);
}

/* INTERLEAVE for 2, 3 or 4 columns (a pixel shuffle's last step): the
 * loop over i vectorizes with the columns a constant; three columns by
 * interleave_3x8, eight rows' elements at a time. */
DFG_VECTOR_LOOP(interleave_4,
                (uint32_t *dst, const uint32_t *src, int64_t src_column,
                 int64_t rows, int64_t columns),
                (dst, src, src_column, rows, columns))
{
    if (columns == 3) {
        int64_t i = 0;
        for (; i + 8 <= rows; i += 8)
            interleave_3x8(dst + 3 * i, src + i, src + src_column + i,
                           src + 2 * src_column + i);
        for (; i < rows; i++)
            for (int64_t j = 0; j < 3; j++)
                dst[i * 3 + j] = src[i + j * src_column];
        return;
    }
    if (columns == 2)
        INTERLEAVE(2);
    else
        INTERLEAVE(4);
}

static void copy_tiles(char *dst, int64_t dst_row, const char *src,
                       int64_t src_column, int64_t rows, int64_t columns,
                       size_t size)
{
    if (size == 4 && columns >= 2 && columns <= 4 && dst_row == columns) {
        interleave_4((uint32_t *)(void *)dst,
                     (const uint32_t *)(const void *)src, src_column, rows,
                     columns);
        return;
    }
    for (int64_t j0 = 0; j0 < columns; j0 += TILE) {
        int64_t n = columns - j0 < TILE ? columns - j0 : TILE, i = 0;
        if (size == 4 && n % 8 == 0)
            for (; i + 8 <= rows; i += 8)
                for (int64_t j = j0; j < j0 + n; j += 8)
                    transpose_8x8_4(dst + (i * dst_row + j) * 4, dst_row,
                                    src + (i + j * src_column) * 4,
                                    src_column);
        for (; i < rows; i++)
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
        walk_offsets(r - 2, d, ss, ds, t / bands, NULL, &src_at, &dst_at);
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
    int64_t rows = total / d[r - 1];
#pragma omp parallel if (total >= DFG_CPU_PARALLEL_MIN_ELEMENTS)
    {
        int64_t first, end;
        dfg_cpu_team_share(rows, 1, &first, &end);
        copy_rows(r, d, ss, ds, src, dst, elem_size, first, end);
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
