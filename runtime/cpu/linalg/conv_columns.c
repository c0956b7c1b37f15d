/* The column matrices of the backward convs (conv_columns.h). */
#include "runtime/cpu/linalg/conv_columns.h"

#include <string.h>

#include "math/im2col.h"
#include "math/strided_range.h"
#include "runtime/cpu/elementwise/dtype_access.h"

/* A piece of a chunk: `images` consecutive images from `image`, each
 * contributing `count` columns from output pixel `pixel`, side by side
 * from column `column` of the chunk. Several images only when each is
 * whole (pixel 0, count = pixels), so that the walk of an im2col row,
 * the same in every image, is worked out once for all of them. */
typedef struct image_part {
    int64_t image, images, pixel, count, column;
} image_part;

/* The first part of the chunk [c0, c0 + cols) when *part is zeroed, then
 * the next one; 0 when there are no more. */
static int next_part(const dfg_conv_geometry *g, int64_t c0, int64_t cols,
                     image_part *part)
{
    int64_t c = c0 + part->column + part->images * part->count;
    int64_t left = c0 + cols - c;
    if (left <= 0)
        return 0;
    part->image = c / g->pixels;
    part->pixel = c - part->image * g->pixels;
    part->column = c - c0;
    part->count = g->pixels - part->pixel < left ? g->pixels - part->pixel
                                                 : left;
    part->images = part->pixel == 0 && part->count == g->pixels
                       ? left / g->pixels : 1;
    return 1;
}

void dfg_cpu_conv_gather_dy(const dfg_conv_geometry *g, const void *dy,
                            dfg_dtype dtype, int64_t grp, int64_t c0,
                            int64_t cols, float *dst, int64_t ld)
{
    image_part part = {0, 0, 0, 0, 0};
    while (next_part(g, c0, cols, &part))
        for (int64_t n = 0; n < part.images; n++) {
            int64_t src = ((part.image + n) * g->out_channels +
                           grp * g->filters_per_group) * g->pixels + part.pixel;
            float *to = dst + part.column + n * part.count;
            for (int64_t m = 0; m < g->filters_per_group; m++)
                if (dtype == DFG_F32)
                    memcpy(to + m * ld, (const float *)dy + src + m * g->pixels,
                           (size_t)part.count * sizeof *dst);
                else
                    for (int64_t i = 0; i < part.count; i++)
                        to[m * ld + i] =
                            dfg_float_at(dy, dtype, src + m * g->pixels + i);
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
 * group's first channel of an image) by steps of the stride; the others
 * read padding (first == end == 0 when all do). */
typedef struct row_run {
    int64_t length, first, end, source;
} row_run;

static inline row_run run_of(const dfg_im2col_dims *d, const tap_row *t,
                             int64_t oy, int64_t ox, int64_t length)
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

/* The contiguous loops below go by blocks of 4, which the compiler turns
 * into one SSE operation each (its default cost model at -O2 does not
 * vectorise loops of a run-time length); runs are short (an output row:
 * 8 pixels in the bundled CNN), so the per-run overhead is what counts. */
static void copy_floats(float *restrict out, const float *restrict in,
                        int64_t n)
{
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        out[i] = in[i];
        out[i + 1] = in[i + 1];
        out[i + 2] = in[i + 2];
        out[i + 3] = in[i + 3];
    }
    for (; i < n; i++)
        out[i] = in[i];
}

static void add_floats(float *restrict out, const float *restrict in,
                       int64_t n)
{
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        out[i] += in[i];
        out[i + 1] += in[i + 1];
        out[i + 2] += in[i + 2];
        out[i + 3] += in[i + 3];
    }
    for (; i < n; i++)
        out[i] += in[i];
}

/* A tensor the columns come from or go to: x or dx, f32 or narrow. */
typedef struct typed_tensor {
    void *data;
    dfg_dtype dtype;
} typed_tensor;

/* out[0, r.length) = one run of an im2col row, read from the image that
 * starts at element `image` of t. */
static void gather_run(const row_run *r, const typed_tensor *t, int64_t image,
                       int64_t stride, float *out)
{
    int64_t n = r->end - r->first, at = image + r->source;
    for (int64_t i = 0; i < r->first; i++)
        out[i] = 0.0f;
    if (t->dtype != DFG_F32)
        for (int64_t i = 0; i < n; i++)
            out[r->first + i] = dfg_float_at(t->data, t->dtype, at + i * stride);
    else if (stride == 1)
        copy_floats(out + r->first, (const float *)t->data + at, n);
    else
        for (int64_t i = 0; i < n; i++)
            out[r->first + i] = ((const float *)t->data)[at + i * stride];
    for (int64_t i = r->end; i < r->length; i++)
        out[i] = 0.0f;
}

/* The image += one run of an im2col row held in col: its adjoint. */
static void scatter_run(const row_run *r, const float *col, int64_t stride,
                        const typed_tensor *t, int64_t image)
{
    const float *in = col + r->first;
    int64_t n = r->end - r->first, at = image + r->source;
    if (t->dtype != DFG_F32)
        for (int64_t i = 0; i < n; i++)
            dfg_float_put(t->data, t->dtype, at + i * stride,
                          dfg_float_at(t->data, t->dtype, at + i * stride) +
                              in[i]);
    else if (stride == 1)
        add_floats((float *)t->data + at, in, n);
    else
        for (int64_t i = 0; i < n; i++)
            ((float *)t->data)[at + i * stride] += in[i];
}

/* Walks the runs of im2col row `row` over a part of a chunk, in every
 * image of the part: gathers them from x into col (scatter == 0), or adds
 * them from col back into x (scatter == 1). */
static void walk_row(const dfg_conv_geometry *g, const dfg_im2col_dims *d,
                     const tap_row *t, const image_part *part, int scatter,
                     const typed_tensor *x, int64_t grp, float *col_row)
{
    int64_t oy = part->pixel / d->out_w, ox = part->pixel - oy * d->out_w;
    for (int64_t j = 0; j < part->count; oy++, ox = 0) {
        int64_t length = d->out_w - ox < part->count - j ? d->out_w - ox
                                                         : part->count - j;
        row_run r = run_of(d, t, oy, ox, length);
        for (int64_t n = 0; n < part->images; n++) {
            int64_t image = group_input(g, part->image + n, grp);
            float *cols = col_row + part->column + n * part->count + j;
            if (scatter) {
                if (r.end > r.first)
                    scatter_run(&r, cols, d->stride_w, x, image);
            } else {
                gather_run(&r, x, image, d->stride_w, cols);
            }
        }
        j += length;
    }
}

/* Every im2col row of the chunk [c0, c0 + cols), gathered or scattered. */
static void walk_chunk(const dfg_conv_geometry *g, const typed_tensor *x,
                       int64_t grp, int64_t c0, int64_t cols, float *col,
                       int scatter)
{
    dfg_im2col_dims d = dims_of(g);
    for (int64_t row = 0; row < g->k; row++) {
        tap_row t = tap_row_of(&d, row);
        image_part part = {0, 0, 0, 0, 0};
        while (next_part(g, c0, cols, &part))
            walk_row(g, &d, &t, &part, scatter, x, grp, col + row * cols);
    }
}

void dfg_cpu_conv_im2col(const dfg_conv_geometry *g, const void *x,
                         dfg_dtype dtype, int64_t grp, int64_t c0,
                         int64_t cols, float *col)
{
    /* Only read: the walk is shared with col2im, which writes. */
    const typed_tensor t = {(void *)x, dtype};
    walk_chunk(g, &t, grp, c0, cols, col, 0);
}

void dfg_cpu_conv_col2im_add(const dfg_conv_geometry *g, const float *col,
                             int64_t grp, int64_t c0, int64_t cols, void *dx,
                             dfg_dtype dtype)
{
    /* Only read: the walk is shared with im2col, which writes. */
    const typed_tensor t = {dx, dtype};
    walk_chunk(g, &t, grp, c0, cols, (float *)col, 1);
}
