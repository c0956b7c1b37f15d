/* The conv2d backward ops on oneDNN (dnnl_conv_grad.h). The workspace
 * rule and the session's preparation build the same descriptors
 * (grad_plan_make), so the bytes planned and the bytes used agree. */
#include <string.h>

#include "ir/geometry/backward_geometry.h"
#include "runtime/cpu/onednn/dnnl_calls.h"
#include "runtime/cpu/onednn/dnnl_conv_grad.h"
#include "runtime/cpu/onednn/dnnl_formats.h"
#include "runtime/cpu/onednn/dnnl_weights.h"
#include "util/error.h"
#include "util/memory.h"

/* Workspace parts start on this boundary (oneDNN's own alignment). */
#define PART_ALIGN 64

/* The step's operands in the plan's order: in[0] (dy), in[1] (w for
 * grad_input, x for grad_weight), out[0] (dx or dw). */
enum { DY, OTHER, RESULT, OPERANDS };

/* The descriptors of one backward conv: each operand's plain format
 * (the step's) and the one oneDNN chose, the primitive and the forward
 * one it was hinted with, and a reorder per operand (NULL where the
 * chosen format is the plain one): into the chosen format for the two
 * inputs, back into the plain one for the result. */
typedef struct grad_plan {
    dnnl_memory_desc_t plain[OPERANDS];
    const dnnl_memory_desc_t *chosen[OPERANDS];
    dnnl_primitive_desc_t hint, conv, reorder[OPERANDS];
    int64_t scratch_bytes, copy_bytes[OPERANDS]; /* aligned */
} grad_plan;

int dfg_dnnl_conv_grad_op(int32_t op)
{
    return op == DFG_OP_CONV2D_GRAD_INPUT || op == DFG_OP_CONV2D_GRAD_WEIGHT;
}

static void grad_plan_free(grad_plan *p)
{
    for (int j = 0; j < OPERANDS; j++)
        if (p->reorder[j])
            dnnl_primitive_desc_destroy(p->reorder[j]);
    if (p->conv)
        dnnl_primitive_desc_destroy(p->conv);
    if (p->hint)
        dnnl_primitive_desc_destroy(p->hint);
    memset(p, 0, sizeof *p);
}

/* The workspace p runs in; fixed_w: its weights (a grad_input's w) are
 * reordered once, outside it (shared as a forward conv's). */
static int64_t workspace_of(const grad_plan *p, int fixed_w)
{
    int64_t bytes = p->scratch_bytes;
    for (int j = 0; j < OPERANDS; j++)
        bytes += j == OTHER && fixed_w ? 0 : p->copy_bytes[j];
    return bytes;
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static int all_plain_f32(const dfg_type *types, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        if (types[i].dtype != DFG_F32 || types[i].rank != 4 ||
            types[i].layout != DFG_LAYOUT_PLAIN)
            return 0;
    return 1;
}

/* The oneDNN descriptors of a conv's x, w and y: plain, and `any` for
 * oneDNN to choose (w grouped [g, M/g, C/g, kh, kw] when g > 1). */
typedef struct conv_mds {
    dnnl_memory_desc_t x, w, y, x_any, w_any, y_any;
} conv_mds;

static int conv_mds_make(const dfg_conv_geometry *g, conv_mds *m)
{
    dnnl_dims_t x = {g->batch, g->in_channels, g->in_h, g->in_w};
    dnnl_dims_t y = {g->batch, g->out_channels, g->out_h, g->out_w};
    dnnl_dims_t w = {g->group, g->filters_per_group, g->channels_per_group,
                     g->kernel_h, g->kernel_w};
    int grouped = g->group > 1, w_rank = grouped ? 5 : 4;
    const int64_t *w_dims = grouped ? w : w + 1;
    return dnnl_memory_desc_init_by_tag(&m->x, 4, x, dnnl_f32, dnnl_nchw) ==
                   dnnl_success &&
                   dnnl_memory_desc_init_by_tag(&m->y, 4, y, dnnl_f32,
                                                dnnl_nchw) == dnnl_success &&
                   dnnl_memory_desc_init_by_tag(
                       &m->w, w_rank, w_dims, dnnl_f32,
                       grouped ? dnnl_goihw : dnnl_oihw) == dnnl_success &&
                   dnnl_memory_desc_init_by_tag(&m->x_any, 4, x, dnnl_f32,
                                                dnnl_format_tag_any) ==
                       dnnl_success &&
                   dnnl_memory_desc_init_by_tag(&m->y_any, 4, y, dnnl_f32,
                                                dnnl_format_tag_any) ==
                       dnnl_success &&
                   dnnl_memory_desc_init_by_tag(&m->w_any, w_rank, w_dims,
                                                dnnl_f32,
                                                dnnl_format_tag_any) ==
                       dnnl_success
               ? 0
               : -1;
}

/* The backward primitive of op over g (hinted by the forward's) into p,
 * with attr's user scratchpad; -1 when oneDNN has only its reference. */
static int primitives_make(dnnl_engine_t engine, int32_t op,
                           const dfg_attrs *attrs, const dfg_conv_geometry *g,
                           const conv_mds *m, const_dnnl_primitive_attr_t attr,
                           grad_plan *p)
{
    dnnl_dims_t strides = {g->stride[0], g->stride[1]};
    dnnl_dims_t dilates = {g->dilation[0] - 1, g->dilation[1] - 1};
    dnnl_dims_t pad_l = {g->pad_top, g->pad_left};
    dnnl_dims_t pad_r = {attrs->pads[2], attrs->pads[3]};
    dnnl_convolution_desc_t forward, backward;
    if (dnnl_dilated_convolution_forward_desc_init(
            &forward, dnnl_forward_training, dnnl_convolution_direct,
            &m->x_any, &m->w_any, NULL, &m->y_any, strides, dilates, pad_l,
            pad_r) != dnnl_success ||
        dnnl_primitive_desc_create(&p->hint, &forward, attr, engine, NULL) !=
            dnnl_success)
        return -1;
    dnnl_status_t made =
        op == DFG_OP_CONV2D_GRAD_INPUT
            ? dnnl_dilated_convolution_backward_data_desc_init(
                  &backward, dnnl_convolution_direct, &m->x_any, &m->w_any,
                  &m->y_any, strides, dilates, pad_l, pad_r)
            : dnnl_dilated_convolution_backward_weights_desc_init(
                  &backward, dnnl_convolution_direct, &m->x_any, &m->w_any,
                  NULL, &m->y_any, strides, dilates, pad_l, pad_r);
    if (made != dnnl_success ||
        dnnl_primitive_desc_create(&p->conv, &backward, attr, engine,
                                   p->hint) != dnnl_success) {
        p->conv = NULL;
        return -1;
    }
    return dfg_dnnl_runs_library_kernel(p->conv) ? 0 : -1;
}

/* Fills *p for step op of these operands; -1 when oneDNN does not take
 * it. */
static int grad_plan_make(dnnl_engine_t engine, int32_t op,
                          const dfg_attrs *attrs, const dfg_type *in,
                          int32_t n_in, const dfg_type *out, int32_t n_out,
                          grad_plan *p)
{
    memset(p, 0, sizeof *p);
    dfg_conv_geometry g;
    int data = op == DFG_OP_CONV2D_GRAD_INPUT;
    if (!dfg_dnnl_conv_grad_op(op) || n_in < 2 || n_out < 1 ||
        !all_plain_f32(in, 2) || !all_plain_f32(out, 1) ||
        dfg_conv_grad_geometry(attrs, data ? &out[0] : &in[1],
                               data ? &in[1] : &out[0], &in[0],
                               &g) != DFG_OK)
        return -1;
    conv_mds m;
    dnnl_primitive_attr_t attr = NULL;
    int ok = conv_mds_make(&g, &m) == 0 &&
             dnnl_primitive_attr_create(&attr) == dnnl_success &&
             dnnl_primitive_attr_set_scratchpad_mode(
                 attr, dnnl_scratchpad_mode_user) == dnnl_success &&
             primitives_make(engine, op, attrs, &g, &m, attr, p) == 0;
    if (ok) {
        p->plain[DY] = m.y;
        p->plain[OTHER] = data ? m.w : m.x;
        p->plain[RESULT] = data ? m.x : m.w;
        p->chosen[DY] =
            dnnl_primitive_desc_query_md(p->conv, dnnl_query_diff_dst_md, 0);
        p->chosen[OTHER] = dnnl_primitive_desc_query_md(
            p->conv, data ? dnnl_query_weights_md : dnnl_query_src_md, 0);
        p->chosen[RESULT] = dnnl_primitive_desc_query_md(
            p->conv, data ? dnnl_query_diff_src_md : dnnl_query_diff_weights_md,
            0);
        for (int j = 0; ok && j < OPERANDS; j++)
            ok = (j == RESULT ? dfg_dnnl_reorder_make(engine, p->chosen[j],
                                                      &p->plain[j], attr,
                                                      &p->reorder[j])
                              : dfg_dnnl_reorder_make(engine, &p->plain[j],
                                                      p->chosen[j], attr,
                                                      &p->reorder[j])) == 0;
    }
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    if (!ok) {
        grad_plan_free(p);
        return -1;
    }
    /* The reorders and the primitive run one after the other: one
     * scratchpad, the largest of theirs, serves them all. */
    p->scratch_bytes =
        dfg_align_up(dfg_dnnl_scratchpad_bytes(p->conv), PART_ALIGN);
    for (int j = 0; j < OPERANDS; j++) {
        if (!p->reorder[j])
            continue;
        p->scratch_bytes = max64(
            p->scratch_bytes,
            dfg_align_up(dfg_dnnl_scratchpad_bytes(p->reorder[j]), PART_ALIGN));
        p->copy_bytes[j] = dfg_align_up(
            (int64_t)dnnl_memory_desc_get_size(p->chosen[j]), PART_ALIGN);
    }
    return 0;
}

int64_t dfg_dnnl_conv_grad_workspace_bytes(int32_t op, const dfg_attrs *attrs,
                                           const dfg_type *in, int32_t n_in,
                                           const dfg_type *out, int32_t n_out,
                                           int constant_weights)
{
    dnnl_engine_t engine;
    if (!dfg_dnnl_conv_grad_op(op) ||
        dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success)
        return -1;
    /* As for the forward conv (dnnl_conv.c): planned for
     * dfg_dnnl_planned_threads. */
    int threads = dfg_dnnl_planning_threads_begin();
    grad_plan p;
    int64_t bytes = -1;
    if (grad_plan_make(engine, op, attrs, in, n_in, out, n_out, &p) == 0) {
        bytes = workspace_of(&p, constant_weights &&
                                     op == DFG_OP_CONV2D_GRAD_INPUT);
        grad_plan_free(&p);
    }
    dfg_dnnl_planning_threads_end(threads);
    dnnl_engine_destroy(engine);
    return bytes;
}

struct dfg_dnnl_conv_grad {
    dfg_dnnl_calls calls; /* the inputs' reorders, the primitive, the
                             result's reorder: those it has */
    dfg_dnnl_weights *weights; /* a grad_input's constant weights in the
                                  chosen format (an inference
                                  ConvTranspose's), or NULL */
    char impl[64];
};

static int overlap(const void *a, int64_t a_bytes, const void *b,
                   int64_t b_bytes)
{
    const char *x = a, *y = b;
    return x < y + b_bytes && y < x + a_bytes;
}

/* 1 if the primitive would read an input in place while writing the
 * result in place over it (dx planned over dy, neither reordered). */
static int reads_over_written(const grad_plan *p, const dfg_kernel_args *step)
{
    if (p->reorder[RESULT])
        return 0;
    int64_t out_bytes = dfg_type_bytes(&step->out_types[0]);
    for (int j = DY; j <= OTHER; j++)
        if (!p->reorder[j] &&
            overlap(step->in[j], dfg_type_bytes(&step->in_types[j]),
                    step->out[0], out_bytes))
            return 1;
    return 0;
}

/* 1 if step's weights (a grad_input's w) never change and oneDNN reads
 * them in another format: an inference ConvTranspose's, reordered once,
 * shared as a forward conv's (dnnl_weights.h), outside the workspace,
 * not at every run. */
static int fixed_weights(const grad_plan *p, const dfg_kernel_args *step)
{
    return step->op == DFG_OP_CONV2D_GRAD_INPUT && p->reorder[OTHER] &&
           (step->constant_inputs & 2u);
}

static const int primitive_arg[2][OPERANDS] = {
    {DNNL_ARG_DIFF_DST, DNNL_ARG_SRC, DNNL_ARG_DIFF_WEIGHTS},
    {DNNL_ARG_DIFF_DST, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_SRC},
};

/* Builds c's calls from plan p over the step's operands; -1 if oneDNN
 * refuses any of it. */
static int grad_calls_make(dfg_dnnl_conv_grad *c, dnnl_engine_t engine,
                           const grad_plan *p, const dfg_kernel_args *step)
{
    char *ws = step->workspace;
    dnnl_memory_desc_t scratch_md;
    dnnl_dims_t scratch_dims = {p->scratch_bytes > 0 ? p->scratch_bytes : 1};
    if (dnnl_memory_desc_init_by_tag(&scratch_md, 1, scratch_dims, dnnl_u8,
                                     dnnl_a) != dnnl_success)
        return -1;
    dnnl_memory_t scratch = dfg_dnnl_calls_memory(&c->calls, engine,
                                                  &scratch_md, ws);
    void *user[OPERANDS] = {(void *)step->in[0], (void *)step->in[1],
                            step->out[0]};
    dnnl_memory_t plain[OPERANDS], used[OPERANDS];
    int64_t at = p->scratch_bytes;
    int fixed_w = fixed_weights(p, step);
    void *w_data = NULL;
    if (fixed_w &&
        dfg_dnnl_weights_acquire(engine, &p->plain[OTHER], step->in[1],
                                 p->chosen[OTHER],
                                 (step->shared_inputs & 2u) != 0,
                                 (step->droppable_inputs & 2u) != 0,
                                 &c->weights, &w_data) != DFG_OK)
        return -1;
    for (int j = 0; j < OPERANDS; j++) {
        plain[j] =
            dfg_dnnl_calls_memory(&c->calls, engine, &p->plain[j], user[j]);
        used[j] = plain[j];
        if (j == OTHER && fixed_w) {
            used[j] = dfg_dnnl_calls_memory(&c->calls, engine, p->chosen[j],
                                            w_data);
        } else if (p->reorder[j]) {
            used[j] =
                dfg_dnnl_calls_memory(&c->calls, engine, p->chosen[j], ws + at);
            at += p->copy_bytes[j];
        }
        if (!scratch || !plain[j] || !used[j])
            return -1;
        dnnl_exec_arg_t in_args[3] = {{DNNL_ARG_FROM, plain[j]},
                                      {DNNL_ARG_TO, used[j]},
                                      {DNNL_ARG_SCRATCHPAD, scratch}};
        if (j != RESULT && p->reorder[j] && !(j == OTHER && fixed_w) &&
            dfg_dnnl_calls_add(&c->calls, p->reorder[j], in_args, 3) != 0)
            return -1;
    }
    const int *arg = primitive_arg[step->op == DFG_OP_CONV2D_GRAD_INPUT];
    dnnl_exec_arg_t args[4] = {{arg[DY], used[DY]},
                               {arg[OTHER], used[OTHER]},
                               {arg[RESULT], used[RESULT]},
                               {DNNL_ARG_SCRATCHPAD, scratch}};
    if (dfg_dnnl_calls_add(&c->calls, p->conv, args, 4) != 0)
        return -1;
    if (p->reorder[RESULT]) {
        dnnl_exec_arg_t back[3] = {{DNNL_ARG_FROM, used[RESULT]},
                                   {DNNL_ARG_TO, plain[RESULT]},
                                   {DNNL_ARG_SCRATCHPAD, scratch}};
        if (dfg_dnnl_calls_add(&c->calls, p->reorder[RESULT], back, 3) != 0)
            return -1;
    }
    strncpy(c->impl, dfg_dnnl_impl(p->conv), sizeof c->impl - 1);
    return 0;
}

dfg_status dfg_dnnl_conv_grad_create(dnnl_engine_t engine,
                                     const dfg_kernel_args *step,
                                     const dfg_allocator *allocator,
                                     dfg_dnnl_conv_grad **out)
{
    *out = NULL;
    grad_plan p;
    if (step->n_inputs < 2 || !step->in[0] || !step->in[1] ||
        !step->workspace ||
        grad_plan_make(engine, step->op, step->attrs, step->in_types,
                       step->n_inputs, step->out_types, step->n_outputs,
                       &p) != 0)
        return DFG_OK;
    if (step->workspace_bytes < workspace_of(&p, fixed_weights(&p, step)) ||
        reads_over_written(&p, step)) {
        grad_plan_free(&p);
        return DFG_OK;
    }
    dfg_dnnl_conv_grad *c = dfg_calloc(allocator, 1, sizeof *c);
    if (!c) {
        grad_plan_free(&p);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "cpu backend: out of memory for a oneDNN conv "
                         "gradient");
    }
    int made = grad_calls_make(c, engine, &p, step);
    grad_plan_free(&p);
    if (made != 0) {
        dfg_dnnl_conv_grad_destroy(c, allocator);
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "cpu backend: oneDNN could not prepare a %s it had "
                         "planned", dfg_op_get(step->op)->name);
    }
    *out = c;
    return DFG_OK;
}

dfg_status dfg_dnnl_conv_grad_run(const dfg_dnnl_conv_grad *c,
                                  dnnl_stream_t stream)
{
    return dfg_dnnl_calls_run(&c->calls, stream, "conv2d gradient");
}

const char *dfg_dnnl_conv_grad_impl(const dfg_dnnl_conv_grad *c)
{
    return c->impl;
}

void dfg_dnnl_conv_grad_destroy(dfg_dnnl_conv_grad *c,
                                const dfg_allocator *allocator)
{
    if (!c)
        return;
    dfg_dnnl_calls_destroy(&c->calls);
    if (c->weights)
        dfg_dnnl_weights_release(c->weights);
    dfg_free(allocator, c);
}
