/* 3x3 convs over small images as a 1x1 product over their columns
 * (columns_conv.h). The compiler's workspace rule and the session build
 * the same product descriptor (product_make), so the bytes planned and
 * the bytes used cannot disagree. */
#include "runtime/cpu/linalg/columns_conv.h"

#include <stdio.h>
#include <string.h>

#include "runtime/cpu/linalg/conv3x3_blocked.h"
#include "runtime/cpu/onednn/dnnl_post_ops.h"
#include "runtime/cpu/onednn/dnnl_weights.h"
#include "util/error.h"
#include "util/memory.h"

#define PART_ALIGN 64
#define TAPS 9 /* of a 3x3 filter */

/* The shapes where the columns win. Measured step by step on a 2-core
 * AMD EPYC (AVX2) with oneDNN 2.6.3, each step's least time over
 * interleaved runs (dfgc bench --profile), direct `jit:avx2` -> columns,
 * one thread: resnet50 at batch 1, 512->512 at 7x7 3.7 -> 3.1 ms (the
 * one from 14x14 by stride 2: 4.0 -> 3.2), 256->256 at 14x14 3.0 ->
 * 2.85 (from 28x28 by stride 2: 3.25 -> 2.96); at batch 8 the 7x7 ones
 * 26-30 -> 22-23 ms, the 14x14 ones 23-25 -> 20-22; googlenet's
 * 160->320 and 192->384 at 7x7 0.69 -> 0.62 and 0.95 -> 0.87; but
 * googlenet's 96..160 -> 208..320 at 14x14 7.10 -> 7.32 together (and
 * squeezenet1_0's 64->256 at 13x13 0.63 -> 0.60, within the noise at
 * batch 1): above 8x8 only with 256 input channels. At 28x28 the direct
 * kernel and Winograd are the faster.
 * On nChw16c (AVX-512: a 2-core AMD EPYC Zen 5, oneDNN 2.6.3, 2
 * threads, `jit:avx512_core` -> columns + `jit_1x1:avx512_core`):
 * resnet50's 512->512 at 7x7 0.91 -> 0.64 ms, but its 256->256 at
 * 14x14 0.59 -> 0.72: at 8x8 and fewer only. */
static int shape_wins(const dfg_conv_geometry *g, int64_t block)
{
    return g->in_channels >= 64 && g->out_channels >= 64 &&
           (g->pixels <= 8 * 8 ||
            (block == 8 && g->pixels <= 14 * 14 && g->in_channels >= 256));
}

/* Fills *g and *block (channels a block of x, y and the columns) for
 * these operands; -1 when the columns do not take them. */
static int geometry_make(const dfg_attrs *attrs, const dfg_type *in,
                         int32_t n_in, const dfg_type *out,
                         dfg_conv_geometry *g, int64_t *block)
{
    int32_t layout = n_in > 0 ? in[0].layout : DFG_LAYOUT_PLAIN;
    if (layout != DFG_LAYOUT_NCHW8C && layout != DFG_LAYOUT_NCHW16C)
        return -1;
    *block = dfg_layout_block(layout);
    return dfg_conv3x3_blocked_geometry(attrs, in, n_in, out, layout, g) ==
                       0 &&
                   shape_wins(g, *block)
               ? 0
               : -1;
}

int dfg_columns_takes(const dfg_attrs *attrs, const dfg_type *in,
                      int32_t n_in, const dfg_type *out)
{
    dfg_conv_geometry g;
    int64_t block;
    return geometry_make(attrs, in, n_in, out, &g, &block) == 0;
}

/* The product: a 1x1 convolution of one image's columns [1, 9 * cin, oh,
 * ow] into its output [1, cout, oh, ow], both blocked as x, filters
 * [cout, 9 * cin, 1, 1] (plain oihw as columns_filters lays them out,
 * then in the layout oneDNN chose), bias and post-ops as the step's. */
typedef struct product {
    int64_t block;
    dnnl_memory_desc_t columns, y, w_plain, bias;
    const dnnl_memory_desc_t *w_chosen;
    dnnl_primitive_desc_t pd;
    int64_t columns_bytes, scratch_bytes; /* aligned */
} product;

/* 1 if the conv2d of these inputs has a bias. */
static int has_bias(const dfg_type *in, int32_t n_in)
{
    return n_in > 2 && in[2].rank >= 0;
}

static int product_make(dnnl_engine_t engine, const dfg_attrs *attrs,
                        const dfg_conv_geometry *g, int64_t block, int bias,
                        product *p)
{
    memset(p, 0, sizeof *p);
    p->block = block;
    dnnl_format_tag_t blocked = block == 16 ? dnnl_nChw16c : dnnl_nChw8c;
    int64_t k = TAPS * g->in_channels;
    dnnl_dims_t c_dims = {1, k, g->out_h, g->out_w};
    dnnl_dims_t y_dims = {1, g->out_channels, g->out_h, g->out_w};
    dnnl_dims_t w_dims = {g->out_channels, k, 1, 1};
    dnnl_dims_t b_dims = {g->out_channels};
    dnnl_dims_t ones = {1, 1}, zeros = {0, 0};
    dnnl_memory_desc_t w_any;
    dnnl_convolution_desc_t desc;
    dnnl_primitive_attr_t attr = NULL;
    const char *impl = NULL;
    int ok =
        dnnl_memory_desc_init_by_tag(&p->columns, 4, c_dims, dnnl_f32,
                                     blocked) == dnnl_success &&
        dnnl_memory_desc_init_by_tag(&p->y, 4, y_dims, dnnl_f32,
                                     blocked) == dnnl_success &&
        dnnl_memory_desc_init_by_tag(&p->w_plain, 4, w_dims, dnnl_f32,
                                     dnnl_oihw) == dnnl_success &&
        dnnl_memory_desc_init_by_tag(&p->bias, 1, b_dims, dnnl_f32,
                                     dnnl_a) == dnnl_success &&
        dnnl_memory_desc_init_by_tag(&w_any, 4, w_dims, dnnl_f32,
                                     dnnl_format_tag_any) == dnnl_success &&
        dnnl_convolution_forward_desc_init(
            &desc, dnnl_forward_inference, dnnl_convolution_direct,
            &p->columns, &w_any, bias ? &p->bias : NULL, &p->y, ones, zeros,
            zeros) == dnnl_success &&
        dnnl_primitive_attr_create(&attr) == dnnl_success &&
        dnnl_primitive_attr_set_scratchpad_mode(
            attr, dnnl_scratchpad_mode_user) == dnnl_success &&
        dfg_dnnl_post_ops_set_leaving(attr, attrs, 0) == 0 &&
        dnnl_primitive_desc_create(&p->pd, &desc, attr, engine, NULL) ==
            dnnl_success &&
        dnnl_primitive_desc_query(p->pd, dnnl_query_impl_info_str, 0,
                                  &impl) == dnnl_success &&
        /* Only oneDNN's 1x1 kernel is the faster (another CPU may get
         * another: then the direct kernel runs). */
        impl && strstr(impl, "1x1") != NULL;
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    if (!ok) {
        if (p->pd)
            dnnl_primitive_desc_destroy(p->pd);
        p->pd = NULL;
        return -1;
    }
    p->w_chosen = dnnl_primitive_desc_query_md(p->pd, dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t *scratch =
        dnnl_primitive_desc_query_md(p->pd, dnnl_query_scratchpad_md, 0);
    p->columns_bytes = dfg_align_up(
        (int64_t)dnnl_memory_desc_get_size(&p->columns), PART_ALIGN);
    p->scratch_bytes = dfg_align_up(
        scratch ? (int64_t)dnnl_memory_desc_get_size(scratch) : 0, PART_ALIGN);
    if (p->scratch_bytes == 0)
        p->scratch_bytes = PART_ALIGN;
    return 0;
}

static int64_t workspace_of(const product *p)
{
    return p->columns_bytes + p->scratch_bytes;
}

int64_t dfg_columns_workspace_bytes(dnnl_engine_t engine,
                                    const dfg_attrs *attrs,
                                    const dfg_type *in, int32_t n_in,
                                    const dfg_type *out)
{
    dfg_conv_geometry g;
    int64_t block;
    product p;
    if (geometry_make(attrs, in, n_in, out, &g, &block) != 0 ||
        product_make(engine, attrs, &g, block, has_bias(in, n_in), &p) != 0)
        return 0;
    int64_t bytes = workspace_of(&p);
    dnnl_primitive_desc_destroy(p.pd);
    return bytes;
}

struct dfg_columns_conv {
    dfg_conv_geometry geometry;
    int64_t block; /* channels a block of x, y and the columns */
    const float *x, *residual;
    float *y, *columns;
    dnnl_primitive_t product;
    /* Columns, filters, scratchpad, bias (if any), then the output of
     * each image. */
    dnnl_memory_t *memories;
    int n_memories;
    dnnl_exec_arg_t args[5];
    int n_args;
    dfg_dnnl_weights *weights;
    dfg_dnnl_left left; /* the post-op the product left to dfg */
    char impl[64];
};

/* plain: filters [cout][cin][3][3]; to: [cout][9 * cin] with the input
 * channel of the columns, (c / b * 9 + tap) * b + c % b for columns of
 * b channels a block, plain (oihw) or as OIhw<b>i<b>o (to_md says
 * which; any other layout is reordered from the plain one), from
 * to_md's offset0 on: each output channel on its own, so a slice of
 * them may go alone (dfg_dnnl_weights_acquire_transformed's by_rows). */
static void filters_blocked(const void *plain, const dnnl_memory_desc_t *to_md,
                            void *to, int64_t b)
{
    const float *w = plain;
    float *u = (float *)to + to_md->offset0;
    int64_t cout = to_md->dims[0], k = to_md->dims[1], cin = k / TAPS;
    int blocked = to_md->format_desc.blocking.inner_nblks > 0;
    for (int64_t o = 0; o < cout; o++)
        for (int64_t c = 0; c < cin; c++)
            for (int64_t t = 0; t < TAPS; t++) {
                int64_t i = (c / b * TAPS + t) * b + c % b;
                int64_t at =
                    blocked
                        ? ((o / b * (k / b) + i / b) * b + i % b) * b + o % b
                        : o * k + i;
                u[at] = w[(o * cin + c) * TAPS + t];
            }
}

static void filters_8(const void *plain, const dnnl_memory_desc_t *to_md,
                      void *to)
{
    filters_blocked(plain, to_md, to, 8);
}

static void filters_16(const void *plain, const dnnl_memory_desc_t *to_md,
                       void *to)
{
    filters_blocked(plain, to_md, to, 16);
}

/* The layout the filters are written in for p: the chosen one when it is
 * OIhw<b>i<b>o (no reorder, no second copy while the filters are made),
 * else plain. */
static const dnnl_memory_desc_t *filters_md(const product *p,
                                            dnnl_memory_desc_t *oi)
{
    dnnl_format_tag_t tag =
        p->block == 16 ? dnnl_OIhw16i16o : dnnl_OIhw8i8o;
    return dnnl_memory_desc_init_by_tag(oi, 4, p->w_plain.dims, dnnl_f32,
                                        tag) == dnnl_success &&
                   dnnl_memory_desc_equal(oi, p->w_chosen)
               ? p->w_chosen
               : &p->w_plain;
}

static int memory_add(dfg_columns_conv *c, dnnl_engine_t engine,
                      const dnnl_memory_desc_t *md, const void *data)
{
    return dnnl_memory_create(&c->memories[c->n_memories++], md, engine,
                              (void *)data) == dnnl_success
               ? 0
               : -1;
}

/* Makes c's memories and primitive from p over step; -1 on failure. */
static int conv_make(dfg_columns_conv *c, dnnl_engine_t engine,
                     const product *p, const dfg_kernel_args *step,
                     const dfg_allocator *allocator)
{
    const dfg_conv_geometry *g = &c->geometry;
    char *ws = step->workspace;
    c->columns = (float *)ws;
    void *u = NULL;
    size_t w_bytes = (size_t)(g->out_channels * g->in_channels * TAPS) *
                     sizeof(float);
    dnnl_memory_desc_t scratch, oi;
    dnnl_dims_t scratch_dims = {p->scratch_bytes};
    const void *bias = has_bias(step->in_types, step->n_inputs) ? step->in[2]
                                                                : NULL;
    c->memories = dfg_calloc(allocator, (size_t)(4 + g->batch),
                             sizeof *c->memories);
    if (!c->memories ||
        dfg_dnnl_weights_acquire_transformed(
            engine, c->block == 16 ? filters_16 : filters_8, 1,
            filters_md(p, &oi), step->in[1],
            w_bytes,
            p->w_chosen, (step->shared_inputs & 2u) != 0,
            (step->droppable_inputs & 2u) != 0, &c->weights, &u) != DFG_OK ||
        dnnl_memory_desc_init_by_tag(&scratch, 1, scratch_dims, dnnl_u8,
                                     dnnl_a) != dnnl_success ||
        memory_add(c, engine, &p->columns, c->columns) != 0 ||
        memory_add(c, engine, p->w_chosen, u) != 0 ||
        memory_add(c, engine, &scratch, ws + p->columns_bytes) != 0 ||
        (bias && memory_add(c, engine, &p->bias, bias) != 0))
        return -1;
    c->args[c->n_args++] = (dnnl_exec_arg_t){DNNL_ARG_SRC, c->memories[0]};
    c->args[c->n_args++] =
        (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, c->memories[1]};
    c->args[c->n_args++] =
        (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, c->memories[2]};
    if (bias)
        c->args[c->n_args++] =
            (dnnl_exec_arg_t){DNNL_ARG_BIAS, c->memories[3]};
    size_t image = dnnl_memory_desc_get_size(&p->y);
    for (int64_t n = 0; n < g->batch; n++)
        if (memory_add(c, engine, &p->y, (char *)c->y + n * image) != 0)
            return -1;
    if (dnnl_primitive_create(&c->product, p->pd) != dnnl_success)
        return -1;
    const char *impl = NULL;
    dnnl_primitive_desc_query(p->pd, dnnl_query_impl_info_str, 0, &impl);
    dfg_dnnl_left_bind(&c->left, step->attrs, step->out[0],
                       &step->out_types[0]);
    snprintf(c->impl, sizeof c->impl, "columns + %s%s", impl ? impl : "?",
             dfg_dnnl_left_name(&c->left));
    return 0;
}

dfg_status dfg_columns_conv_create(dnnl_engine_t engine,
                                   const dfg_kernel_args *step,
                                   const dfg_allocator *allocator,
                                   dfg_columns_conv **out)
{
    *out = NULL;
    dfg_conv_geometry g;
    int64_t block;
    product p;
    if (!(step->constant_inputs & 2u) ||
        geometry_make(step->attrs, step->in_types, step->n_inputs,
                      step->out_types, &g, &block) != 0 ||
        product_make(engine, step->attrs, &g, block,
                     has_bias(step->in_types, step->n_inputs), &p) != 0)
        return DFG_OK;
    if (step->workspace_bytes < workspace_of(&p)) {
        dnnl_primitive_desc_destroy(p.pd);
        return DFG_OK;
    }
    dfg_columns_conv *c = dfg_calloc(allocator, 1, sizeof *c);
    if (!c) {
        dnnl_primitive_desc_destroy(p.pd);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "cpu backend: out of memory for a columns conv");
    }
    c->geometry = g;
    c->block = block;
    c->x = step->in[0];
    c->residual = step->n_inputs > 3 ? step->in[3] : NULL;
    c->y = step->out[0];
    int made = conv_make(c, engine, &p, step, allocator);
    dnnl_primitive_desc_destroy(p.pd);
    if (made != 0) {
        dfg_columns_conv_destroy(c, allocator);
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "cpu backend: oneDNN could not prepare the product "
                         "of a columns conv2d it had planned");
    }
    *out = c;
    return DFG_OK;
}

/* Image n's columns: block (cb * 9 + tap) holds, for every output pixel,
 * the channels of input block cb under that tap (zeros in the
 * padding). */
static void columns_fill(const dfg_columns_conv *c, int64_t n)
{
    const dfg_conv_geometry *g = &c->geometry;
    const int64_t width = c->block; /* channels a block */
    int64_t blocks = g->in_channels / width * TAPS;
    int64_t in_plane = g->in_h * g->in_w * width;
    const float *x = c->x + n * (g->in_channels / width) * in_plane;
#pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < blocks; b++) {
        int64_t cb = b / TAPS, ky = b % TAPS / 3, kx = b % 3;
        const float *plane = x + cb * in_plane;
        float *col = c->columns + b * g->pixels * width;
        for (int64_t oh = 0; oh < g->out_h; oh++) {
            int64_t ih = oh * g->stride[0] - g->pad_top + ky;
            float *row = col + oh * g->out_w * width;
            if (ih < 0 || ih >= g->in_h) {
                memset(row, 0, (size_t)(g->out_w * width) * sizeof(float));
                continue;
            }
            const float *in_row = plane + ih * g->in_w * width;
            for (int64_t ow = 0; ow < g->out_w; ow++) {
                int64_t iw = ow * g->stride[1] - g->pad_left + kx;
                if (iw < 0 || iw >= g->in_w)
                    memset(row + ow * width, 0, width * sizeof(float));
                else
                    memcpy(row + ow * width, in_row + iw * width,
                           width * sizeof(float));
            }
        }
    }
}

dfg_status dfg_columns_conv_run(const dfg_columns_conv *c,
                                dnnl_stream_t stream)
{
    const dfg_conv_geometry *g = &c->geometry;
    /* A sum post-op adds what y holds. */
    if (c->residual && c->residual != c->y)
        memcpy(c->y, c->residual,
               (size_t)(g->batch * g->out_channels * g->pixels) *
                   sizeof(float));
    dnnl_exec_arg_t args[6];
    memcpy(args, c->args, (size_t)c->n_args * sizeof *args);
    int first_image = c->n_memories - (int)g->batch;
    for (int64_t n = 0; n < g->batch; n++) {
        columns_fill(c, n);
        args[c->n_args] = (dnnl_exec_arg_t){
            DNNL_ARG_DST, c->memories[first_image + n]};
        if (dnnl_primitive_execute(c->product, stream, c->n_args + 1, args) !=
            dnnl_success)
            return dfg_error(DFG_ERR_INTERNAL,
                             "oneDNN conv2d (%s) failed to run", c->impl);
    }
    dfg_dnnl_left_run(&c->left);
    return DFG_OK;
}

const char *dfg_columns_conv_impl(const dfg_columns_conv *c)
{
    return c->impl;
}

void dfg_columns_conv_drop_plain(const dfg_columns_conv *c)
{
    dfg_dnnl_weights_drop_plain(c->weights);
}

void dfg_columns_conv_destroy(dfg_columns_conv *c,
                              const dfg_allocator *allocator)
{
    if (!c)
        return;
    if (c->product)
        dnnl_primitive_destroy(c->product);
    for (int i = 0; i < c->n_memories; i++)
        dnnl_memory_destroy(c->memories[i]);
    dfg_free(allocator, c->memories);
    dfg_dnnl_weights_release(c->weights);
    dfg_free(allocator, c);
}
