/* Winograd F(4x4, 3x3) transforms over blocked tensors
 * (winograd_transforms.h).
 * B^T and A^T are applied as the short sums their rows are (no
 * multiplications by 0 or 1), first along the columns of a tile, then
 * along its rows, eight channels a vector. */
#include "runtime/cpu/linalg/winograd_transforms.h"

#include "runtime/cpu/parallel.h"
#include "runtime/cpu/elementwise/vector_clones.h"

/* Eight floats, loaded and stored at any float alignment. */
typedef float v8 __attribute__((vector_size(32), aligned(4)));
typedef int32_t v8i __attribute__((vector_size(32), aligned(4)));

#define LANES DFG_WINOGRAD_LANES
#define ALPHA DFG_WINOGRAD_ALPHA
#define TILE DFG_WINOGRAD_TILE

/* B^T d along one line of 6 (d[k * ds], o[k * os]):
 *   4  0 -5  0  1  0
 *   0 -4 -4  1  1  0
 *   0  4 -4 -1  1  0
 *   0 -2 -1  2  1  0
 *   0  2 -1 -2  1  0
 *   0  4  0 -5  0  1 */
static inline void input_line(const v8 *d, int ds, v8 *o, int os)
{
    v8 d0 = d[0], d1 = d[ds], d2 = d[2 * ds], d3 = d[3 * ds],
       d4 = d[4 * ds], d5 = d[5 * ds];
    v8 s12 = d1 + d2, d12 = d1 - d2, s34 = d3 + d4, d43 = d4 - d3;
    v8 d42 = d4 - d2, d31 = d3 - d1;
    o[0] = 4.0f * d0 - 5.0f * d2 + d4;
    o[os] = s34 - 4.0f * s12;
    o[2 * os] = 4.0f * d12 + d43;
    o[3 * os] = 2.0f * d31 + d42;
    o[4 * os] = d42 - 2.0f * d31;
    o[5 * os] = 4.0f * d1 - 5.0f * d3 + d5;
}

/* A^T m along one line of 6 into 4:
 *   1  1  1  1  1  0
 *   0  1 -1  2 -2  0
 *   0  1  1  4  4  0
 *   0  1 -1  8 -8  1 */
static inline void output_line(const v8 *m, int ms, v8 *o, int os)
{
    v8 m1 = m[ms], m2 = m[2 * ms], m3 = m[3 * ms], m4 = m[4 * ms];
    v8 s12 = m1 + m2, d12 = m1 - m2, s34 = m3 + m4, d34 = m3 - m4;
    o[0] = m[0] + s12 + s34;
    o[os] = d12 + 2.0f * d34;
    o[2 * os] = s12 + 4.0f * s34;
    o[3 * os] = d12 + 8.0f * d34 + m[5 * ms];
}

/* The image, row and column of tile t's first output pixel. */
static void tile_origin(const dfg_winograd_geometry *g, int64_t t,
                        int64_t *n, int64_t *oy, int64_t *ox)
{
    int64_t per_image = g->tiles_h * g->tiles_w;
    *n = t / per_image;
    *oy = t % per_image / g->tiles_w * TILE;
    *ox = t % g->tiles_w * TILE;
}

/* Items [begin, end) of the chunk's count * in_channels / 8 (tile slot
 * fastest, then eight input channels: a block's lanes, a half of it with
 * blocks of 16). */
DFG_VECTOR_LOOP(input_items,
                (const dfg_winograd_geometry *g, const float *x, float *v,
                 int64_t first, int64_t count, int64_t begin, int64_t end),
                (g, x, v, first, count, begin, end))
{
    int64_t B = g->block, parts = B / LANES;
    int64_t blocks = g->in_channels / B;
    int64_t plane = g->in_h * g->in_w * B;
    int64_t position_stride = blocks * g->chunk * B;
    for (int64_t item = begin; item < end; item++) {
        int64_t lanes = item / count, slot = item % count, n, oy, ox;
        int64_t cb = lanes / parts, part = lanes % parts * LANES;
        tile_origin(g, first + slot, &n, &oy, &ox);
        const float *xb = x + (n * blocks + cb) * plane + part;
        int64_t y0 = oy - g->pad_top, x0 = ox - g->pad_left;
        v8 d[ALPHA * ALPHA], t[ALPHA * ALPHA];
        for (int i = 0; i < ALPHA; i++) {
            int64_t yy = y0 + i;
            for (int j = 0; j < ALPHA; j++) {
                int64_t xx = x0 + j;
                int inside = yy >= 0 && yy < g->in_h && xx >= 0 && xx < g->in_w;
                d[i * ALPHA + j] =
                    inside ? *(const v8 *)(xb + (yy * g->in_w + xx) * B)
                           : (v8){0};
            }
        }
        for (int j = 0; j < ALPHA; j++)
            input_line(d + j, ALPHA, t + j, ALPHA);
        float *out = v + (cb * g->chunk + slot) * B + part;
        for (int i = 0; i < ALPHA; i++) {
            v8 row[ALPHA];
            input_line(t + i * ALPHA, 1, row, 1);
            for (int j = 0; j < ALPHA; j++)
                *(v8 *)(out + (i * ALPHA + j) * position_stride) = row[j];
        }
    }
}

void dfg_winograd_input(const dfg_winograd_geometry *g, const float *x,
                        float *v, int64_t first, int64_t count)
{
    int64_t items = count * (g->in_channels / LANES);
#pragma omp parallel
    {
        int64_t begin, end;
        dfg_cpu_team_share(items, 1, &begin, &end);
        input_items(g, x, v, first, count, begin, end);
    }
}

int dfg_winograd_output_takes(const dfg_attrs *attrs)
{
    for (int32_t k = 0; k < attrs->n_post_ops; k++)
        if (attrs->post_ops[k] != DFG_POST_SUM &&
            attrs->post_ops[k] != DFG_POST_RELU)
            return 0;
    return 1;
}

/* *at after attrs' post-ops (those dfg_winograd_output_takes), residual
 * the eight values at its place. Inlined into the vector clones: they
 * stay in vector registers. */
__attribute__((always_inline)) static inline void
post_ops(const dfg_attrs *a, v8 *at, const float *residual)
{
    v8 value = *at;
    for (int32_t k = 0; k < a->n_post_ops; k++) {
        int32_t kind = a->post_ops[k];
        if (kind == DFG_POST_SUM)
            value += *(const v8 *)residual;
        else
            value = (v8)((v8i)value & (v8i)(value > (v8){0}));
    }
    *at = value;
}

/* Items [begin, end) of the chunk's count * out_channels / 8 (tile slot
 * fastest, then eight output channels, as input_items). */
DFG_VECTOR_LOOP(output_items,
                (const dfg_winograd_geometry *g, const float *m,
                 const float *bias, const float *residual,
                 const dfg_attrs *attrs, float *y, int64_t first,
                 int64_t count, int64_t begin, int64_t end),
                (g, m, bias, residual, attrs, y, first, count, begin, end))
{
    int64_t B = g->block, parts = B / LANES;
    int64_t blocks = g->out_channels / B;
    int64_t plane = g->out_h * g->out_w * B;
    int64_t position_stride = blocks * g->chunk * B;
    for (int64_t item = begin; item < end; item++) {
        int64_t lanes = item / count, slot = item % count, n, oy, ox;
        int64_t ob = lanes / parts, part = lanes % parts * LANES;
        tile_origin(g, first + slot, &n, &oy, &ox);
        const float *in = m + (ob * g->chunk + slot) * B + part;
        v8 p[ALPHA * ALPHA], t[TILE * ALPHA];
        for (int q = 0; q < ALPHA * ALPHA; q++)
            p[q] = *(const v8 *)(in + q * position_stride);
        for (int j = 0; j < ALPHA; j++)
            output_line(p + j, ALPHA, t + j, ALPHA);
        v8 b = bias ? *(const v8 *)(bias + ob * B + part) : (v8){0};
        int64_t offset = (n * blocks + ob) * plane + part;
        for (int i = 0; i < TILE && oy + i < g->out_h; i++) {
            v8 row[TILE];
            output_line(t + i * ALPHA, 1, row, 1);
            for (int j = 0; j < TILE && ox + j < g->out_w; j++) {
                int64_t at = offset + ((oy + i) * g->out_w + ox + j) * B;
                v8 value = row[j] + b;
                post_ops(attrs, &value, residual ? residual + at : NULL);
                *(v8 *)(y + at) = value;
            }
        }
    }
}

void dfg_winograd_output(const dfg_winograd_geometry *g, const float *m,
                         const float *bias, const float *residual,
                         const dfg_attrs *attrs, float *y, int64_t first,
                         int64_t count)
{
    int64_t items = count * (g->out_channels / LANES);
#pragma omp parallel
    {
        int64_t begin, end;
        dfg_cpu_team_share(items, 1, &begin, &end);
        output_items(g, m, bias, residual, attrs, y, first, count, begin,
                     end);
    }
}

/* G, 6x3. */
static const double filter_matrix[ALPHA][3] = {
    {1.0 / 4, 0, 0},
    {-1.0 / 6, -1.0 / 6, -1.0 / 6},
    {-1.0 / 6, 1.0 / 6, -1.0 / 6},
    {1.0 / 24, 1.0 / 12, 1.0 / 6},
    {1.0 / 24, -1.0 / 12, 1.0 / 6},
    {0, 0, 1},
};

void dfg_winograd_filters(const float *w, int64_t out_channels,
                          int64_t in_channels, float *u)
{
    int64_t pairs = out_channels * in_channels;
    for (int64_t pair = 0; pair < pairs; pair++) {
        const float *g = w + pair * 9;
        double gt[ALPHA][3]; /* G g */
        for (int i = 0; i < ALPHA; i++)
            for (int l = 0; l < 3; l++) {
                double s = 0;
                for (int k = 0; k < 3; k++)
                    s += filter_matrix[i][k] * g[k * 3 + l];
                gt[i][l] = s;
            }
        for (int i = 0; i < ALPHA; i++)
            for (int j = 0; j < ALPHA; j++) {
                double s = 0;
                for (int l = 0; l < 3; l++)
                    s += gt[i][l] * filter_matrix[j][l];
                u[(int64_t)(i * ALPHA + j) * pairs + pair] = (float)s;
            }
    }
}
