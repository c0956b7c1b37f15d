/* matmul and gemm on oneDNN (dnnl_matmul.h says what runs where, and
 * why). The compiler's workspace rule and the session's preparation build
 * the same primitive descriptor (plan_make), so the bytes planned and the
 * bytes used cannot disagree. */
#include <stdio.h>
#include <string.h>

#include "ir/geometry/matmul_geometry.h"
#include "runtime/cpu/onednn/dnnl_formats.h"
#include "runtime/cpu/onednn/dnnl_linear.h"
#include "runtime/cpu/onednn/dnnl_matmul.h"
#include "runtime/cpu/onednn/dnnl_post_ops.h"
#include "runtime/cpu/onednn/dnnl_weights.h"
#include "util/error.h"
#include "util/memory.h"

/* The scratchpad is planned in whole parts of this size (oneDNN's own
 * alignment). */
#define PART_ALIGN 64

/* One oneDNN matmul, dst = src x weights (+ bias), every operand with
 * ndims dims; src and weights as their bytes lie (strides); the bias, if
 * any, 1 in every dim but the last (N). */
typedef struct matmul_shape {
    int ndims;
    dnnl_dims_t a, b, y, bias;
    dnnl_dims_t a_strides, b_strides;
    int has_bias;
} matmul_shape;

/* The descriptors of one matmul: src, weights as their bytes lie (plain)
 * and as the primitive reads them (chosen), bias and dst, and the
 * primitive descriptor (user scratchpad). */
typedef struct matmul_plan {
    dnnl_memory_desc_t a, b_plain, b_fixed, bias, y;
    const dnnl_memory_desc_t *b_chosen;
    dnnl_primitive_desc_t pd;
    int64_t scratch_bytes; /* aligned; 0: none */
} matmul_plan;

static void row_major(int ndims, const dnnl_dims_t dims, dnnl_dims_t strides)
{
    int64_t s = 1;
    for (int d = ndims - 1; d >= 0; d--) {
        strides[d] = s;
        s *= dims[d];
    }
}

/* The strides of dims stored with its last two dims swapped ([.., N, K]
 * for a [.., K, N] operand). */
static void last_two_swapped(int ndims, const dnnl_dims_t dims,
                             dnnl_dims_t strides)
{
    dnnl_dims_t swapped;
    memcpy(swapped, dims, sizeof swapped);
    swapped[ndims - 2] = dims[ndims - 1];
    swapped[ndims - 1] = dims[ndims - 2];
    row_major(ndims, swapped, strides);
    int64_t t = strides[ndims - 2];
    strides[ndims - 2] = strides[ndims - 1];
    strides[ndims - 1] = t;
}

/* A matmul of operands at least 2-D: batch dims as oneDNN broadcasts them
 * (1 where an operand has none), or, for a weight without batch dims
 * under a batch of a, the batch folded into the rows of one product. */
static int matmul_shape_of(const dfg_type *a, const dfg_type *b,
                           const dfg_type *y, matmul_shape *s)
{
    dfg_matmul_geometry g;
    if (a->rank < 2 || b->rank < 2 ||
        dfg_matmul_geometry_make(NULL, a, b, y, &g) != DFG_OK)
        return -1;
    s->ndims = g.batch_in_rows ? 2 : g.batch_rank + 2;
    int batch = s->ndims - 2;
    for (int d = 0; d < batch; d++) {
        s->a[d] = g.a_stride[d] ? g.batch[d] : 1;
        s->b[d] = g.b_stride[d] ? g.batch[d] : 1;
        s->y[d] = g.batch[d];
    }
    int64_t m = g.batch_in_rows ? g.batch_count * g.m : g.m;
    s->a[batch] = m;
    s->a[batch + 1] = g.k;
    s->b[batch] = g.k;
    s->b[batch + 1] = g.n;
    s->y[batch] = m;
    s->y[batch + 1] = g.n;
    row_major(s->ndims, s->a, s->a_strides);
    row_major(s->ndims, s->b, s->b_strides);
    return 0;
}

/* A matmul's fused bias (input 2, dfg_shape_matmul checked it: N values,
 * f32): 1 in every dim but the last. */
static int matmul_bias_of(const dfg_type *in, int32_t n_in, matmul_shape *s)
{
    if (n_in < 3 || in[2].rank < 0)
        return 0;
    for (int d = 0; d + 1 < s->ndims; d++)
        s->bias[d] = 1;
    s->bias[s->ndims - 1] = s->y[s->ndims - 1];
    s->has_bias = 1;
    return 0;
}

/* A gemm with alpha 1 and, with a C, beta 1 and a C of N values (a row
 * added to every row: oneDNN 2.6's jit matmul has no other bias); op(A)
 * and op(B) are strides over A's and B's bytes. */
static int gemm_shape_of(const dfg_attrs *at, const dfg_type *in,
                         int32_t n_in, const dfg_type *y, matmul_shape *s)
{
    int64_t m, n, k;
    if (dfg_gemm_geometry_make(at, &in[0], &in[1], y, &m, &n, &k) != DFG_OK ||
        at->alpha != 1.0f)
        return -1;
    s->ndims = 2;
    s->a[0] = m;
    s->a[1] = k;
    s->a_strides[0] = at->trans_a ? 1 : k;
    s->a_strides[1] = at->trans_a ? m : 1;
    s->b[0] = k;
    s->b[1] = n;
    s->b_strides[0] = at->trans_b ? 1 : n;
    s->b_strides[1] = at->trans_b ? k : 1;
    s->y[0] = m;
    s->y[1] = n;
    const dfg_type *c = n_in > 2 ? &in[2] : NULL;
    if (!c || c->rank < 0)
        return 0;
    if (at->beta != 1.0f || c->dtype != DFG_F32 || c->rank < 1 ||
        c->rank > 2 || (c->rank == 2 && c->shape[0] != 1) ||
        c->shape[c->rank - 1] != n)
        return -1;
    s->bias[0] = 1;
    s->bias[1] = n;
    s->has_bias = 1;
    return 0;
}

/* 1 if every operand's element count fits an int and none is empty:
 * oneDNN 2.6's kernels narrow some counts to int (a MatMul of 2^32 rows
 * divided by zero in its primitive descriptor), and its blocking divides
 * by an empty dimension (a MatMul of 0 rows). Those products run on the
 * reference kernels. */
static int counts_fit(const dfg_type *in, int32_t n_in, const dfg_type *out)
{
    for (int32_t i = 0; i < n_in; i++)
        if (in[i].rank >= 0 && (dfg_type_numel(&in[i]) > INT32_MAX ||
                                dfg_type_numel(&in[i]) == 0))
            return 0;
    return dfg_type_numel(out) <= INT32_MAX && dfg_type_numel(out) > 0;
}

static int shape_of(dfg_op op, const dfg_attrs *attrs, const dfg_type *in,
                    int32_t n_in, const dfg_type *out, int32_t n_out,
                    matmul_shape *s)
{
    memset(s, 0, sizeof *s);
    if (n_in < 2 || n_out != 1 || in[0].dtype != DFG_F32 ||
        in[1].dtype != DFG_F32 || out[0].dtype != DFG_F32 ||
        !counts_fit(in, n_in, &out[0]))
        return -1;
    /* A matmul reading an operand transposed (a folded transpose) runs on
     * the reference kernel. */
    if (op == DFG_OP_MATMUL && (attrs->trans_a || attrs->trans_b))
        return -1;
    if (op == DFG_OP_MATMUL)
        return matmul_shape_of(&in[0], &in[1], &out[0], s) == 0
                   ? matmul_bias_of(in, n_in, s)
                   : -1;
    if (op == DFG_OP_GEMM)
        return gemm_shape_of(attrs, in, n_in, &out[0], s);
    return -1;
}

static void plan_free(matmul_plan *p)
{
    if (p->pd)
        dnnl_primitive_desc_destroy(p->pd);
    memset(p, 0, sizeof *p);
}

/* A primitive descriptor for p's operands with weights as b; -1 if
 * oneDNN has none but its reference implementation (far slower than the
 * reference kernels' BLAS). */
static int pd_make(dnnl_engine_t engine, const_dnnl_primitive_attr_t attr,
                   matmul_plan *p, const matmul_shape *s,
                   const dnnl_memory_desc_t *b)
{
    dnnl_matmul_desc_t desc;
    const char *impl = NULL;
    if (dnnl_matmul_desc_init(&desc, &p->a, b, s->has_bias ? &p->bias : NULL,
                              &p->y) != dnnl_success ||
        dnnl_primitive_desc_create(&p->pd, &desc, attr, engine, NULL) !=
            dnnl_success)
        return -1;
    if (dnnl_primitive_desc_query(p->pd, dnnl_query_impl_info_str, 0,
                                  &impl) != dnnl_success ||
        !impl || strncmp(impl, "ref", 3) == 0) {
        dnnl_primitive_desc_destroy(p->pd);
        p->pd = NULL;
        return -1;
    }
    return 0;
}

static int blocked(const dnnl_memory_desc_t *md)
{
    return md->format_kind == dnnl_blocked &&
           md->format_desc.blocking.inner_nblks > 0;
}

/* A 2-D product of a row-major A and a weight B as a 1x1 convolution
 * (dnnl_linear.h): p's descriptors become the convolution's; p is left
 * as it is where oneDNN has no jit 1x1 convolution for it. */
static void linear_make(dnnl_engine_t engine, const_dnnl_primitive_attr_t attr,
                        matmul_plan *p, const matmul_shape *s)
{
    dfg_dnnl_linear l;
    if (s->ndims != 2 || s->a_strides[0] != s->a[1] || s->a_strides[1] != 1 ||
        dfg_dnnl_linear_make(engine, attr, s->a[0], s->a[1], s->b[1],
                             s->b_strides, s->has_bias, &l) != 0)
        return;
    p->a = l.a;
    p->b_plain = l.b_plain;
    p->y = l.y;
    if (s->has_bias)
        p->bias = l.bias;
    p->pd = l.pd;
}

/* Fills *p for shape s and the post-ops of attrs; weight: B is a
 * constant weight, whose layout is the primitive's to choose
 * (dnnl_matmul.h). -1 when oneDNN does not take it. */
static int plan_make(dnnl_engine_t engine, const matmul_shape *s,
                     const dfg_attrs *attrs, int weight, matmul_plan *p)
{
    memset(p, 0, sizeof *p);
    dnnl_dims_t y_strides, b_swapped, bias_strides;
    row_major(s->ndims, s->y, y_strides);
    row_major(s->ndims, s->bias, bias_strides);
    last_two_swapped(s->ndims, s->b, b_swapped);
    dnnl_memory_desc_t b_any;
    dnnl_primitive_attr_t attr = NULL;
    int ok =
        dnnl_memory_desc_init_by_strides(&p->a, s->ndims, s->a, dnnl_f32,
                                         s->a_strides) == dnnl_success &&
        dnnl_memory_desc_init_by_strides(&p->b_plain, s->ndims, s->b,
                                         dnnl_f32, s->b_strides) ==
            dnnl_success &&
        dnnl_memory_desc_init_by_strides(&p->b_fixed, s->ndims, s->b,
                                         dnnl_f32, b_swapped) ==
            dnnl_success &&
        dnnl_memory_desc_init_by_tag(&b_any, s->ndims, s->b, dnnl_f32,
                                     dnnl_format_tag_any) == dnnl_success &&
        dnnl_memory_desc_init_by_strides(&p->y, s->ndims, s->y, dnnl_f32,
                                         y_strides) == dnnl_success &&
        (!s->has_bias ||
         dnnl_memory_desc_init_by_strides(&p->bias, s->ndims, s->bias,
                                          dnnl_f32, bias_strides) ==
             dnnl_success) &&
        dnnl_primitive_attr_create(&attr) == dnnl_success &&
        dnnl_primitive_attr_set_scratchpad_mode(
            attr, dnnl_scratchpad_mode_user) == dnnl_success &&
        dfg_dnnl_post_ops_set_leaving(attr, attrs, 0) == 0;
    if (ok && !weight) {
        ok = pd_make(engine, attr, p, s, &p->b_plain) == 0;
    } else if (ok) {
        /* oneDNN's choice when it blocks B, else a linear layer as a 1x1
         * convolution, else [.., N, K]. */
        if (pd_make(engine, attr, p, s, &b_any) == 0 &&
            !blocked(dnnl_primitive_desc_query_md(
                p->pd, dnnl_query_weights_md, 0))) {
            dnnl_primitive_desc_destroy(p->pd);
            p->pd = NULL;
        }
        if (!p->pd)
            linear_make(engine, attr, p, s);
        ok = p->pd || pd_make(engine, attr, p, s, &p->b_fixed) == 0;
    }
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    if (!ok) {
        plan_free(p);
        return -1;
    }
    p->b_chosen = dnnl_primitive_desc_query_md(p->pd, dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t *scratch =
        dnnl_primitive_desc_query_md(p->pd, dnnl_query_scratchpad_md, 0);
    p->scratch_bytes = dfg_align_up(
        scratch ? (int64_t)dnnl_memory_desc_get_size(scratch) : 0, PART_ALIGN);
    return 0;
}

int64_t dfg_dnnl_matmul_workspace_bytes(dfg_op op, const dfg_attrs *attrs,
                                        const dfg_type *in, int32_t n_in,
                                        const dfg_type *out, int32_t n_out)
{
    matmul_shape s;
    dnnl_engine_t engine;
    if (shape_of(op, attrs, in, n_in, out, n_out, &s) != 0 ||
        dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success)
        return -1;
    /* Planned for dfg_dnnl_planned_threads, as a conv's (dnnl_conv.c). */
    int threads = dfg_dnnl_planning_threads_begin();
    /* Whether B is a weight is the session's to know: plan for both. */
    int64_t bytes = -1;
    for (int weight = 0; weight < 2; weight++) {
        matmul_plan p;
        if (plan_make(engine, &s, attrs, weight, &p) != 0)
            continue;
        if (p.scratch_bytes > bytes)
            bytes = p.scratch_bytes;
        plan_free(&p);
    }
    dfg_dnnl_planning_threads_end(threads);
    dnnl_engine_destroy(engine);
    return bytes;
}

struct dfg_dnnl_matmul {
    dnnl_primitive_t primitive;
    /* A sum post-op's residual, copied into the output before the
     * primitive runs (NULL where it lies there already, or none). */
    const void *residual;
    void *residual_to;
    size_t residual_bytes;
    int n_args;
    dnnl_exec_arg_t args[5];
    int n_memories;
    dnnl_memory_t memories[5];
    dfg_dnnl_weights *weights; /* B reordered, or NULL if read in place */
    dfg_dnnl_left left; /* the post-op the primitive left to dfg */
    char impl[64];
};

/* Adds a memory over data as argument arg; -1 on failure. */
static int argument_add(dfg_dnnl_matmul *m, dnnl_engine_t engine, int arg,
                        const dnnl_memory_desc_t *md, const void *data)
{
    dnnl_memory_t memory = NULL;
    if (dnnl_memory_create(&memory, md, engine, (void *)data) != dnnl_success)
        return -1;
    m->memories[m->n_memories++] = memory;
    m->args[m->n_args++] = (dnnl_exec_arg_t){arg, memory};
    return 0;
}

/* B as the primitive reads it: its bytes in place, or a weight reordered
 * once into the copy every session of the program shares; NULL on
 * failure. */
static const void *weights_data(dfg_dnnl_matmul *m, dnnl_engine_t engine,
                                const matmul_plan *p,
                                const dfg_kernel_args *step)
{
    if (dnnl_memory_desc_equal(&p->b_plain, p->b_chosen))
        return step->in[1];
    void *data = NULL;
    if (dfg_dnnl_weights_acquire(engine, &p->b_plain, step->in[1],
                                 p->b_chosen, (step->shared_inputs & 2u) != 0,
                                 (step->droppable_inputs & 2u) != 0,
                                 &m->weights, &data) != DFG_OK)
        return NULL;
    return data;
}

static int matmul_make(dfg_dnnl_matmul *m, dnnl_engine_t engine,
                       const matmul_plan *p, const dfg_kernel_args *step)
{
    const void *bias = step->n_inputs > 2 ? step->in[2] : NULL;
    const void *residual = step->n_inputs > 3 ? step->in[3] : NULL;
    if (residual && residual != step->out[0]) {
        m->residual = residual;
        m->residual_to = step->out[0];
        m->residual_bytes = (size_t)dfg_type_bytes(&step->out_types[0]);
    }
    dnnl_memory_desc_t scratch;
    dnnl_dims_t scratch_dims = {p->scratch_bytes};
    const void *b = weights_data(m, engine, p, step);
    const char *impl = NULL;
    int ok =
        b && dnnl_memory_desc_init_by_tag(&scratch, 1, scratch_dims, dnnl_u8,
                                          dnnl_a) == dnnl_success &&
        argument_add(m, engine, DNNL_ARG_SRC, &p->a, step->in[0]) == 0 &&
        argument_add(m, engine, DNNL_ARG_WEIGHTS, p->b_chosen, b) == 0 &&
        argument_add(m, engine, DNNL_ARG_DST, &p->y, step->out[0]) == 0 &&
        argument_add(m, engine, DNNL_ARG_SCRATCHPAD, &scratch,
                     step->workspace) == 0 &&
        (p->bias.ndims == 0 ||
         argument_add(m, engine, DNNL_ARG_BIAS, &p->bias, bias) == 0) &&
        dnnl_primitive_create(&m->primitive, p->pd) == dnnl_success &&
        dnnl_primitive_desc_query(p->pd, dnnl_query_impl_info_str, 0,
                                  &impl) == dnnl_success;
    if (ok && impl) {
        dfg_dnnl_left_bind(&m->left, step->attrs, step->out[0],
                           &step->out_types[0]);
        snprintf(m->impl, sizeof m->impl, "%s%s", impl,
                 dfg_dnnl_left_name(&m->left));
    }
    return ok ? 0 : -1;
}

dfg_status dfg_dnnl_matmul_create(dnnl_engine_t engine,
                                  const dfg_kernel_args *step,
                                  const dfg_allocator *allocator,
                                  dfg_dnnl_matmul **out)
{
    *out = NULL;
    matmul_shape s;
    matmul_plan p;
    if (shape_of(step->op, step->attrs, step->in_types, step->n_inputs,
                 step->out_types, step->n_outputs, &s) != 0 ||
        plan_make(engine, &s, step->attrs,
                  (step->constant_inputs & ~step->tied_inputs & 2u) != 0,
                  &p) != 0)
        return DFG_OK;
    if (step->workspace_bytes < p.scratch_bytes) {
        plan_free(&p);
        return DFG_OK;
    }
    dfg_dnnl_matmul *m = dfg_calloc(allocator, 1, sizeof *m);
    if (!m) {
        plan_free(&p);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "cpu backend: out of memory for a oneDNN matmul");
    }
    int made = matmul_make(m, engine, &p, step);
    plan_free(&p);
    if (made != 0) {
        dfg_dnnl_matmul_destroy(m, allocator);
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "cpu backend: oneDNN could not prepare a %s it had "
                         "planned", step->op == DFG_OP_GEMM ? "gemm" : "matmul");
    }
    *out = m;
    return DFG_OK;
}

dfg_status dfg_dnnl_matmul_run(const dfg_dnnl_matmul *m, dnnl_stream_t stream)
{
    if (m->residual)
        memcpy(m->residual_to, m->residual, m->residual_bytes);
    if (dnnl_primitive_execute(m->primitive, stream, m->n_args, m->args) !=
        dnnl_success)
        return dfg_error(DFG_ERR_INTERNAL, "oneDNN matmul (%s) failed to run",
                         m->impl);
    dfg_dnnl_left_run(&m->left);
    return DFG_OK;
}

const char *dfg_dnnl_matmul_impl(const dfg_dnnl_matmul *m) { return m->impl; }

void dfg_dnnl_matmul_drop_plain(const dfg_dnnl_matmul *m)
{
    dfg_dnnl_weights_drop_plain(m->weights);
}

void dfg_dnnl_matmul_destroy(dfg_dnnl_matmul *m,
                             const dfg_allocator *allocator)
{
    if (!m)
        return;
    if (m->primitive)
        dnnl_primitive_destroy(m->primitive);
    for (int i = 0; i < m->n_memories; i++)
        dnnl_memory_destroy(m->memories[i]);
    dfg_dnnl_weights_release(m->weights);
    dfg_free(allocator, m);
}
