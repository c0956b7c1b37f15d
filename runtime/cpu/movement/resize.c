/* resize (ONNX Resize) on the CPU: separable sampling along every axis,
 * with the index arithmetic of src/math/resize_coords.h. nearest copies
 * bytes (any dtype); linear and cubic weigh the taps of every axis (float
 * dtypes). On f32 they resample each input row along the last axis once
 * for all the output rows that read it (an image's rows, 2x-8x upsampled:
 * several output rows read each), then weigh those rows, in f32; other
 * float dtypes, and samplings of more than ROW_COMBOS input rows an output
 * row, weigh every tap of every element with double accumulation. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "runtime/cpu/elementwise/dtype_access.h"
#include "runtime/cpu/elementwise/vector_clones.h"
#include "util/error.h"
#include "runtime/cpu/kernels_extra.h"
#include "math/resize_coords.h"
#include "runtime/cpu/parallel.h"

typedef struct resize_ctx {
    const dfg_attrs *attrs;
    const dfg_type *in_type, *out_type;
    const char *in;
    char *out;
    size_t elem;
    int64_t in_strides[DFG_MAX_RANK];
    double scale[DFG_MAX_RANK];
} resize_ctx;

/* Sum over every combination of one tap per axis of weight * input. */
static float interpolate(const resize_ctx *c, const dfg_resize_taps *taps)
{
    int32_t rank = c->in_type->rank, t[DFG_MAX_RANK] = {0};
    for (int32_t d = 0; d < rank; d++)
        if (taps[d].n == 0)
            return 0.0f; /* every tap excluded: nothing to weigh */
    double acc = 0.0;
    for (;;) {
        double weight = 1.0;
        int64_t offset = 0;
        for (int32_t d = 0; d < rank; d++) {
            weight *= taps[d].weight[t[d]];
            offset += taps[d].index[t[d]] * c->in_strides[d];
        }
        float buf;
        acc += weight * *dfg_load_f32(c->in, c->in_type->dtype, offset, 1, 1,
                                      &buf);
        int32_t d = rank - 1;
        while (d >= 0 && ++t[d] == taps[d].n)
            t[d--] = 0;
        if (d < 0)
            return (float)acc;
    }
}

/* Columns of the last axis whose taps are computed together, once for
 * every row a thread resizes. */
#define RESIZE_COLUMNS 256

/* out[e + x] = in[offset + columns[x].index[0]] for x < m: the nearest
 * input element, for each element size. */
static void copy_nearest(const resize_ctx *c, int64_t e, int64_t offset,
                         const dfg_resize_taps *columns, int64_t m)
{
    switch (c->elem) {
#define NEAREST(type)                                                       \
    {                                                                       \
        const type *in = (const type *)c->in + offset;                      \
        type *out = (type *)c->out + e;                                     \
        for (int64_t x = 0; x < m; x++)                                     \
            out[x] = in[columns[x].index[0]];                               \
        return;                                                             \
    }
    case 1: NEAREST(uint8_t)
    case 2: NEAREST(uint16_t)
    case 4: NEAREST(uint32_t)
    case 8: NEAREST(uint64_t)
#undef NEAREST
    default:
        for (int64_t x = 0; x < m; x++)
            memcpy(c->out + (e + x) * (int64_t)c->elem,
                   c->in + (offset + columns[x].index[0]) * (int64_t)c->elem,
                   c->elem);
    }
}

/* The most input rows one output row of the f32 path weighs (the
 * combinations of the outer axes' taps: 2 for linear along one outer
 * axis, 4 for cubic or linear along two), and the resampled rows a thread
 * keeps: twice that, so that a row's own are never evicted for another
 * of its own. */
#define ROW_COMBOS 8
#define KEPT_ROWS (2 * ROW_COMBOS)

/* A chunk's column taps, tap by tap: column x reads row[index[j][x]]
 * with weight[j][x] for j < n (a column of fewer taps pads with weight 0
 * on its first index, 0 where it has none). */
typedef struct column_taps {
    int32_t n;
    int32_t index[DFG_RESIZE_MAX_TAPS][RESIZE_COLUMNS];
    float weight[DFG_RESIZE_MAX_TAPS][RESIZE_COLUMNS];
} column_taps;

/* Input rows resampled along the last axis over a chunk's columns, by
 * the offset of the input row; used: the output row that last read each
 * (-1: empty). */
typedef struct kept_rows {
    int64_t offset[KEPT_ROWS], used[KEPT_ROWS];
    float values[KEPT_ROWS][RESIZE_COLUMNS];
} kept_rows;

static void lay_out_columns(const dfg_resize_taps *columns, int64_t m,
                            column_taps *ct)
{
    ct->n = 0;
    for (int64_t x = 0; x < m; x++)
        ct->n = columns[x].n > ct->n ? columns[x].n : ct->n;
    for (int32_t j = 0; j < ct->n; j++)
        for (int64_t x = 0; x < m; x++) {
            int has = j < columns[x].n;
            ct->index[j][x] = (int32_t)(has         ? columns[x].index[j]
                                        : columns[x].n ? columns[x].index[0]
                                                       : 0);
            ct->weight[j][x] = has ? columns[x].weight[j] : 0.0f;
        }
}

/* h[x] = sum over j of weight[j][x] * row[index[j][x]], x < m. */
DFG_VECTOR_LOOP(resample_row,
                (const column_taps *ct, const float *row, int64_t m,
                 float *h),
                (ct, row, m, h))
{
    for (int64_t x = 0; x < m; x++)
        h[x] = ct->weight[0][x] * row[ct->index[0][x]];
    for (int32_t j = 1; j < ct->n; j++)
        for (int64_t x = 0; x < m; x++)
            h[x] += ct->weight[j][x] * row[ct->index[j][x]];
}

/* y[x] = sum over p < n of weight[p] * rows[p][x], x < m (0 when n is 0). */
DFG_VECTOR_LOOP(weigh_rows,
                (const float *const *rows, const float *weight, int32_t n,
                 int64_t m, float *y),
                (rows, weight, n, m, y))
{
    for (int64_t x = 0; x < m; x++)
        y[x] = n ? weight[0] * rows[0][x] : 0.0f;
    for (int32_t p = 1; p < n; p++)
        for (int64_t x = 0; x < m; x++)
            y[x] += weight[p] * rows[p][x];
}

/* The input rows output row `row` weighs (the combinations of one tap per
 * outer axis, from taps[0..last)): their offsets and weights; how many
 * (0 when an axis has no tap), or -1 when more than ROW_COMBOS. */
static int32_t row_combos(const resize_ctx *c, const dfg_resize_taps *taps,
                          int32_t last, int64_t *offset, float *weight)
{
    int32_t n = 1;
    for (int32_t d = 0; d < last; d++) {
        if ((int64_t)n * taps[d].n > ROW_COMBOS)
            return -1;
        n *= taps[d].n;
    }
    for (int32_t k = 0; k < n; k++) {
        int64_t at = 0;
        double w = 1.0;
        for (int32_t d = last - 1, rest = k; d >= 0; d--) {
            int32_t t = rest % taps[d].n;
            rest /= taps[d].n;
            at += taps[d].index[t] * c->in_strides[d];
            w *= taps[d].weight[t];
        }
        offset[k] = at;
        weight[k] = (float)w;
    }
    return n;
}

/* The kept row resampled from the input row at offset, resampled now
 * (in place of the row least recently used by another output row) if
 * not kept; `row` is the output row asking. */
static const float *kept_row(const resize_ctx *c, const column_taps *ct,
                             int64_t m, int64_t offset, int64_t row,
                             kept_rows *k)
{
    int32_t oldest = -1;
    for (int32_t i = 0; i < KEPT_ROWS; i++) {
        if (k->used[i] >= 0 && k->offset[i] == offset) {
            k->used[i] = row;
            return k->values[i];
        }
        if (k->used[i] != row && (oldest < 0 || k->used[i] < k->used[oldest]))
            oldest = i;
    }
    resample_row(ct, (const float *)c->in + offset, m, k->values[oldest]);
    k->offset[oldest] = offset;
    k->used[oldest] = row;
    return k->values[oldest];
}

/* Output row `row` (elements [e, e + m) of a chunk of columns) on f32 by
 * its input rows resampled once (kept_row); 0 when more than ROW_COMBOS
 * input rows feed it (the caller interpolates element by element). */
static int weigh_row_f32(const resize_ctx *c, const column_taps *ct,
                         const dfg_resize_taps *taps, int32_t last,
                         int64_t row, int64_t e, int64_t m, kept_rows *k)
{
    int64_t offset[ROW_COMBOS];
    float weight[ROW_COMBOS];
    const float *rows[ROW_COMBOS];
    int32_t n = row_combos(c, taps, last, offset, weight);
    if (n < 0)
        return 0;
    for (int32_t p = 0; p < n; p++)
        rows[p] = kept_row(c, ct, m, offset[p], row, k);
    weigh_rows(rows, weight, n, m, (float *)c->out + e);
    return 1;
}

/* Output rows [first, end) (a row: the last axis's elements): each chunk
 * of RESIZE_COLUMNS columns' taps computed once for all the rows, each
 * row's outer taps once, walking the rows like an odometer and
 * recomputing an outer axis' taps only when its coordinate moves (the
 * taps of every element, computed again for each, took most of the
 * time). */
static void resize_rows(const resize_ctx *c, int64_t first, int64_t end)
{
    const dfg_type *out = c->out_type;
    int32_t last = out->rank - 1;
    int64_t width = out->shape[last];
    int nearest = c->attrs->resize_mode != DFG_RESIZE_LINEAR &&
                  c->attrs->resize_mode != DFG_RESIZE_CUBIC;
    int rows_f32 = !nearest && c->in_type->dtype == DFG_F32 &&
                   out->dtype == DFG_F32 &&
                   c->in_type->shape[last] <= INT32_MAX;
    dfg_resize_taps columns[RESIZE_COLUMNS], taps[DFG_MAX_RANK];
    column_taps ct;
    kept_rows kept;
    for (int64_t x0 = 0; x0 < width; x0 += RESIZE_COLUMNS) {
        int64_t m = width - x0 < RESIZE_COLUMNS ? width - x0 : RESIZE_COLUMNS;
        for (int64_t x = 0; x < m; x++)
            dfg_resize_axis_taps(c->attrs, x0 + x, c->scale[last],
                                 c->in_type->shape[last], &columns[x]);
        if (rows_f32) {
            lay_out_columns(columns, m, &ct);
            for (int32_t i = 0; i < KEPT_ROWS; i++)
                kept.used[i] = -1;
        }
        int64_t pos[DFG_MAX_RANK];
        for (int64_t rest = first, d = last - 1; d >= 0; d--) {
            pos[d] = rest % out->shape[d];
            rest /= out->shape[d];
        }
        int32_t changed = 0;
        for (int64_t row = first; row < end; row++) {
            for (int32_t d = changed; d < last; d++)
                dfg_resize_axis_taps(c->attrs, pos[d], c->scale[d],
                                     c->in_type->shape[d], &taps[d]);
            int64_t e = row * width + x0;
            if (nearest) {
                int64_t offset = 0;
                for (int32_t d = 0; d < last; d++)
                    offset += taps[d].index[0] * c->in_strides[d];
                copy_nearest(c, e, offset, columns, m);
            } else if (!rows_f32 ||
                       !weigh_row_f32(c, &ct, taps, last, row, e, m, &kept)) {
                for (int64_t x = 0; x < m; x++) {
                    taps[last] = columns[x];
                    float v = interpolate(c, taps);
                    dfg_store_f32(c->out, out->dtype, e + x, 1, &v);
                }
            }
            if (last == 0)
                break; /* one row */
            changed = last - 1;
            while (changed > 0 && ++pos[changed] == out->shape[changed])
                pos[changed--] = 0;
            if (changed == 0)
                pos[0]++;
        }
    }
}

dfg_status dfg_cpu_resize(const dfg_kernel_args *args)
{
    const dfg_attrs *a = args->attrs;
    const dfg_type *in = &args->in_types[0], *out = &args->out_types[0];
    int interpolating = a->resize_mode == DFG_RESIZE_LINEAR ||
                        a->resize_mode == DFG_RESIZE_CUBIC;
    if (in->rank < 1 || in->rank != out->rank || in->dtype != out->dtype ||
        (interpolating && dfg_dtype_is_integer(in->dtype)) ||
        (a->n_scales != 0 && a->n_scales != in->rank))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "resize: input rank %d %s, output rank %d %s, %d "
                         "scales", (int)in->rank, dfg_dtype_name(in->dtype),
                         (int)out->rank, dfg_dtype_name(out->dtype),
                         (int)a->n_scales);
    int64_t n = dfg_type_numel(out);
    if (n == 0)
        return DFG_OK;
    if (dfg_type_numel(in) == 0)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "resize: an empty input cannot fill %lld elements",
                         (long long)n);
    resize_ctx c = {a, in, out, args->in[0], args->out[0],
                    dfg_dtype_size(in->dtype), {0}, {0}};
    int64_t stride = 1;
    for (int32_t d = in->rank - 1; d >= 0; d--) {
        c.in_strides[d] = stride;
        stride *= in->shape[d];
        c.scale[d] = a->n_scales ? (double)a->scales[d]
                                 : (double)out->shape[d] / (double)in->shape[d];
        if (!(c.scale[d] > 0.0) || isinf(c.scale[d]))
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "resize: scale %g on axis %d", c.scale[d], (int)d);
    }
    int64_t rows = n / out->shape[out->rank - 1];
#pragma omp parallel if (n > DFG_CPU_PARALLEL_MIN_ELEMENTS)
    {
        int64_t first, end;
        dfg_cpu_team_share(rows, 1, &first, &end);
        resize_rows(&c, first, end);
    }
    return DFG_OK;
}
