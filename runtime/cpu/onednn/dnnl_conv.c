/* conv2d on oneDNN (dnnl_conv.h says what runs where, and why). The
 * compiler's workspace rule and the session's preparation build the same
 * primitive descriptor (conv_plan_make), so the bytes planned and the
 * bytes used cannot disagree. */
#include <stdio.h>
#include <string.h>

#include "runtime/cpu/linalg/conv_few_filters.h"
#include "runtime/cpu/linalg/columns_conv.h"
#include "runtime/cpu/linalg/pointwise_conv.h"
#include "ir/geometry/conv_geometry.h"
#include "runtime/cpu_layout_rule.h"
#include "runtime/cpu/onednn/dnnl_calls.h"
#include "runtime/cpu/onednn/dnnl_conv.h"
#include "runtime/cpu/onednn/dnnl_post_ops.h"
#include "runtime/cpu/onednn/dnnl_formats.h"
#include "runtime/cpu/onednn/dnnl_weights.h"
#include "util/error.h"
#include "ir/layout_rule.h"
#include "util/memory.h"
#include "runtime/cpu/linalg/winograd_conv.h"

/* Workspace parts start on this boundary (oneDNN's own alignment). */
#define PART_ALIGN 64

/* The descriptors of one conv: the given (the tensors' own layouts, plain
 * or blocked, dfg_layout) and chosen (oneDNN) formats of x and y, the
 * plain and chosen ones of w, and the primitive descriptors of the conv and of
 * the reorders of x and y (NULL where the chosen format is the plain
 * one), and of the residual into the chosen y (a sum post-op adds what y
 * holds). Every primitive descriptor has a user scratchpad. Weights
 * that change between runs (a training step's) have a reorder of their
 * own into the chosen w, within the step (weights_reorder_add). */
typedef struct conv_plan {
    dnnl_memory_desc_t x_given, w_plain, b_plain, y_given;
    const dnnl_memory_desc_t *x_chosen, *w_chosen, *y_chosen;
    dnnl_primitive_desc_t conv, x_reorder, y_reorder, residual_reorder,
        w_reorder;
    int64_t scratch_bytes, x_bytes, y_bytes, w_bytes; /* aligned */
} conv_plan;

/* Destroys p's conv and reorders, keeping its given descriptors. */
static void conv_candidate_drop(conv_plan *p)
{
    dnnl_primitive_desc_t pds[5] = {p->w_reorder, p->residual_reorder,
                                    p->y_reorder, p->x_reorder, p->conv};
    for (int i = 0; i < 5; i++)
        if (pds[i])
            dnnl_primitive_desc_destroy(pds[i]);
    p->conv = p->x_reorder = p->y_reorder = p->residual_reorder =
        p->w_reorder = NULL;
    p->x_chosen = p->w_chosen = p->y_chosen = NULL;
    p->scratch_bytes = p->x_bytes = p->y_bytes = p->w_bytes = 0;
}

static void conv_plan_free(conv_plan *p)
{
    conv_candidate_drop(p);
    memset(p, 0, sizeof *p);
}

static int64_t workspace_of(const conv_plan *p)
{
    return p->scratch_bytes + p->x_bytes + p->y_bytes + p->w_bytes;
}

static int64_t aligned_size(const dnnl_memory_desc_t *md)
{
    return dfg_align_up((int64_t)dnnl_memory_desc_get_size(md), PART_ALIGN);
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* The dfg layout md is, or -1 when it is none of them. */
static int32_t layout_of(const dnnl_memory_desc_t *md)
{
    for (int32_t l = 0; l < DFG_LAYOUT_COUNT; l++) {
        dnnl_memory_desc_t candidate;
        if (dfg_dnnl_layout_md(&candidate, md->dims, l) == 0 &&
            dnnl_memory_desc_equal(&candidate, md))
            return l;
    }
    return -1;
}

/* conv_plan_make's max_workspace for the implementation that needs the
 * least workspace. */
#define LEAST_WORKSPACE (-2)

/* Takes pd as p's conv: its chosen formats, the reorders of x, y and the
 * residual into and out of them, and the scratch they share; -1 (pd
 * still p's, for conv_candidate_drop) when a reorder cannot be made. */
static int conv_candidate_take(dnnl_engine_t engine, conv_plan *p,
                               dnnl_primitive_desc_t pd,
                               const_dnnl_primitive_attr_t reorder_attr,
                               int residual)
{
    p->conv = pd;
    p->x_chosen = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    p->w_chosen = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    p->y_chosen = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    if (dfg_dnnl_reorder_make(engine, &p->x_given, p->x_chosen, reorder_attr,
                              &p->x_reorder) != 0 ||
        dfg_dnnl_reorder_make(engine, p->y_chosen, &p->y_given, reorder_attr,
                              &p->y_reorder) != 0 ||
        (residual && dfg_dnnl_reorder_make(engine, &p->y_given, p->y_chosen,
                                           reorder_attr,
                                           &p->residual_reorder) != 0))
        return -1;
    /* The conv and the reorders run one after the other: one scratchpad,
     * as large as the largest of theirs, serves them all. */
    const_dnnl_primitive_desc_t parts[4] = {p->conv, p->x_reorder,
                                            p->y_reorder, p->residual_reorder};
    for (int i = 0; i < 4; i++)
        if (parts[i])
            p->scratch_bytes = max64(
                p->scratch_bytes,
                dfg_align_up(dfg_dnnl_scratchpad_bytes(parts[i]), PART_ALIGN));
    p->x_bytes = p->x_reorder ? aligned_size(p->x_chosen) : 0;
    p->y_bytes = p->y_reorder ? aligned_size(p->y_chosen) : 0;
    return 0;
}

/* Fills p's conv from desc: oneDNN's first implementation (max_workspace
 * -1; with `library`, only where it runs a library kernel), or in its
 * order the first that runs a library kernel within max_workspace bytes
 * of workspace, or (LEAST_WORKSPACE) the first of those needing the
 * least; -1 where there is none. */
static int conv_candidates(dnnl_engine_t engine, conv_plan *p,
                           const dnnl_convolution_desc_t *desc,
                           const_dnnl_primitive_attr_t attr,
                           const_dnnl_primitive_attr_t reorder_attr,
                           int residual, int library, int64_t max_workspace)
{
    dnnl_primitive_desc_t pd;
    if (max_workspace == -1) {
        if (dnnl_primitive_desc_create(&pd, desc, attr, engine, NULL) !=
            dnnl_success)
            return -1;
        if ((library && !dfg_dnnl_runs_library_kernel(pd)) ||
            conv_candidate_take(engine, p, pd, reorder_attr, residual) != 0) {
            if (p->conv)
                conv_candidate_drop(p);
            else
                dnnl_primitive_desc_destroy(pd);
            return -1;
        }
        return 0;
    }
    dnnl_primitive_desc_iterator_t it;
    if (dnnl_primitive_desc_iterator_create(&it, desc, attr, engine, NULL) !=
        dnnl_success)
        return -1;
    conv_plan best = *p;
    int found = 0;
    do {
        pd = dnnl_primitive_desc_iterator_fetch(it);
        if (!pd)
            break;
        if (!dfg_dnnl_runs_library_kernel(pd)) {
            dnnl_primitive_desc_destroy(pd);
            continue;
        }
        conv_plan q = *p;
        int taken = conv_candidate_take(engine, &q, pd, reorder_attr,
                                        residual) == 0;
        int64_t bytes = workspace_of(&q);
        int better = taken && (max_workspace == LEAST_WORKSPACE
                                   ? !found || bytes < workspace_of(&best)
                                   : bytes <= max_workspace);
        if (better) {
            if (found)
                conv_candidate_drop(&best);
            best = q, found = 1;
        } else {
            conv_candidate_drop(&q);
        }
    } while ((max_workspace == LEAST_WORKSPACE || !found) &&
             dnnl_primitive_desc_iterator_next(it) == dnnl_success);
    dnnl_primitive_desc_iterator_destroy(it);
    if (found)
        *p = best;
    return found ? 0 : -1;
}

/* Fills *p for the conv of x = in[0], w = in[1], bias = in[2] (if any)
 * into y = out[0], with attrs' post-ops (a sum adding in[3]), on the
 * implementation conv_candidates chooses by max_workspace; -1 when
 * oneDNN does not take it. */
static int conv_plan_make(dnnl_engine_t engine, const dfg_attrs *attrs,
                          const dfg_type *in, int32_t n_in,
                          const dfg_type *out, int64_t max_workspace,
                          conv_plan *p)
{
    memset(p, 0, sizeof *p);
    dfg_conv_geometry g;
    if (in[0].dtype != DFG_F32 || in[1].dtype != DFG_F32 ||
        out[0].dtype != DFG_F32 || in[0].rank != 4 ||
        (n_in > 2 && in[2].rank >= 0 && in[2].dtype != DFG_F32) ||
        dfg_conv_geometry_make(attrs, &in[0], &in[1], &out[0], &g) != DFG_OK)
        return -1;
    int has_bias = n_in > 2 && in[2].rank >= 0;
    dnnl_dims_t x_dims = {g.batch, g.in_channels, g.in_h, g.in_w};
    dnnl_dims_t y_dims = {g.batch, g.out_channels, g.out_h, g.out_w};
    dnnl_dims_t b_dims = {g.out_channels};
    dnnl_dims_t w_dims = {g.out_channels, g.channels_per_group, g.kernel_h,
                          g.kernel_w};
    dnnl_dims_t grouped = {g.group, g.filters_per_group, g.channels_per_group,
                           g.kernel_h, g.kernel_w};
    int grouped_w = g.group > 1;
    dnnl_dims_t strides = {g.stride[0], g.stride[1]};
    dnnl_dims_t dilates = {g.dilation[0] - 1, g.dilation[1] - 1};
    dnnl_dims_t pad_l = {g.pad_top, g.pad_left};
    dnnl_dims_t pad_r = {attrs->pads[2], attrs->pads[3]};

    dnnl_memory_desc_t x_any, w_any, y_any;
    dnnl_convolution_desc_t desc;
    dnnl_primitive_attr_t attr = NULL, reorder_attr = NULL;
    int ok =
        dfg_dnnl_layout_md(&p->x_given, x_dims, in[0].layout) == 0 &&
        dfg_dnnl_layout_md(&p->y_given, y_dims, out[0].layout) == 0 &&
        dnnl_memory_desc_init_by_tag(&p->b_plain, 1, b_dims, dnnl_f32,
                                     dnnl_a) == dnnl_success &&
        dnnl_memory_desc_init_by_tag(
            &p->w_plain, grouped_w ? 5 : 4, grouped_w ? grouped : w_dims,
            dnnl_f32, grouped_w ? dnnl_goihw : dnnl_oihw) == dnnl_success &&
        dnnl_memory_desc_init_by_tag(&x_any, 4, x_dims, dnnl_f32,
                                     dnnl_format_tag_any) == dnnl_success &&
        dnnl_memory_desc_init_by_tag(&y_any, 4, y_dims, dnnl_f32,
                                     dnnl_format_tag_any) == dnnl_success &&
        dnnl_memory_desc_init_by_tag(
            &w_any, grouped_w ? 5 : 4, grouped_w ? grouped : w_dims, dnnl_f32,
            dnnl_format_tag_any) == dnnl_success &&
        dnnl_primitive_attr_create(&attr) == dnnl_success &&
        dnnl_primitive_attr_set_scratchpad_mode(
            attr, dnnl_scratchpad_mode_user) == dnnl_success &&
        /* The reorders have the scratchpad but not the post-ops (an attr
         * whose post-ops were set, even to none, has no reorder). */
        dnnl_primitive_attr_clone(&reorder_attr, attr) == dnnl_success &&
        dfg_dnnl_post_ops_set_leaving(attr, attrs, 0) == 0;
    /* A blocked x or y is the program's choice, made for the CPU it was
     * compiled on: the conv reads and writes it as it is where a jit
     * kernel takes that (on a CPU with more features too: a program laid
     * out for AVX2 runs on AVX-512 in the workspace it planned, with no
     * reorders around the conv). A plain one, and a blocked one that
     * only oneDNN's reference takes (a blocked x into a plain y), are
     * oneDNN's to choose, reordered in and out within the step. */
    int given = in[0].layout != DFG_LAYOUT_PLAIN ||
                out[0].layout != DFG_LAYOUT_PLAIN;
    int residual = n_in > 3 && in[3].rank >= 0;
    int made = 0;
    for (int attempt = given ? 0 : 1; ok && attempt < 2 && !made;
         attempt++) {
        const dnnl_memory_desc_t *x_md =
            attempt == 0 && in[0].layout != DFG_LAYOUT_PLAIN ? &p->x_given
                                                             : &x_any;
        const dnnl_memory_desc_t *y_md =
            attempt == 0 && out[0].layout != DFG_LAYOUT_PLAIN ? &p->y_given
                                                              : &y_any;
        ok = dnnl_dilated_convolution_forward_desc_init(
                 &desc, dnnl_forward_inference, dnnl_convolution_direct,
                 x_md, &w_any, has_bias ? &p->b_plain : NULL, y_md, strides,
                 dilates, pad_l, pad_r) == dnnl_success;
        made = ok && conv_candidates(engine, p, &desc, attr, reorder_attr,
                                     residual, attempt == 0,
                                     max_workspace) == 0;
    }
    if (reorder_attr)
        dnnl_primitive_attr_destroy(reorder_attr);
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    if (!made) {
        conv_plan_free(p);
        return -1;
    }
    return 0;
}

/* Adds to p the reorder of weights that change between runs into the
 * chosen w, its copy after y's in the workspace (none where the chosen
 * format is the plain one); -1 if oneDNN has none. */
static int weights_reorder_add(dnnl_engine_t engine, conv_plan *p)
{
    dnnl_primitive_attr_t attr = NULL;
    int ok = dnnl_primitive_attr_create(&attr) == dnnl_success &&
             dnnl_primitive_attr_set_scratchpad_mode(
                 attr, dnnl_scratchpad_mode_user) == dnnl_success &&
             dfg_dnnl_reorder_make(engine, &p->w_plain, p->w_chosen, attr,
                                   &p->w_reorder) == 0;
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    if (ok && p->w_reorder) {
        p->scratch_bytes = max64(
            p->scratch_bytes,
            dfg_align_up(dfg_dnnl_scratchpad_bytes(p->w_reorder), PART_ALIGN));
        p->w_bytes = aligned_size(p->w_chosen);
    }
    return ok ? 0 : -1;
}

/* What a conv's workspace is planned for: constant weights with room for
 * the Winograd, column and pointwise products too (the session takes the
 * fastest that fits), the direct primitive alone (the least oneDNN runs
 * it in), or weights that change (the direct primitive and the weights'
 * reorder only). */
typedef enum { PLANNED_CONSTANT, PLANNED_DIRECT, PLANNED_VARYING } planned_for;

/* The workspace of the conv of these operands, as `what` says (0: none);
 * -1 when oneDNN does not take it. */
static int64_t planned_bytes(const dfg_attrs *attrs, const dfg_type *in,
                             int32_t n_in, const dfg_type *out, int32_t n_out,
                             planned_for what)
{
    if (n_in < 2 || n_out < 1)
        return -1;
    if (dfg_cpu_conv_few_filters(attrs, in, n_in, out, n_out))
        return 0; /* dfg's kernel, faster there, needs none */
    dnnl_engine_t engine;
    if (dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success)
        return -1;
    /* Planned for dfg_dnnl_planned_threads (every core at least); the
     * setting is this thread's own. */
    int threads = dfg_dnnl_planning_threads_begin();
    conv_plan p;
    int64_t bytes = -1;
    int planned = conv_plan_make(engine, attrs, in, n_in, out,
                                 what == PLANNED_DIRECT ? LEAST_WORKSPACE : -1,
                                 &p) == 0;
    int varying = what == PLANNED_VARYING;
    int made = planned && (!varying || weights_reorder_add(engine, &p) == 0);
    int products = made && what == PLANNED_CONSTANT;
    /* Room for the direct conv too: a session whose Winograd product
     * wants more than planned (another CPU) falls back to it. None of
     * the products takes weights that change. */
    int64_t winograd =
        products
            ? dfg_winograd_workspace_bytes(engine, attrs, in, n_in, &out[0])
            : 0;
    int64_t product =
        products
            ? max64(dfg_columns_workspace_bytes(engine, attrs, in, n_in,
                                                &out[0]),
                    dfg_pointwise_workspace_bytes(engine, attrs, in, n_in,
                                                  &out[0]))
            : 0;
    dfg_dnnl_planning_threads_end(threads);
    if (made)
        bytes = max64(workspace_of(&p), max64(winograd, product));
    if (planned)
        conv_plan_free(&p);
    dnnl_engine_destroy(engine);
    return bytes;
}

int64_t dfg_dnnl_conv_workspace_bytes(const dfg_attrs *attrs,
                                      const dfg_type *in, int32_t n_in,
                                      const dfg_type *out, int32_t n_out)
{
    return planned_bytes(attrs, in, n_in, out, n_out, PLANNED_CONSTANT);
}

int64_t dfg_dnnl_conv_training_workspace_bytes(const dfg_attrs *attrs,
                                               const dfg_type *in,
                                               int32_t n_in,
                                               const dfg_type *out,
                                               int32_t n_out)
{
    return planned_bytes(attrs, in, n_in, out, n_out, PLANNED_VARYING);
}

int64_t dfg_dnnl_conv_direct_workspace_bytes(const dfg_attrs *attrs,
                                             const dfg_type *in, int32_t n_in,
                                             const dfg_type *out,
                                             int32_t n_out)
{
    return planned_bytes(attrs, in, n_in, out, n_out, PLANNED_DIRECT);
}

int dfg_cpu_conv_layouts_in(const dfg_attrs *attrs, const dfg_type *in,
                            int32_t n_in, const dfg_type *out, int32_t n_out,
                            int32_t layout, int pad, int32_t *x_layout,
                            int32_t *y_layout)
{
    int (*fits)(const dfg_type *, int32_t) =
        pad ? dfg_layout_pads_cheaply : dfg_layout_fills;
    dfg_type blocked_in[4], blocked_out;
    if (n_in < 2 || n_in > 4 || n_out < 1 || layout == DFG_LAYOUT_PLAIN ||
        !fits(&out[0], layout))
        return -1;
    for (int32_t i = 0; i < n_in; i++)
        blocked_in[i] = in[i];
    blocked_out = out[0];
    if (fits(&in[0], layout))
        blocked_in[0].layout = layout;
    blocked_out.layout = layout;
    if (n_in > 3 && in[3].rank >= 0)
        blocked_in[3].layout = layout; /* a residual is laid out as y */
    dnnl_engine_t engine;
    if (dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success)
        return -1;
    conv_plan p;
    int jit = conv_plan_make(engine, attrs, blocked_in, n_in, &blocked_out,
                             -1, &p) == 0;
    if (jit) {
        /* a jit kernel, not oneDNN's reference or its gemm fallback */
        jit = strncmp(dfg_dnnl_impl(p.conv), "jit", 3) == 0 &&
              layout_of(p.x_chosen) == blocked_in[0].layout &&
              layout_of(p.y_chosen) == layout;
        conv_plan_free(&p);
    }
    dnnl_engine_destroy(engine);
    if (!jit)
        return -1;
    *x_layout = blocked_in[0].layout;
    *y_layout = layout;
    return 0;
}

int dfg_cpu_conv_layouts(const dfg_attrs *attrs, const dfg_type *in,
                         int32_t n_in, const dfg_type *out, int32_t n_out,
                         int32_t *x_layout, int32_t *y_layout)
{
    if (n_in < 2 || n_out < 1)
        return -1;
    dnnl_engine_t engine;
    if (dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success)
        return -1;
    conv_plan p;
    int made = conv_plan_make(engine, attrs, in, n_in, out, -1, &p) == 0;
    if (made) {
        *x_layout = dfg_cpu_layout_runs(layout_of(p.x_chosen));
        *y_layout = dfg_cpu_layout_runs(layout_of(p.y_chosen));
        conv_plan_free(&p);
    }
    dnnl_engine_destroy(engine);
    return made ? 0 : -1;
}

struct dfg_dnnl_conv {
    dfg_winograd_conv *winograd; /* runs the step instead, if not NULL */
    dfg_columns_conv *columns;   /* or this */
    dfg_pointwise_conv *pointwise; /* or this */
    dfg_dnnl_calls calls; /* x reorder, residual reorder, conv, y reorder,
                             those it has */
    /* A sum post-op's residual, copied into the plain y before the calls
     * unless y is planned over it (NULL: nothing to copy). */
    const void *residual;
    void *residual_to;
    size_t residual_bytes;
    dfg_dnnl_weights *weights; /* reordered weights, or NULL if used in
                                  place */
    char impl[64];
};

static dnnl_memory_t memory_at(dfg_dnnl_conv *c, dnnl_engine_t engine,
                               const dnnl_memory_desc_t *md, void *data)
{
    return dfg_dnnl_calls_memory(&c->calls, engine, md, data);
}

static int call_add(dfg_dnnl_conv *c, const_dnnl_primitive_desc_t pd,
                    const dnnl_exec_arg_t *args, int n_args)
{
    return dfg_dnnl_calls_add(&c->calls, pd, args, n_args);
}

/* The weights in the conv's chosen format: used in place when that is
 * their own, else reordered once, into the copy every session of the
 * program shares when they are the program's bytes (dnnl_weights.h);
 * NULL on failure. */
static dnnl_memory_t weights_memory(dfg_dnnl_conv *c, dnnl_engine_t engine,
                                    const conv_plan *p,
                                    const dfg_kernel_args *step,
                                    dnnl_memory_t scratch)
{
    if (dnnl_memory_desc_equal(&p->w_plain, p->w_chosen))
        return memory_at(c, engine, p->w_chosen, (void *)step->in[1]);
    if (p->w_reorder) { /* weights that change: reordered at every run */
        char *at = (char *)step->workspace + p->scratch_bytes + p->x_bytes +
                   p->y_bytes;
        dnnl_memory_t plain =
            memory_at(c, engine, &p->w_plain, (void *)step->in[1]);
        dnnl_memory_t w = memory_at(c, engine, p->w_chosen, at);
        dnnl_exec_arg_t args[3] = {{DNNL_ARG_FROM, plain},
                                   {DNNL_ARG_TO, w},
                                   {DNNL_ARG_SCRATCHPAD, scratch}};
        return plain && w && call_add(c, p->w_reorder, args, 3) == 0 ? w
                                                                    : NULL;
    }
    void *data = NULL;
    if (dfg_dnnl_weights_acquire(engine, &p->w_plain, step->in[1],
                                 p->w_chosen, (step->shared_inputs & 2u) != 0,
                                 (step->droppable_inputs & 2u) != 0,
                                 &c->weights, &data) != DFG_OK)
        return NULL;
    return memory_at(c, engine, p->w_chosen, data);
}

/* Builds the calls of c from plan p over the step's operands; -1 if
 * oneDNN refuses any of it. */
static int conv_calls_make(dfg_dnnl_conv *c, dnnl_engine_t engine,
                           const conv_plan *p, const dfg_kernel_args *step)
{
    char *ws = step->workspace;
    dnnl_memory_desc_t scratch_md;
    dnnl_dims_t scratch_dims = {p->scratch_bytes};
    if (dnnl_memory_desc_init_by_tag(&scratch_md, 1, scratch_dims, dnnl_u8,
                                     dnnl_a) != dnnl_success)
        return -1;
    dnnl_memory_t scratch = memory_at(c, engine, &scratch_md, ws);
    dnnl_memory_t x_user = memory_at(c, engine, &p->x_given, (void *)step->in[0]);
    dnnl_memory_t y_user = memory_at(c, engine, &p->y_given, step->out[0]);
    dnnl_memory_t w = scratch ? weights_memory(c, engine, p, step, scratch)
                              : NULL;
    if (!scratch || !x_user || !y_user || !w)
        return -1;
    dnnl_memory_t x = x_user, y = y_user;
    if (p->x_reorder) {
        x = memory_at(c, engine, p->x_chosen, ws + p->scratch_bytes);
        dnnl_exec_arg_t args[3] = {{DNNL_ARG_FROM, x_user},
                                   {DNNL_ARG_TO, x},
                                   {DNNL_ARG_SCRATCHPAD, scratch}};
        if (!x || call_add(c, p->x_reorder, args, 3) != 0)
            return -1;
    }
    if (p->y_reorder &&
        !(y = memory_at(c, engine, p->y_chosen,
                        ws + p->scratch_bytes + p->x_bytes)))
        return -1;
    const void *residual = step->n_inputs > 3 ? step->in[3] : NULL;
    if (p->residual_reorder) {
        dnnl_memory_t r = memory_at(c, engine, &p->y_given, (void *)residual);
        dnnl_exec_arg_t args[3] = {{DNNL_ARG_FROM, r},
                                   {DNNL_ARG_TO, y},
                                   {DNNL_ARG_SCRATCHPAD, scratch}};
        if (!r || call_add(c, p->residual_reorder, args, 3) != 0)
            return -1;
    } else if (residual && residual != step->out[0]) {
        c->residual = residual;
        c->residual_to = step->out[0];
        c->residual_bytes = (size_t)dfg_type_bytes(&step->out_types[0]);
    }
    dnnl_exec_arg_t args[5] = {{DNNL_ARG_SRC, x},
                               {DNNL_ARG_WEIGHTS, w},
                               {DNNL_ARG_DST, y},
                               {DNNL_ARG_SCRATCHPAD, scratch}};
    int n_args = 4;
    if (step->n_inputs > 2 && step->in[2]) {
        /* Read in place, a mapped program's too: its dropped weight pages
         * are not read around (MADV_RANDOM, shared_bytes.c), so the bias
         * brings back no neighbours. */
        dnnl_memory_t b = memory_at(c, engine, &p->b_plain,
                                    (void *)step->in[2]);
        if (!b)
            return -1;
        args[n_args++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, b};
    }
    if (call_add(c, p->conv, args, n_args) != 0)
        return -1;
    if (p->y_reorder) {
        dnnl_exec_arg_t back[3] = {{DNNL_ARG_FROM, y},
                                   {DNNL_ARG_TO, y_user},
                                   {DNNL_ARG_SCRATCHPAD, scratch}};
        if (call_add(c, p->y_reorder, back, 3) != 0)
            return -1;
    }
    dfg_dnnl_left_bind(&c->calls.left, step->attrs, step->out[0],
                       &step->out_types[0]);
    snprintf(c->impl, sizeof c->impl, "%s%s", dfg_dnnl_impl(p->conv),
             dfg_dnnl_left_name(&c->calls.left));
    return 0;
}

/* *out: a conv that runs winograd, columns or pointwise, the one not
 * NULL (destroyed on failure). */
static dfg_status wrapped(dfg_winograd_conv *winograd,
                          dfg_columns_conv *columns,
                          dfg_pointwise_conv *pointwise,
                          const dfg_allocator *allocator, dfg_dnnl_conv **out)
{
    dfg_dnnl_conv *c = dfg_calloc(allocator, 1, sizeof *c);
    if (!c) {
        dfg_winograd_conv_destroy(winograd, allocator);
        dfg_columns_conv_destroy(columns, allocator);
        dfg_pointwise_conv_destroy(pointwise, allocator);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "cpu backend: out of memory for a oneDNN conv");
    }
    c->winograd = winograd, c->columns = columns, c->pointwise = pointwise;
    strncpy(c->impl,
            winograd  ? dfg_winograd_conv_impl(winograd)
            : columns ? dfg_columns_conv_impl(columns)
                      : dfg_pointwise_conv_impl(pointwise),
            sizeof c->impl - 1);
    *out = c;
    return DFG_OK;
}

dfg_status dfg_dnnl_conv_create(dnnl_engine_t engine,
                                const dfg_kernel_args *step, int winograd,
                                const dfg_allocator *allocator,
                                dfg_dnnl_conv **out)
{
    *out = NULL;
    conv_plan p;
    /* Constant weights are reordered once; weights that change (a
     * training step's) at every run, within the workspace, on the direct
     * primitive alone. */
    int varying = !(step->constant_inputs & 2u);
    if (step->n_inputs < 2 ||
        conv_plan_make(engine, step->attrs, step->in_types, step->n_inputs,
                       step->out_types, step->workspace_bytes, &p) != 0)
        return DFG_OK;
    if (varying && weights_reorder_add(engine, &p) != 0) {
        conv_plan_free(&p);
        return DFG_OK;
    }
    dfg_winograd_conv *transformed = NULL;
    dfg_columns_conv *columns = NULL;
    dfg_pointwise_conv *pointwise = NULL;
    dfg_status st = winograd && !varying
                        ? dfg_winograd_conv_create(engine, step, allocator,
                                                   &transformed)
                        : DFG_OK;
    if (st == DFG_OK && !transformed && !varying &&
        (st = dfg_columns_conv_create(engine, step, allocator, &columns)) ==
            DFG_OK && !columns)
        st = dfg_pointwise_conv_create(engine, step, allocator, &pointwise);
    if (st != DFG_OK || transformed || columns || pointwise) {
        conv_plan_free(&p);
        return st == DFG_OK
                   ? wrapped(transformed, columns, pointwise, allocator, out)
                   : st;
    }
    /* A CPU whose primitive wants more than the one the program was
     * compiled on planned runs the reference. */
    if (step->workspace_bytes < workspace_of(&p)) {
        conv_plan_free(&p);
        return DFG_OK;
    }
    dfg_dnnl_conv *c = dfg_calloc(allocator, 1, sizeof *c);
    if (!c) {
        conv_plan_free(&p);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "cpu backend: out of memory for a oneDNN conv");
    }
    int made = conv_calls_make(c, engine, &p, step);
    conv_plan_free(&p);
    if (made != 0) {
        dfg_dnnl_conv_destroy(c, allocator);
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "cpu backend: oneDNN could not prepare a conv2d "
                         "it had planned");
    }
    *out = c;
    return DFG_OK;
}

dfg_status dfg_dnnl_conv_run(const dfg_dnnl_conv *c, dnnl_stream_t stream)
{
    if (c->winograd)
        return dfg_winograd_conv_run(c->winograd);
    if (c->columns)
        return dfg_columns_conv_run(c->columns, stream);
    if (c->pointwise)
        return dfg_pointwise_conv_run(c->pointwise, stream);
    if (c->residual)
        memcpy(c->residual_to, c->residual, c->residual_bytes);
    return dfg_dnnl_calls_run(&c->calls, stream, "conv2d");
}

const char *dfg_dnnl_conv_impl(const dfg_dnnl_conv *c) { return c->impl; }

void dfg_dnnl_conv_drop_plain(const dfg_dnnl_conv *c)
{
    dfg_dnnl_weights_drop_plain(c->weights);
    if (c->winograd)
        dfg_winograd_conv_drop_plain(c->winograd);
    if (c->columns)
        dfg_columns_conv_drop_plain(c->columns);
}

void dfg_dnnl_conv_destroy(dfg_dnnl_conv *c, const dfg_allocator *allocator)
{
    if (!c)
        return;
    dfg_winograd_conv_destroy(c->winograd, allocator);
    dfg_columns_conv_destroy(c->columns, allocator);
    dfg_pointwise_conv_destroy(c->pointwise, allocator);
    dfg_dnnl_calls_destroy(&c->calls);
    dfg_dnnl_weights_release(c->weights);
    dfg_free(allocator, c);
}
