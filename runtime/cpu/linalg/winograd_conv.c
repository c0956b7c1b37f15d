/* Winograd F(4x4, 3x3) convs on oneDNN's grouped 1x1 product
 * (winograd_conv.h). The compiler's workspace rule and the session build
 * the same product descriptor (product_make), so the bytes planned and
 * the bytes used cannot disagree. */
#include "runtime/cpu/linalg/winograd_conv.h"

#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "runtime/cpu/linalg/conv3x3_blocked.h"
#include "runtime/cpu/onednn/dnnl_weights.h"
#include "util/error.h"
#include "ir/layout_rule.h"
#include "util/memory.h"
#include "runtime/cpu/parallel.h"
#include "runtime/cpu/linalg/winograd_transforms.h"

#define PART_ALIGN 64
#define P DFG_WINOGRAD_POSITIONS

/* The shapes where Winograd wins, and whose transformed filters cost
 * little memory. Measured conv by conv on a 2-core AMD EPYC (AVX2) with
 * oneDNN 2.6.3, each step of resnet50, googlenet and squeezenet1_0 at
 * batch 1 timed alone (dfgc bench --profile), Winograd / direct
 * `jit:avx2`, one thread:
 *   128->128 28x28 0.56, 256->256 14x14 0.56, 512->512 7x7 0.68,
 *   64->64 56x56 0.85, 128->192 28x28 0.57, 64->192 56x56 0.74,
 *   96->208 14x14 0.79, 160->320 7x7 0.87, 64->256 13x13 0.81,
 *   48->192 27x27 0.70, 32->128 54x54 0.94, 32->96 28x28 1.36,
 *   48->128 7x7 1.93, 16..32->32..128 at 7x7 to 28x28 1.7-2.7,
 *   16->64 54x54 1.55;
 * and two threads: 64->64 56x56 0.43, 128->128 28x28 0.43,
 * 256->256 14x14 0.59, 512->512 7x7 0.84, 128->192 28x28 0.41,
 * 96->208 14x14 0.55, 160->320 7x7 0.80.
 * Below 48 input channels the transforms cost more than the product
 * saves, and an image under 2M cin * cout * pixels (a ninth of its
 * multiply-adds) is too small to pay for them either. densenet121's
 * 128->32 convs at 56x56 and 28x28 gained nothing (the model's one-
 * thread CPU time 73.2 ms direct, 73.8 ms Winograd): under 64 outputs
 * the direct kernel stays.
 * Memory: U holds 36 values per filter where the plain weights hold 9,
 * and the time saved per byte of U grows with the tiles of an image.
 * Only convs with at least 7 tiles across an image (25 columns and more)
 * and at most 32768 filters (cin * cout) run as Winograd: on every 3x3
 * conv above, resnet50's peak RSS went from 121 to 253 MiB (its 256-
 * and 512-channel stages: 3.5 of the 9.6 ms Winograd saved it on two
 * threads), and googlenet's 14x14 convs added 8.4 MiB of U for 1.0 ms
 * (docs/BENCHMARKS.md). The rows are not counted: a conv run band by
 * band of rows (passes/tiling/tile_spatial.c) keeps its image's width, and its
 * bands share one U (winograd_choice.h), so a band's few rows say
 * nothing of what U costs per tile of the image.
 * On nChw16c (AVX-512: a 2-core AMD EPYC Zen 5, 2 threads, each step
 * timed alone in its model, Winograd / direct `jit:avx512_core`, batch
 * 1 and 8): 64->64 56x56 1.02-1.08 (resnet50's layer1), 48->192 27x27
 * 1.12 (squeezenet1_0's), but 96->96 35x35 0.90, 64->192 56x56 0.74,
 * 80->192 71x71 0.70, 128->128 28x28 0.67-0.85, 64->256 27x27 0.83:
 * there from 64 inputs and 96 outputs. */
static int shape_wins(const dfg_conv_geometry *g, int64_t block)
{
    return g->in_channels >= (block == 16 ? 64 : 48) &&
           g->out_channels >= (block == 16 ? 96 : 64) &&
           g->in_channels * g->out_channels <= 32768 &&
           (g->out_w + DFG_WINOGRAD_TILE - 1) / DFG_WINOGRAD_TILE >= 7 &&
           g->in_channels * g->out_channels * g->pixels >= ((int64_t)2 << 20);
}

/* Fills *w for these operands; -1 when Winograd does not take them. */
static int geometry_make(const dfg_attrs *attrs, const dfg_type *in,
                         int32_t n_in, const dfg_type *out,
                         dfg_winograd_geometry *w)
{
    dfg_conv_geometry g;
    if (n_in < 1 ||
        dfg_conv3x3_blocked_geometry(attrs, in, n_in, out, in[0].layout,
                                     &g) != 0 ||
        g.stride[0] != 1 || g.stride[1] != 1 ||
        !dfg_winograd_output_takes(attrs) ||
        !shape_wins(&g, dfg_layout_block(in[0].layout)))
        return -1;
    *w = (dfg_winograd_geometry){
        .batch = g.batch,
        .in_channels = g.in_channels,
        .out_channels = g.out_channels,
        .in_h = g.in_h,
        .in_w = g.in_w,
        .out_h = g.out_h,
        .out_w = g.out_w,
        .pad_top = g.pad_top,
        .pad_left = g.pad_left,
        .block = dfg_layout_block(in[0].layout),
        .tiles_h = (g.out_h + DFG_WINOGRAD_TILE - 1) / DFG_WINOGRAD_TILE,
        .tiles_w = (g.out_w + DFG_WINOGRAD_TILE - 1) / DFG_WINOGRAD_TILE,
    };
    w->tiles = g.batch * w->tiles_h * w->tiles_w;
    /* As many tiles a chunk as the budget holds, then evened out over
     * the chunks that takes, so that the last one is not a sliver. */
    int64_t per_tile = (int64_t)P * (int64_t)sizeof(float) *
                       (g.in_channels + g.out_channels);
    int64_t most = DFG_WINOGRAD_CHUNK_BYTES / per_tile;
    most = most < 1 ? 1 : most;
    int64_t chunks = (w->tiles + most - 1) / most;
    w->chunk = (w->tiles + chunks - 1) / chunks;
    return 0;
}

int dfg_winograd_takes(const dfg_attrs *attrs, const dfg_type *in,
                       int32_t n_in, const dfg_type *out)
{
    dfg_winograd_geometry w;
    return geometry_make(attrs, in, n_in, out, &w) == 0;
}

/* The product at one position p of the tile: a 1x1 convolution of V[p]
 * [1, cin, chunk, 1] into M[p] [1, cout, chunk, 1], both in the conv's
 * blocked layout (nChw8c, nChw16c), by U[p] [cout, cin, 1, 1] in the
 * OIhw8i8o (OIhw16i16o) layout oneDNN's `jit_1x1:avx2` (`avx512_core`)
 * chooses, needing no scratchpad. One primitive serves the 36 positions,
 * which the threads share out, each running its positions' products
 * alone (a grouped convolution with a group per position ran on oneDNN
 * 2.6's slower `jit:avx2`, 4 GFLOP/s; 36 products one after the other,
 * each split over the threads, lost to the direct kernel at 7x7 and
 * 13x13 on two threads). u_plain and u_chosen are all positions'
 * filters, [P, cout, cin, 1, 1], goihw and gOIhw8i8o (gOIhw16i16o). */
typedef struct product {
    dnnl_memory_desc_t v, m, u_plain, u_chosen, u_one;
    dnnl_primitive_desc_t pd;
    int64_t v_bytes, m_bytes; /* aligned, all positions */
} product;

static int product_make(dnnl_engine_t engine, const dfg_winograd_geometry *w,
                        product *p)
{
    memset(p, 0, sizeof *p);
    dnnl_dims_t v_dims = {1, w->in_channels, w->chunk, 1};
    dnnl_dims_t m_dims = {1, w->out_channels, w->chunk, 1};
    dnnl_dims_t u_dims = {w->out_channels, w->in_channels, 1, 1};
    dnnl_dims_t all_dims = {P, w->out_channels, w->in_channels, 1, 1};
    dnnl_dims_t ones = {1, 1}, zeros = {0, 0};
    dnnl_memory_desc_t u_any;
    dnnl_convolution_desc_t desc;
    dnnl_primitive_attr_t attr = NULL;
    int wide = w->block == 16;
    int ok =
        dnnl_memory_desc_init_by_tag(&p->v, 4, v_dims, dnnl_f32,
                                     wide ? dnnl_nChw16c : dnnl_nChw8c) ==
            dnnl_success &&
        dnnl_memory_desc_init_by_tag(&p->m, 4, m_dims, dnnl_f32,
                                     wide ? dnnl_nChw16c : dnnl_nChw8c) ==
            dnnl_success &&
        dnnl_memory_desc_init_by_tag(&p->u_one, 4, u_dims, dnnl_f32,
                                     wide ? dnnl_OIhw16i16o
                                          : dnnl_OIhw8i8o) == dnnl_success &&
        dnnl_memory_desc_init_by_tag(&p->u_plain, 5, all_dims, dnnl_f32,
                                     dnnl_goihw) == dnnl_success &&
        dnnl_memory_desc_init_by_tag(&p->u_chosen, 5, all_dims, dnnl_f32,
                                     wide ? dnnl_gOIhw16i16o
                                          : dnnl_gOIhw8i8o) == dnnl_success &&
        dnnl_memory_desc_init_by_tag(&u_any, 4, u_dims, dnnl_f32,
                                     dnnl_format_tag_any) == dnnl_success &&
        dnnl_convolution_forward_desc_init(
            &desc, dnnl_forward_inference, dnnl_convolution_direct, &p->v,
            &u_any, NULL, &p->m, ones, zeros, zeros) == dnnl_success &&
        dnnl_primitive_attr_create(&attr) == dnnl_success &&
        dnnl_primitive_attr_set_scratchpad_mode(
            attr, dnnl_scratchpad_mode_user) == dnnl_success &&
        dnnl_primitive_desc_create(&p->pd, &desc, attr, engine, NULL) ==
            dnnl_success &&
        /* Threads run products side by side: none may need scratch. */
        dnnl_memory_desc_get_size(dnnl_primitive_desc_query_md(
            p->pd, dnnl_query_scratchpad_md, 0)) == 0 &&
        /* The positions' filters lie one after the other in the layout
         * it chose (on another CPU it may choose another: then the
         * direct kernel runs). */
        dnnl_memory_desc_equal(
            &p->u_one,
            dnnl_primitive_desc_query_md(p->pd, dnnl_query_weights_md, 0));
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    if (!ok) {
        if (p->pd)
            dnnl_primitive_desc_destroy(p->pd);
        return -1;
    }
    p->v_bytes = dfg_align_up(
        P * (int64_t)dnnl_memory_desc_get_size(&p->v), PART_ALIGN);
    p->m_bytes = dfg_align_up(
        P * (int64_t)dnnl_memory_desc_get_size(&p->m), PART_ALIGN);
    return 0;
}

static int64_t workspace_of(const product *p)
{
    return p->v_bytes + p->m_bytes;
}

int64_t dfg_winograd_workspace_bytes(dnnl_engine_t engine,
                                     const dfg_attrs *attrs,
                                     const dfg_type *in, int32_t n_in,
                                     const dfg_type *out)
{
    dfg_winograd_geometry w;
    product p;
    if (geometry_make(attrs, in, n_in, out, &w) != 0 ||
        product_make(engine, &w, &p) != 0)
        return 0;
    int64_t bytes = workspace_of(&p);
    dnnl_primitive_desc_destroy(p.pd);
    return bytes;
}

struct dfg_winograd_conv {
    dfg_winograd_geometry geometry;
    const dfg_attrs *attrs;
    const float *x, *bias, *residual;
    float *y, *v, *m;
    dnnl_primitive_t product;
    dnnl_memory_t memories[3 * P]; /* V[p], M[p], U[p] of each position */
    dnnl_exec_arg_t args[P][3];
    dnnl_stream_t *streams; /* one a thread */
    int n_streams;
    dfg_dnnl_weights *weights;
    char impl[64];
};

/* plain: filters [cout][cin][3][3]; to: U as to_md says (goihw). */
static void filters_transform(const void *plain,
                              const dnnl_memory_desc_t *to_md, void *to)
{
    dfg_winograd_filters(plain, to_md->dims[1], to_md->dims[2], to);
}

/* Makes c's memories and primitive from p over step; -1 on failure. */
static int conv_make(dfg_winograd_conv *c, dnnl_engine_t engine,
                     const product *p, const dfg_kernel_args *step,
                     const dfg_allocator *allocator)
{
    const dfg_winograd_geometry *w = &c->geometry;
    char *ws = step->workspace, *u = NULL;
    c->v = (float *)ws;
    c->m = (float *)(ws + p->v_bytes);
    size_t w_bytes = (size_t)(w->out_channels * w->in_channels * 9) *
                     sizeof(float);
    if (dfg_dnnl_weights_acquire_transformed(
            engine, filters_transform, 0, &p->u_plain, step->in[1], w_bytes,
            &p->u_chosen, (step->shared_inputs & 2u) != 0,
            (step->droppable_inputs & 2u) != 0, &c->weights,
            (void **)&u) != DFG_OK)
        return -1;
    size_t v_one = dnnl_memory_desc_get_size(&p->v),
           m_one = dnnl_memory_desc_get_size(&p->m),
           u_one = dnnl_memory_desc_get_size(&p->u_one);
    c->n_streams = omp_get_max_threads();
    c->streams = dfg_calloc(allocator, (size_t)c->n_streams,
                            sizeof *c->streams);
    if (!c->streams ||
        dnnl_primitive_create(&c->product, p->pd) != dnnl_success)
        return -1;
    for (int t = 0; t < c->n_streams; t++)
        if (dnnl_stream_create(&c->streams[t], engine,
                               dnnl_stream_default_flags) != dnnl_success)
            return -1;
    for (int q = 0; q < P; q++) {
        dnnl_memory_t *mem = &c->memories[3 * q];
        if (dnnl_memory_create(&mem[0], &p->v, engine,
                               (char *)c->v + q * v_one) != dnnl_success ||
            dnnl_memory_create(&mem[1], &p->m, engine,
                               (char *)c->m + q * m_one) != dnnl_success ||
            dnnl_memory_create(&mem[2], &p->u_one, engine, u + q * u_one) !=
                dnnl_success)
            return -1;
        c->args[q][0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, mem[0]};
        c->args[q][1] = (dnnl_exec_arg_t){DNNL_ARG_DST, mem[1]};
        c->args[q][2] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, mem[2]};
    }
    const char *impl = NULL;
    dnnl_primitive_desc_query(p->pd, dnnl_query_impl_info_str, 0, &impl);
    snprintf(c->impl, sizeof c->impl, "winograd_4x4 + %s",
             impl ? impl : "?");
    return 0;
}

dfg_status dfg_winograd_conv_create(dnnl_engine_t engine,
                                    const dfg_kernel_args *step,
                                    const dfg_allocator *allocator,
                                    dfg_winograd_conv **out)
{
    *out = NULL;
    dfg_winograd_geometry w;
    product p;
    if (!(step->constant_inputs & 2u) ||
        geometry_make(step->attrs, step->in_types, step->n_inputs,
                      step->out_types, &w) != 0 ||
        product_make(engine, &w, &p) != 0)
        return DFG_OK;
    if (step->workspace_bytes < workspace_of(&p)) {
        dnnl_primitive_desc_destroy(p.pd);
        return DFG_OK;
    }
    dfg_winograd_conv *c = dfg_calloc(allocator, 1, sizeof *c);
    if (!c) {
        dnnl_primitive_desc_destroy(p.pd);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "cpu backend: out of memory for a Winograd conv");
    }
    c->geometry = w;
    c->attrs = step->attrs;
    c->x = step->in[0];
    c->bias = step->n_inputs > 2 ? step->in[2] : NULL;
    c->residual = step->n_inputs > 3 ? step->in[3] : NULL;
    c->y = step->out[0];
    int made = conv_make(c, engine, &p, step, allocator);
    dnnl_primitive_desc_destroy(p.pd);
    if (made != 0) {
        dfg_winograd_conv_destroy(c, allocator);
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "cpu backend: oneDNN could not prepare the product "
                         "of a Winograd conv2d it had planned");
    }
    *out = c;
    return DFG_OK;
}

/* The 36 products of a chunk, shared out over the threads; -1 if one
 * failed. Inside the parallel region oneDNN runs each on its caller's
 * thread alone. */
static int products_run(const dfg_winograd_conv *c)
{
    int failed = 0;
#pragma omp parallel num_threads(c->n_streams) reduction(| : failed)
    {
        int64_t begin, end;
        dfg_cpu_team_share(P, 1, &begin, &end);
        dnnl_stream_t stream = c->streams[omp_get_thread_num()];
        for (int64_t q = begin; q < end; q++)
            failed |= dnnl_primitive_execute(c->product, stream, 3,
                                             c->args[q]) != dnnl_success;
    }
    return failed ? -1 : 0;
}

dfg_status dfg_winograd_conv_run(const dfg_winograd_conv *c)
{
    const dfg_winograd_geometry *w = &c->geometry;
    for (int64_t first = 0; first < w->tiles; first += w->chunk) {
        int64_t count = w->tiles - first < w->chunk ? w->tiles - first
                                                     : w->chunk;
        if (count < w->chunk) /* the last chunk's unused tiles: no garbage */
            for (int64_t q = 0; q < P * w->in_channels / w->block; q++)
                memset(c->v + (q * w->chunk + count) * w->block, 0,
                       (size_t)((w->chunk - count) * w->block) *
                           sizeof(float));
        dfg_winograd_input(w, c->x, c->v, first, count);
        if (products_run(c) != 0)
            return dfg_error(DFG_ERR_INTERNAL,
                             "oneDNN conv2d (%s) failed to run", c->impl);
        dfg_winograd_output(w, c->m, c->bias, c->residual, c->attrs, c->y,
                            first, count);
    }
    return DFG_OK;
}

const char *dfg_winograd_conv_impl(const dfg_winograd_conv *c)
{
    return c->impl;
}

void dfg_winograd_conv_drop_plain(const dfg_winograd_conv *c)
{
    dfg_dnnl_weights_drop_plain(c->weights);
}

void dfg_winograd_conv_destroy(dfg_winograd_conv *c,
                               const dfg_allocator *allocator)
{
    if (!c)
        return;
    if (c->product)
        dnnl_primitive_destroy(c->product);
    for (int i = 0; i < 3 * P; i++)
        if (c->memories[i])
            dnnl_memory_destroy(c->memories[i]);
    for (int t = 0; c->streams && t < c->n_streams; t++)
        if (c->streams[t])
            dnnl_stream_destroy(c->streams[t]);
    dfg_free(allocator, c->streams);
    dfg_dnnl_weights_release(c->weights);
    dfg_free(allocator, c);
}
