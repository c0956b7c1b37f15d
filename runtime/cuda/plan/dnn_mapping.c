/* Convolutions as cuDNN takes them (see dnn_mapping.h). */
#include "runtime/cuda/plan/dnn_mapping.h"

#include <stdint.h>
#include <string.h>

#include "util/error.h"

int dfg_cuda_dnn_enabled(const char *value)
{
    if (!value)
        return 1;
    static const char *const off[] = {"0", "off", "no", "false"};
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++)
        if (strcmp(value, off[i]) == 0)
            return 0;
    return 1;
}

int dfg_cuda_conv_epilogue_make(const dfg_attrs *attrs, int *relu,
                                int *residual)
{
    int32_t n = attrs->n_post_ops, at = 0;
    *relu = *residual = 0;
    if (n < 1 || n > 2)
        return 0;
    if (attrs->post_ops[0] == DFG_POST_SUM) {
        *residual = 1;
        at = 1;
    }
    if (at < n) {
        if (attrs->post_ops[at] != DFG_POST_RELU)
            return 0;
        *relu = 1;
        at++;
    }
    return at == n;
}

static int fits32(int64_t v) { return v >= 0 && v <= INT32_MAX; }

/* Element `out` of every 4-D shape and parameter, 0 if one does not fit
 * 32 bits. */
static int set4(int32_t *out, int64_t a, int64_t b, int64_t c, int64_t d)
{
    if (!fits32(a) || !fits32(b) || !fits32(c) || !fits32(d))
        return 0;
    out[0] = (int32_t)a, out[1] = (int32_t)b, out[2] = (int32_t)c,
    out[3] = (int32_t)d;
    return 1;
}

/* 1 if a symmetric pad of pad_begin reproduces the output extent: the
 * end pad only shapes it (conv_geometry.h). */
static int symmetric(int64_t in, int64_t pad, int64_t kernel, int64_t stride,
                     int64_t dilation, int64_t out)
{
    int64_t span = in + 2 * pad - dilation * (kernel - 1) - 1;
    return span >= 0 && span / stride + 1 == out;
}

static int overlap(const void *a, int64_t a_bytes, const void *b,
                   int64_t b_bytes)
{
    const char *x = a, *y = b;
    return x < y + b_bytes && y < x + a_bytes;
}

static int geometry(const dfg_conv_geometry *g, dfg_cuda_dnn_conv *c,
                    const char **why)
{
    int32_t steps[4], rest[4];
    if (!set4(c->x, g->batch, g->in_channels, g->in_h, g->in_w) ||
        !set4(c->w, g->out_channels, g->channels_per_group, g->kernel_h,
              g->kernel_w) ||
        !set4(c->y, g->batch, g->out_channels, g->out_h, g->out_w) ||
        !set4(steps, g->pad_top, g->pad_left, g->stride[0], g->stride[1]) ||
        !set4(rest, g->dilation[0], g->dilation[1], g->group, 0)) {
        *why = "a size beyond 32 bits";
        return 0;
    }
    c->pad[0] = steps[0], c->pad[1] = steps[1];
    c->stride[0] = steps[2], c->stride[1] = steps[3];
    c->dilation[0] = rest[0], c->dilation[1] = rest[1];
    c->groups = rest[2];
    if (!symmetric(g->in_h, g->pad_top, g->kernel_h, g->stride[0],
                   g->dilation[0], g->out_h) ||
        !symmetric(g->in_w, g->pad_left, g->kernel_w, g->stride[1],
                   g->dilation[1], g->out_w)) {
        *why = "padding no symmetric pad reproduces";
        return 0;
    }
    return 1;
}

/* The forward step's epilogue operands: a bias of K values, a residual of
 * y's type lying either exactly on y or apart from it. */
static int forward(const dfg_cuda_step_plan *plan, dfg_cuda_dnn_conv *c,
                   const char **why)
{
    const dfg_step_args *s = plan->args;
    c->direction = DFG_CUDA_DNN_FORWARD;
    c->has_bias = plan->u.conv.has_bias;
    c->residual = plan->residual;
    c->relu = plan->u.conv.relu;
    if (c->has_bias && s->in_types[2].dtype != c->dtype) {
        *why = "a bias of another dtype";
        return 0;
    }
    if (c->residual) {
        const dfg_type *z = &s->in_types[3];
        int64_t bytes = dfg_type_bytes(&s->out_types[0]);
        if (s->n_inputs < 4 || !s->in[3] || z->dtype != c->dtype ||
            dfg_type_bytes(z) != bytes) {
            *why = "a residual not of the output's type";
            return 0;
        }
        if (s->in[3] != s->out[0] &&
            overlap(s->in[3], bytes, s->out[0], bytes)) {
            *why = "a residual partly over the output";
            return 0;
        }
    }
    /* cuDNN's fused call, strict f32 only (the 16-bit configurations vary
     * by version): the others run the same epilogue call by call. */
    c->fused = c->has_bias && c->relu && c->dtype == DFG_F32;
    return 1;
}

int32_t dfg_cuda_conv_layout(const dfg_attrs *attrs, const dfg_type *in,
                             int32_t n_in, const dfg_type *out)
{
    dfg_conv_geometry g;
    dfg_dtype dtype = out->dtype;
    if (n_in < 2 || (dtype != DFG_F16 && dtype != DFG_BF16) ||
        in[0].dtype != dtype || in[1].dtype != dtype || in[0].rank != 4 ||
        in[1].rank != 4 || out->rank != 4 ||
        (n_in > 2 && in[2].rank >= 0 && in[2].dtype != dtype) ||
        dfg_conv_geometry_make(attrs, &in[0], &in[1], out, &g) != DFG_OK)
        return DFG_LAYOUT_PLAIN;
    dfg_cuda_dnn_conv c;
    const char *why;
    return g.group == 1 && g.in_channels % 8 == 0 &&
                   g.out_channels % 8 == 0 && geometry(&g, &c, &why)
               ? DFG_LAYOUT_NHWC
               : DFG_LAYOUT_PLAIN;
}

int dfg_cuda_dnn_conv_make(const dfg_cuda_step_plan *plan,
                           dfg_cuda_dnn_conv *out, const char **why)
{
    dfg_cuda_dnn_conv c;
    memset(&c, 0, sizeof c);
    *why = NULL;
    const dfg_step_args *s = plan->args;
    c.dtype = s->out_types[0].dtype;
    c.tf32 = plan->tf32;
    c.nhwc = plan->kind == DFG_CUDA_CONV2D && plan->u.conv.nhwc;
    for (int32_t i = 0; i < 2; i++)
        if (s->in_types[i].dtype != c.dtype) {
            *why = "operands of different dtypes";
            return 0;
        }
    if (c.dtype != DFG_F32 && c.dtype != DFG_F16 && c.dtype != DFG_BF16) {
        *why = "a dtype cuDNN does not convolve";
        return 0;
    }
    if (!geometry(&plan->u.conv.g, &c, why))
        return 0;
    switch (plan->kind) {
    case DFG_CUDA_CONV2D:
        if (!forward(plan, &c, why))
            return 0;
        break;
    case DFG_CUDA_CONV_GRAD_INPUT:
        c.direction = DFG_CUDA_DNN_BACKWARD_DATA;
        if (overlap(s->in[0], dfg_type_bytes(&s->in_types[0]), s->out[0],
                    dfg_type_bytes(&s->out_types[0]))) {
            *why = "dx planned over dy";
            return 0;
        }
        break;
    case DFG_CUDA_CONV_GRAD_WEIGHT:
        c.direction = DFG_CUDA_DNN_BACKWARD_FILTER;
        break;
    default:
        *why = "not a convolution";
        return 0;
    }
    *out = c;
    return 1;
}

int32_t dfg_cuda_dnn_pick(const dfg_cuda_dnn_candidate *candidates,
                          int32_t n, size_t workspace_bytes,
                          int allow_tensor_math, int required_algo)
{
    for (int32_t i = 0; i < n; i++) {
        const dfg_cuda_dnn_candidate *c = &candidates[i];
        if (c->ok && c->deterministic &&
            c->workspace_bytes <= workspace_bytes &&
            (allow_tensor_math || !c->tensor_math) &&
            (required_algo < 0 || c->algo == required_algo))
            return i;
    }
    return -1;
}
