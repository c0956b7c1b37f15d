/* conv2d with few filters (conv_few_filters.h). Each thread takes output
 * rows; a row is computed in blocks of ROW_BLOCK columns, each block's
 * sums kept in a small array (in L1) while every input channel and tap
 * row is added: two vectors of columns of every filter in registers
 * across the row's taps, each input vector loaded once for all the
 * filters. The input columns a block reads are first copied out of their
 * row with the padding as zeros, so that every column runs the vector
 * loop. Every sum runs in the order of the channels, then the taps' rows,
 * then their columns. */
#include "runtime/cpu/linalg/conv_few_filters.h"

#include <string.h>

#include "runtime/cpu/elementwise/vector_clones.h"
#include "runtime/cpu/linalg/conv_post_ops.h"
#include "runtime/cpu/parallel.h"

/* Output columns of a row whose sums are kept at once, per filter. */
#define ROW_BLOCK 256

static int plain_f32(const dfg_type *t)
{
    return t->dtype == DFG_F32 && t->layout == DFG_LAYOUT_PLAIN;
}

int dfg_cpu_conv_few_filters(const dfg_attrs *attrs, const dfg_type *in,
                             int32_t n_in, const dfg_type *out, int32_t n_out)
{
    dfg_conv_geometry g;
    if (n_in < 2 || n_out < 1 || !plain_f32(&in[0]) || !plain_f32(&in[1]) ||
        !plain_f32(&out[0]) ||
        dfg_conv_geometry_make(attrs, &in[0], &in[1], &out[0], &g) != DFG_OK)
        return 0;
    for (int32_t i = 2; i < n_in && i < 4; i++)
        if (in[i].rank >= 0 && !plain_f32(&in[i]))
            return 0;
    return g.group == 1 && g.out_channels <= DFG_CONV_FEW_FILTERS &&
           g.kernel_h * g.kernel_w > 1 &&
           g.kernel_w <= DFG_CONV_FEW_FILTERS_WIDTH && g.stride[1] == 1 &&
           g.dilation[0] == 1 && g.dilation[1] == 1;
}

/* One output row's block of columns [x0, x0 + m): acc[f][x] for each of
 * the f < filters, onto which every channel's taps are added. */
typedef struct row_block {
    const dfg_conv_geometry *g;
    const float *x; /* the image's [C, H, W] */
    const float *w; /* [M, C, KH, KW] */
    int64_t oy, x0, m;
} row_block;

/* Vectors of 16, 8 and 4 floats (the compiler's vector extension): one
 * register of the AVX-512F, AVX2 and baseline builds of the row loop. */
typedef float lanes16 __attribute__((vector_size(64)));
typedef float lanes8 __attribute__((vector_size(32)));
typedef float lanes4 __attribute__((vector_size(16)));

/* v = p[0..L), p[0..L) = v, at any alignment. */
#define LOADV(v, p) __builtin_memcpy(&(v), (p), sizeof(v))
#define STOREV(p, v) __builtin_memcpy((p), &(v), sizeof(v))

/* Filter f's sums of the `lanes` columns from column i + lanes v
 * (f < F), as variables s<v><f> (not an array, which the compiler keeps
 * in memory). */
#define SUMS_DECLARE(T, v) T s##v##0 = {0}, s##v##1 = {0}, s##v##2 = {0}, \
                                s##v##3 = {0}
#define SUMS_EACH(v, DO)                                                    \
    do {                                                                    \
        DO(v, 0);                                                           \
        if (F > 1)                                                          \
            DO(v, 1);                                                       \
        if (F > 2)                                                          \
            DO(v, 2);                                                       \
        if (F > 3)                                                          \
            DO(v, 3);                                                       \
    } while (0)
#define SUM_LOAD(v, f) LOADV(s##v##f, acc[f] + i + lanes * (v))
#define SUM_STORE(v, f) STOREV(acc[f] + i + lanes * (v), s##v##f)
#define SUM_ADD(v, f) s##v##f += w[f][kx] * r##v

/* name(F, acc, lo, hi, w, kw, row): acc[f][i] += sum over kx < kw of
 * w[f][kx] * row[i + kx] for i in [lo, hi) and f < F, on vectors T of L
 * floats: 2L or L columns at a time in registers (2F or F chains of adds
 * side by side), the rest one by one. */
#define ROW_TAPS(name, T, L)                                                \
    static inline __attribute__((always_inline)) void name(                 \
        int F, float (*acc)[ROW_BLOCK], int64_t lo, int64_t hi,             \
        const float *const *w, int64_t kw, const float *row)                \
    {                                                                       \
        const int64_t lanes = (L);                                          \
        int64_t i = lo;                                                     \
        for (; i + 2 * lanes <= hi; i += 2 * lanes) {                       \
            SUMS_DECLARE(T, 0);                                             \
            SUMS_DECLARE(T, 1);                                             \
            SUMS_EACH(0, SUM_LOAD);                                         \
            SUMS_EACH(1, SUM_LOAD);                                         \
            for (int64_t kx = 0; kx < kw; kx++) {                           \
                T r0, r1;                                                   \
                LOADV(r0, row + i + kx);                                    \
                LOADV(r1, row + i + lanes + kx);                            \
                SUMS_EACH(0, SUM_ADD);                                      \
                SUMS_EACH(1, SUM_ADD);                                      \
            }                                                               \
            SUMS_EACH(0, SUM_STORE);                                        \
            SUMS_EACH(1, SUM_STORE);                                        \
        }                                                                   \
        for (; i + lanes <= hi; i += lanes) {                               \
            SUMS_DECLARE(T, 0);                                             \
            SUMS_EACH(0, SUM_LOAD);                                         \
            for (int64_t kx = 0; kx < kw; kx++) {                           \
                T r0;                                                       \
                LOADV(r0, row + i + kx);                                    \
                SUMS_EACH(0, SUM_ADD);                                      \
            }                                                               \
            SUMS_EACH(0, SUM_STORE);                                        \
        }                                                                   \
        for (; i < hi; i++)                                                 \
            for (int f = 0; f < F; f++) {                                   \
                float sum = acc[f][i];                                      \
                for (int64_t kx = 0; kx < kw; kx++)                         \
                    sum += w[f][kx] * row[i + kx];                          \
                acc[f][i] = sum;                                            \
            }                                                               \
    }

ROW_TAPS(row_taps16, lanes16, 16)
ROW_TAPS(row_taps8, lanes8, 8)
ROW_TAPS(row_taps4, lanes4, 4)

/* name(filters, ...): TAPS with the filters a constant. */
#define INPUT_ROW(name, TAPS)                                               \
    static void name(int64_t filters, float (*acc)[ROW_BLOCK], int64_t lo,  \
                     int64_t hi, const float *const *w, int64_t kw,         \
                     const float *row)                                      \
    {                                                                       \
        switch (filters) {                                                  \
        case 1: TAPS(1, acc, lo, hi, w, kw, row); break;                    \
        case 2: TAPS(2, acc, lo, hi, w, kw, row); break;                    \
        case 3: TAPS(3, acc, lo, hi, w, kw, row); break;                    \
        default: TAPS(4, acc, lo, hi, w, kw, row); break;                   \
        }                                                                   \
    }

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) INPUT_ROW(input_row16, row_taps16)
__attribute__((target("avx2"))) INPUT_ROW(input_row8, row_taps8)
#endif
INPUT_ROW(input_row4, row_taps4)

/* One input row's taps for every filter (row_taps), on the vectors of
 * dfg_cpu_vector_width (DFG_VECTOR_CALL, vector_clones.h): its lane type
 * is the build's, which DFG_VECTOR_LOOP's one body cannot say. Every width computes the
 * same bits (no build contracts a * b + c). */
static void input_row(int64_t filters, float (*acc)[ROW_BLOCK], int64_t lo,
                      int64_t hi, const float *const *w, int64_t kw,
                      const float *row)
{
    DFG_VECTOR_CALL(, input_row16, input_row8, input_row4,
                    (filters, acc, lo, hi, w, kw, row));
}

/* seg[j] = row[from + j] for j < n, 0 where from + j is outside [0, w):
 * an input row's columns a block reads, its padding made zeros. */
static void segment(const float *row, int64_t w, int64_t from, int64_t n,
                    float *seg)
{
    int64_t j = 0;
    for (; j < n && from + j < 0; j++)
        seg[j] = 0.0f;
    int64_t inside = w - (from + j) < n - j ? w - (from + j) : n - j;
    if (inside > 0) {
        memcpy(seg + j, row + from + j, (size_t)inside * sizeof *seg);
        j += inside;
    }
    for (; j < n; j++)
        seg[j] = 0.0f;
}

static void block_sums(const row_block *b, float (*acc)[ROW_BLOCK])
{
    const dfg_conv_geometry *g = b->g;
    int64_t kw = g->kernel_w;
    /* whole vectors of columns: acc's spare columns past m take the rest */
    int64_t columns = (b->m + 15) / 16 * 16;
    float seg[ROW_BLOCK + DFG_CONV_FEW_FILTERS_WIDTH];
    const float *w[DFG_CONV_FEW_FILTERS];
    for (int64_t c = 0; c < g->in_channels; c++)
        for (int64_t ky = 0; ky < g->kernel_h; ky++) {
            int64_t iy = b->oy * g->stride[0] + ky - g->pad_top;
            if (iy < 0 || iy >= g->in_h)
                continue;
            segment(b->x + (c * g->in_h + iy) * g->in_w, g->in_w,
                    b->x0 - g->pad_left, columns + kw - 1, seg);
            for (int64_t f = 0; f < g->out_channels; f++)
                w[f] = b->w +
                       ((f * g->in_channels + c) * g->kernel_h + ky) * kw;
            input_row(g->out_channels, acc, 0, columns, w, kw, seg);
        }
}

void dfg_cpu_conv2d_few_filters(const dfg_conv_geometry *geometry,
                                const dfg_kernel_args *args)
{
    const dfg_conv_geometry g = *geometry;
    const float *x = args->in[0], *w = args->in[1];
    const float *bias = args->n_inputs > 2 ? args->in[2] : NULL;
    int residual = dfg_cpu_conv_residual(args) != NULL;
    float *y = args->out[0];
    dfg_cpu_conv_residual_load(args);
    int64_t rows = g.batch * g.out_h;
    double macs = (double)g.batch * (double)g.out_channels *
                  (double)g.pixels * (double)g.k;
#pragma omp parallel for schedule(static) \
    if (macs >= DFG_CPU_PARALLEL_MIN_MACS)
    for (int64_t r = 0; r < rows; r++) {
        int64_t n = r / g.out_h, oy = r % g.out_h;
        float acc[DFG_CONV_FEW_FILTERS][ROW_BLOCK];
        for (int64_t x0 = 0; x0 < g.out_w; x0 += ROW_BLOCK) {
            int64_t m = g.out_w - x0 < ROW_BLOCK ? g.out_w - x0 : ROW_BLOCK;
            for (int64_t f = 0; f < g.out_channels; f++)
                for (int64_t i = 0; i < ROW_BLOCK; i++)
                    acc[f][i] = bias ? bias[f] : 0.0f;
            row_block b = {&g, x + n * g.in_channels * g.in_h * g.in_w, w,
                           oy, x0, m};
            block_sums(&b, acc);
            for (int64_t f = 0; f < g.out_channels; f++) {
                float *out = y + ((n * g.out_channels + f) * g.out_h + oy) *
                                     g.out_w + x0;
                for (int64_t i = 0; i < m; i++)
                    out[i] = residual ? out[i] + acc[f][i] : acc[f][i];
            }
        }
    }
    dfg_cpu_conv_post_ops_apply(args);
}
