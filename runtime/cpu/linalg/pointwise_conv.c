/* 1x1 convs over plain tensors as a matrix product (pointwise_conv.h).
 * The compiler's workspace rule and the session build the same product
 * descriptor (product_make), so the bytes planned and the bytes used
 * cannot disagree. */
#include "runtime/cpu/linalg/pointwise_conv.h"

#include <stdio.h>
#include <string.h>

#include "ir/geometry/conv_geometry.h"
#include "runtime/cpu/onednn/dnnl_calls.h"
#include "runtime/cpu/onednn/dnnl_formats.h"
#include "runtime/cpu/onednn/dnnl_post_ops.h"
#include "runtime/cpu/parallel.h"
#include "util/error.h"
#include "util/memory.h"

struct dfg_pointwise_conv {
    dfg_dnnl_calls calls; /* the product */
    const float *bias;    /* [cout], written into y first; NULL: none */
    float *y;
    int64_t rows, pixels; /* rows = batch * cout, each pixels long */
    int64_t cout;
    char impl[64];
};

static int has_bias(const dfg_type *in, int32_t n_in)
{
    return n_in > 2 && in[2].rank >= 0;
}

/* Fills *g for these operands; -1 when the product does not take them. */
static int geometry_make(const dfg_attrs *attrs, const dfg_type *in,
                         int32_t n_in, const dfg_type *out,
                         dfg_conv_geometry *g)
{
    if (n_in < 2 || (n_in > 3 && in[3].rank >= 0) || in[0].rank != 4 ||
        in[0].dtype != DFG_F32 || in[1].dtype != DFG_F32 ||
        out->dtype != DFG_F32 || in[0].layout != DFG_LAYOUT_PLAIN ||
        out->layout != DFG_LAYOUT_PLAIN ||
        (has_bias(in, n_in) && in[2].dtype != DFG_F32) ||
        dfg_conv_geometry_make(attrs, &in[0], &in[1], out, g) != DFG_OK)
        return -1;
    for (int32_t k = 0; k < attrs->n_post_ops; k++)
        if (attrs->post_ops[k] == DFG_POST_SUM)
            return -1;
    int pointwise = g->kernel_h == 1 && g->kernel_w == 1 && g->group == 1 &&
                    g->stride[0] == 1 && g->stride[1] == 1 &&
                    g->pad_top == 0 && g->pad_left == 0 &&
                    attrs->pads[2] == 0 && attrs->pads[3] == 0 &&
                    g->out_h == g->in_h && g->out_w == g->in_w;
    return pointwise && g->pixels >= DFG_POINTWISE_MIN_PIXELS ? 0 : -1;
}

int dfg_pointwise_takes(const dfg_attrs *attrs, const dfg_type *in,
                        int32_t n_in, const dfg_type *out)
{
    dfg_conv_geometry g;
    return geometry_make(attrs, in, n_in, out, &g) == 0;
}

/* The product's descriptors: filters [1, cout, cin] (broadcast over the
 * images), x [n, cin, pixels], y [n, cout, pixels], all row-major. */
typedef struct product {
    dnnl_memory_desc_t w, x, y;
    dnnl_primitive_desc_t pd;
} product;

/* *p for g with attrs' post-ops after a sum (the bias y holds) where
 * bias; -1 when oneDNN runs it on no library kernel. */
static int product_make(dnnl_engine_t engine, const dfg_attrs *attrs,
                        const dfg_conv_geometry *g, int bias, product *p)
{
    memset(p, 0, sizeof *p);
    dnnl_dims_t w_dims = {1, g->out_channels, g->in_channels};
    dnnl_dims_t x_dims = {g->batch, g->in_channels, g->pixels};
    dnnl_dims_t y_dims = {g->batch, g->out_channels, g->pixels};
    dnnl_matmul_desc_t desc;
    dnnl_primitive_attr_t attr = NULL;
    int ok =
        dnnl_memory_desc_init_by_tag(&p->w, 3, w_dims, dnnl_f32, dnnl_abc) ==
            dnnl_success &&
        dnnl_memory_desc_init_by_tag(&p->x, 3, x_dims, dnnl_f32, dnnl_abc) ==
            dnnl_success &&
        dnnl_memory_desc_init_by_tag(&p->y, 3, y_dims, dnnl_f32, dnnl_abc) ==
            dnnl_success &&
        dnnl_matmul_desc_init(&desc, &p->w, &p->x, NULL, &p->y) ==
            dnnl_success &&
        dnnl_primitive_attr_create(&attr) == dnnl_success &&
        dnnl_primitive_attr_set_scratchpad_mode(
            attr, dnnl_scratchpad_mode_user) == dnnl_success &&
        dfg_dnnl_post_ops_set_leaving(attr, attrs, bias) == 0;
    ok = ok && dnnl_primitive_desc_create(&p->pd, &desc, attr, engine, NULL) ==
                   dnnl_success;
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    if (ok && !dfg_dnnl_runs_library_kernel(p->pd))
        ok = 0;
    if (!ok && p->pd) {
        dnnl_primitive_desc_destroy(p->pd);
        p->pd = NULL;
    }
    return ok ? 0 : -1;
}

int64_t dfg_pointwise_workspace_bytes(dnnl_engine_t engine,
                                      const dfg_attrs *attrs,
                                      const dfg_type *in, int32_t n_in,
                                      const dfg_type *out)
{
    dfg_conv_geometry g;
    product p;
    if (geometry_make(attrs, in, n_in, out, &g) != 0 ||
        product_make(engine, attrs, &g, has_bias(in, n_in), &p) != 0)
        return 0;
    int64_t bytes = dfg_dnnl_scratchpad_bytes(p.pd);
    dnnl_primitive_desc_destroy(p.pd);
    return bytes > 0 ? bytes : 1;
}

dfg_status dfg_pointwise_conv_create(dnnl_engine_t engine,
                                     const dfg_kernel_args *step,
                                     const dfg_allocator *allocator,
                                     dfg_pointwise_conv **out)
{
    *out = NULL;
    dfg_conv_geometry g;
    product p;
    int bias = has_bias(step->in_types, step->n_inputs);
    if (!(step->constant_inputs & 2u) ||
        geometry_make(step->attrs, step->in_types, step->n_inputs,
                      step->out_types, &g) != 0 ||
        product_make(engine, step->attrs, &g, bias, &p) != 0)
        return DFG_OK;
    int64_t scratch_bytes = dfg_dnnl_scratchpad_bytes(p.pd);
    if (scratch_bytes > step->workspace_bytes) {
        dnnl_primitive_desc_destroy(p.pd);
        return DFG_OK;
    }
    dfg_pointwise_conv *c = dfg_calloc(allocator, 1, sizeof *c);
    if (!c) {
        dnnl_primitive_desc_destroy(p.pd);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "cpu backend: out of memory for a 1x1 conv");
    }
    dnnl_memory_desc_t scratch_md;
    dnnl_dims_t scratch_dims = {scratch_bytes > 0 ? scratch_bytes : 1};
    dnnl_memory_t scratch = NULL, w, x, y;
    int ok = dnnl_memory_desc_init_by_tag(&scratch_md, 1, scratch_dims,
                                          dnnl_u8, dnnl_a) == dnnl_success &&
             (scratch = dfg_dnnl_calls_memory(&c->calls, engine, &scratch_md,
                                              step->workspace)) != NULL;
    w = ok ? dfg_dnnl_calls_memory(&c->calls, engine, &p.w,
                                   (void *)step->in[1])
           : NULL;
    x = w ? dfg_dnnl_calls_memory(&c->calls, engine, &p.x,
                                  (void *)step->in[0])
          : NULL;
    y = x ? dfg_dnnl_calls_memory(&c->calls, engine, &p.y, step->out[0])
          : NULL;
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, w},
                               {DNNL_ARG_WEIGHTS, x},
                               {DNNL_ARG_DST, y},
                               {DNNL_ARG_SCRATCHPAD, scratch}};
    ok = y && dfg_dnnl_calls_add(&c->calls, p.pd, args, 4) == 0;
    dfg_dnnl_left_bind(&c->calls.left, step->attrs, step->out[0],
                       &step->out_types[0]);
    snprintf(c->impl, sizeof c->impl, "pointwise + %s%s", dfg_dnnl_impl(p.pd),
             dfg_dnnl_left_name(&c->calls.left));
    dnnl_primitive_desc_destroy(p.pd);
    if (!ok) {
        dfg_pointwise_conv_destroy(c, allocator);
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "cpu backend: oneDNN could not prepare a 1x1 "
                         "conv2d's product it had planned");
    }
    c->bias = bias ? step->in[2] : NULL;
    c->y = step->out[0];
    c->cout = g.out_channels;
    c->rows = g.batch * g.out_channels;
    c->pixels = g.pixels;
    *out = c;
    return DFG_OK;
}

dfg_status dfg_pointwise_conv_run(const dfg_pointwise_conv *c,
                                  dnnl_stream_t stream)
{
    if (c->bias) {
#pragma omp parallel for if (c->rows * c->pixels >= \
                                 DFG_CPU_PARALLEL_MIN_ELEMENTS)
        for (int64_t r = 0; r < c->rows; r++) {
            float *row = c->y + r * c->pixels, b = c->bias[r % c->cout];
            for (int64_t i = 0; i < c->pixels; i++)
                row[i] = b;
        }
    }
    return dfg_dnnl_calls_run(&c->calls, stream, "conv2d");
}

const char *dfg_pointwise_conv_impl(const dfg_pointwise_conv *c)
{
    return c->impl;
}

void dfg_pointwise_conv_destroy(dfg_pointwise_conv *c,
                                const dfg_allocator *allocator)
{
    if (!c)
        return;
    dfg_dnnl_calls_destroy(&c->calls);
    dfg_free(allocator, c);
}
