/* The column matrices of the backward convs (conv_columns.h). */
#include "conv_columns.h"

#include <string.h>

#include "math/im2col.h"
#include "math/strided_range.h"

/* The part of a chunk that lies in one image: `count` columns from output
 * pixel `pixel` of image `image`, at column `column` of the chunk. */
typedef struct image_part {
    int64_t image, pixel, count, column;
} image_part;

/* The first part of the chunk [c0, c0 + cols) when *part is zeroed, then
 * the next one; 0 when there are no more. */
static int next_part(const dfg_conv_geometry *g, int64_t c0, int64_t cols,
                     image_part *part)
{
    int64_t c = c0 + part->column + part->count;
    if (c >= c0 + cols)
        return 0;
    part->image = c / g->pixels;
    part->pixel = c - part->image * g->pixels;
    part->column = c - c0;
    part->count = g->pixels - part->pixel < cols - part->column
                      ? g->pixels - part->pixel
                      : cols - part->column;
    return 1;
}

void dfg_cpu_conv_gather_dy(const dfg_conv_geometry *g, const float *dy,
                            int64_t grp, int64_t c0, int64_t cols, float *dst)
{
    image_part part = {0, 0, 0, 0};
    while (next_part(g, c0, cols, &part)) {
        const float *src =
            dy + (part.image * g->out_channels + grp * g->filters_per_group) *
                     g->pixels + part.pixel;
        for (int64_t m = 0; m < g->filters_per_group; m++)
            memcpy(dst + m * cols + part.column, src + m * g->pixels,
                   (size_t)part.count * sizeof *dst);
    }
}

/* One im2col row: the input channel (within the group) and kernel tap it
 * reads, and, for the tap's column, where the output columns of any row
 * read inside the input: [inside_first, inside_end), with ix_at_0 the
 * input column output column 0 reads. */
typedef struct tap_row {
    int64_t channel, tap_y, ix_at_0, inside_first, inside_end;
} tap_row;

static inline tap_row tap_row_of(const dfg_im2col_dims *d, int64_t row)
{
    tap_row t;
    int64_t tap_x;
    dfg_im2col_row(d, row, &t.channel, &t.tap_y, &tap_x);
    t.ix_at_0 = dfg_im2col_coord(0, tap_x, d->stride_w, d->pad_left,
                                 d->dilation_w);
    dfg_strided_range(t.ix_at_0, d->out_w, d->stride_w, 0, d->in_w,
                      &t.inside_first, &t.inside_end);
    return t;
}

/* A run of an im2col row within output row oy, pixels [ox, ox + length):
 * of them, [first, end) read the input from offset `source` (from the
 * group's first channel) by steps of the stride; the others read padding
 * (first == end == 0 when all do). */
typedef struct row_run {
    int64_t length, first, end, source;
} row_run;

static inline row_run run_of(const dfg_im2col_dims *d, const tap_row *t, int64_t oy,
                      int64_t ox, int64_t length)
{
    row_run r = {length, 0, 0, 0};
    int64_t iy = dfg_im2col_coord(oy, t->tap_y, d->stride_h, d->pad_top,
                                  d->dilation_h);
    if (iy < 0 || iy >= d->in_h)
        return r;
    int64_t first = t->inside_first > ox ? t->inside_first : ox;
    int64_t end = t->inside_end < ox + length ? t->inside_end : ox + length;
    if (end <= first)
        return r;
    r.first = first - ox;
    r.end = end - ox;
    r.source = (t->channel * d->in_h + iy) * d->in_w + t->ix_at_0 +
               first * d->stride_w;
    return r;
}

static dfg_im2col_dims dims_of(const dfg_conv_geometry *g)
{
    return (dfg_im2col_dims){g->in_h, g->in_w, g->kernel_h, g->kernel_w,
                             g->out_h, g->out_w, g->stride[0], g->stride[1],
                             g->dilation[0], g->dilation[1], g->pad_top,
                             g->pad_left};
}

/* Offset of image n, group grp's first input channel in x or dx. */
static int64_t group_input(const dfg_conv_geometry *g, int64_t n, int64_t grp)
{
    return (n * g->in_channels + grp * g->channels_per_group) * g->in_h *
           g->in_w;
}

void dfg_cpu_conv_im2col(const dfg_conv_geometry *g, const float *x,
                         int64_t grp, int64_t c0, int64_t cols, float *col)
{
    dfg_im2col_dims d = dims_of(g);
    int64_t stride = d.stride_w;
    for (int64_t row = 0; row < g->k; row++) {
        tap_row t = tap_row_of(&d, row);
        image_part part = {0, 0, 0, 0};
        while (next_part(g, c0, cols, &part)) {
            const float *image = x + group_input(g, part.image, grp);
            int64_t oy = part.pixel / d.out_w, ox = part.pixel - oy * d.out_w;
            float *dst = col + row * cols + part.column;
            for (int64_t j = 0; j < part.count; oy++, ox = 0) {
                int64_t length = d.out_w - ox < part.count - j
                                     ? d.out_w - ox : part.count - j;
                row_run r = run_of(&d, &t, oy, ox, length);
                float *out = dst + j;
                for (int64_t i = 0; i < r.first; i++)
                    out[i] = 0.0f;
                const float *in = image + r.source;
                if (stride == 1)
                    memcpy(out + r.first, in,
                           (size_t)(r.end - r.first) * sizeof *out);
                else
                    for (int64_t i = 0; i < r.end - r.first; i++)
                        out[r.first + i] = in[i * stride];
                for (int64_t i = r.end; i < length; i++)
                    out[i] = 0.0f;
                j += length;
            }
        }
    }
}

void dfg_cpu_conv_col2im_add(const dfg_conv_geometry *g, const float *col,
                             int64_t grp, int64_t c0, int64_t cols, float *dx)
{
    dfg_im2col_dims d = dims_of(g);
    int64_t stride = d.stride_w;
    for (int64_t row = 0; row < g->k; row++) {
        tap_row t = tap_row_of(&d, row);
        image_part part = {0, 0, 0, 0};
        while (next_part(g, c0, cols, &part)) {
            float *image = dx + group_input(g, part.image, grp);
            int64_t oy = part.pixel / d.out_w, ox = part.pixel - oy * d.out_w;
            const float *src = col + row * cols + part.column;
            for (int64_t j = 0; j < part.count; oy++, ox = 0) {
                int64_t length = d.out_w - ox < part.count - j
                                     ? d.out_w - ox : part.count - j;
                row_run r = run_of(&d, &t, oy, ox, length);
                const float *in = src + j + r.first;
                float *out = image + r.source;
                if (stride == 1)
                    for (int64_t i = 0; i < r.end - r.first; i++)
                        out[i] += in[i];
                else
                    for (int64_t i = 0; i < r.end - r.first; i++)
                        out[i * stride] += in[i];
                j += length;
            }
        }
    }
}
