/* Keys and exact checks for equal and transposed stored tensors
 * (weight_match.h). */
#include "passes/weight_match.h"

#include <string.h>

static uint64_t finalise(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* An element's bits (size 1, 2, 4 or 8 bytes), zero-extended. */
static uint64_t bits_of(const unsigned char *p, size_t size)
{
    uint64_t b = 0;
    switch (size) {
    case 1: b = p[0]; break;
    case 2: { uint16_t v; memcpy(&v, p, 2); b = v; break; }
    case 4: { uint32_t v; memcpy(&v, p, 4); b = v; break; }
    default: memcpy(&b, p, size < 8 ? size : 8); break;
    }
    return b;
}

#define ELEMENT_MIX 0xD6E8FEB86659FD93ull

uint64_t dfg_weight_type_key(const dfg_type *type, int transposed)
{
    uint64_t h = finalise((uint64_t)type->dtype +
                          0x1000ull * (uint64_t)type->rank +
                          0x100000ull * (uint64_t)type->layout);
    for (int32_t d = 0; d < type->rank; d++) {
        int32_t from = transposed ? type->rank - 1 - d : d;
        h = finalise(h ^ (uint64_t)type->shape[from]);
    }
    return h;
}

/* Four lanes of multiply-rotate over 8-byte words, so that the walk is
 * bound by memory rather than by one chain of multiplies. */
uint64_t dfg_weight_bytes_key(const dfg_type *type, const void *data)
{
    size_t bytes = (size_t)dfg_type_bytes(type), words = bytes / 8;
    const unsigned char *p = data;
    uint64_t lane[4] = {1, 2, 3, 4};
    for (size_t w = 0; w < words; w++) {
        uint64_t v;
        memcpy(&v, p + w * 8, 8);
        uint64_t *h = &lane[w & 3];
        *h = (*h ^ v) * ELEMENT_MIX;
        *h = (*h << 31) | (*h >> 33);
    }
    uint64_t tail = 0;
    memcpy(&tail, p + words * 8, bytes - words * 8);
    uint64_t h = dfg_weight_type_key(type, 0) ^ finalise(tail + bytes);
    for (int i = 0; i < 4; i++)
        h = finalise(h ^ lane[i]);
    return h;
}

/* Up to SAMPLES elements spread evenly over the tensor, then SAMPLES
 * rows and columns of a matrix's grid: a few pages of each tensor. */
#define SAMPLES 64
#define GRID 16

uint64_t dfg_weight_sample_key(const dfg_type *type, const void *data)
{
    size_t size = dfg_dtype_size(type->dtype);
    int64_t numel = dfg_type_numel(type);
    int64_t n = numel < SAMPLES ? numel : SAMPLES;
    const unsigned char *p = data;
    uint64_t h = dfg_weight_type_key(type, 0);
    for (int64_t i = 0; i < n; i++) {
        /* numel <= 2^48 and i < 64: no overflow */
        int64_t at = i * numel / n;
        h = finalise(h ^ bits_of(p + (size_t)at * size, size));
    }
    return h;
}

/* The element at grid point (i of n_i, j of n_j) of a rows x cols
 * matrix. */
static uint64_t grid_bits(const unsigned char *p, size_t size, int64_t rows,
                          int64_t cols, int64_t i, int64_t n_i, int64_t j,
                          int64_t n_j)
{
    int64_t r = i * rows / n_i, c = j * cols / n_j;
    return bits_of(p + (size_t)(r * cols + c) * size, size);
}

void dfg_weight_grid_keys(const dfg_type *type, const void *data,
                          uint64_t *key, uint64_t *transposed_key)
{
    size_t size = dfg_dtype_size(type->dtype);
    int64_t rows = type->shape[0], cols = type->shape[1];
    int64_t n_r = rows < GRID ? rows : GRID, n_c = cols < GRID ? cols : GRID;
    uint64_t h = dfg_weight_type_key(type, 0);
    uint64_t t = dfg_weight_type_key(type, 1);
    /* The transpose's grid point (k, l) is this one's (l, k). */
    for (int64_t k = 0; k < n_r; k++)
        for (int64_t l = 0; l < n_c; l++)
            h = finalise(h ^ grid_bits(data, size, rows, cols, k, n_r, l, n_c));
    for (int64_t k = 0; k < n_c; k++)
        for (int64_t l = 0; l < n_r; l++)
            t = finalise(t ^ grid_bits(data, size, rows, cols, l, n_r, k, n_c));
    *key = h;
    *transposed_key = t;
}

int dfg_weights_equal(const dfg_type *ta, const void *a, const dfg_type *tb,
                      const void *b)
{
    int64_t bytes = dfg_type_bytes(ta);
    return dfg_type_equal(ta, tb) && ta->layout == tb->layout && bytes >= 0 &&
           memcmp(a, b, (size_t)bytes) == 0;
}

/* Rows and columns are compared in square tiles, so that the strided
 * reads of b stay in cache. */
#define TILE 32

int dfg_weights_transposed(const dfg_type *ta, const void *a,
                           const dfg_type *tb, const void *b)
{
    return dfg_weights_transposed_rows(ta, a, tb, b, 0, tb->shape[0]);
}

int dfg_weights_transposed_rows(const dfg_type *ta, const void *a,
                                const dfg_type *tb, const void *b,
                                int64_t from, int64_t to)
{
    if (ta->rank != 2 || tb->rank != 2 || ta->dtype != tb->dtype ||
        ta->layout != tb->layout || ta->shape[0] != tb->shape[1] ||
        ta->shape[1] != tb->shape[0] || from < 0 || to > tb->shape[0])
        return 0;
    size_t size = dfg_dtype_size(ta->dtype);
    int64_t rows = ta->shape[0], cols = ta->shape[1];
    const unsigned char *pa = a, *pb = b;
    for (int64_t r0 = 0; r0 < rows; r0 += TILE)
        for (int64_t c0 = from; c0 < to; c0 += TILE)
            for (int64_t r = r0; r < rows && r < r0 + TILE; r++)
                for (int64_t c = c0; c < to && c < c0 + TILE; c++)
                    if (bits_of(pa + (size_t)(r * cols + c) * size, size) !=
                        bits_of(pb + (size_t)(c * rows + r) * size, size))
                        return 0;
    return 1;
}
