/* A depthwise conv2d written over its input (dfg_conv_may_write_over_x,
 * runtime/cpu/linalg/conv2d_depthwise.c): the kernel gives the same bits
 * with y in x's bytes as in bytes of its own, and both match a
 * double-precision reference on seeded random data, over pads, dilation,
 * kernels of 3, 5 and 7, asymmetric pads, rows wider than a block, more
 * planes than slots, batches, f32 and bf16. The predicate refuses what
 * the kernel cannot do, and the kernel refuses such a step by message.
 * The compiler plans y over a dying x only where the step runs dfg's
 * kernel (prefer memory, or no oneDNN scratch) and where that lowers the
 * peak, never for a target without the form, and the session never
 * hands that step to oneDNN. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ir/geometry/conv_geometry.h"
#include "runtime/backend.h"
#include "runtime/cpu/kernels.h"
#include "tests/runtime_cpu/cpu_kernel_check.h"
#include "runtime/cpu/onednn/dnnl_steps.h"
#include "dfg/compile.h"
#include "dfg/graph.h"
#include "dfg/session.h"
#include "ir/op_table.h"
#include "program/program.h"

/* n images of c channels of h x w, a kh x kw kernel, pads (top, left,
 * bottom, right) that keep the shape at stride 1. */
typedef struct dw_case {
    int64_t n, c, h, w, kh, kw;
    int32_t dilation;
    int64_t pads[4];
} dw_case;

static dfg_type type4(dfg_dtype dtype, int64_t a, int64_t b, int64_t c,
                      int64_t d)
{
    return (dfg_type){dtype, 4, {a, b, c, d}, DFG_LAYOUT_PLAIN};
}

static dfg_attrs attrs_of(const dw_case *c)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.dilations[0] = a.dilations[1] = c->dilation;
    for (int i = 0; i < 4; i++)
        a.pads[i] = c->pads[i];
    a.group = (int32_t)c->c;
    return a;
}

/* Operand types: x, w, bias; y. */
static void types_of(const dw_case *c, dfg_dtype dtype, dfg_type in[3],
                     dfg_type *out)
{
    in[0] = type4(dtype, c->n, c->c, c->h, c->w);
    in[1] = type4(DFG_F32, c->c, 1, c->kh, c->kw);
    in[2] = (dfg_type){DFG_F32, 1, {c->c}, DFG_LAYOUT_PLAIN};
    *out = in[0];
}

/* y = conv2d(x, w, b) through the CPU kernel; x (bytes of dtype) is
 * copied into y's buffer first when in_place, so y is written over it. */
static dfg_status run_kernel(const dw_case *c, dfg_dtype dtype, const void *x,
                             const float *w, const float *b, int in_place,
                             void *y)
{
    dfg_attrs a = attrs_of(c);
    dfg_type in_types[3], out_type;
    types_of(c, dtype, in_types, &out_type);
    if (in_place)
        memcpy(y, x, (size_t)dfg_type_bytes(&in_types[0]));
    int64_t workspace = in_place ? dfg_op_in_place_workspace(
                                       DFG_OP_CONV2D, &a, in_types, 3,
                                       &out_type, 1, 0)
                                 : 0;
    const void *in[3] = {in_place ? y : x, w, b};
    void *out[1] = {y};
    void *scratch = malloc((size_t)workspace + 1);
    dfg_kernel_args args = {.op = DFG_OP_CONV2D, .attrs = &a, .n_inputs = 3,
                            .in_types = in_types, .in = in, .n_outputs = 1,
                            .out_types = &out_type, .out = out,
                            .workspace = in_place ? scratch : NULL,
                            .workspace_bytes = workspace};
    dfg_status st = dfg_cpu_kernel_for(DFG_OP_CONV2D)(&args);
    free(scratch);
    return st;
}

/* y from the definition, in double. */
static void reference(const dw_case *c, const float *x, const float *w,
                      const float *b, double *y)
{
    for (int64_t p = 0; p < c->n * c->c; p++)
        for (int64_t oy = 0; oy < c->h; oy++)
            for (int64_t ox = 0; ox < c->w; ox++) {
                double sum = b[p % c->c];
                for (int64_t ky = 0; ky < c->kh; ky++)
                    for (int64_t kx = 0; kx < c->kw; kx++) {
                        int64_t iy = oy - c->pads[0] + ky * c->dilation;
                        int64_t ix = ox - c->pads[1] + kx * c->dilation;
                        if (iy < 0 || iy >= c->h || ix < 0 || ix >= c->w)
                            continue;
                        sum += (double)x[(p * c->h + iy) * c->w + ix] *
                               w[((p % c->c) * c->kh + ky) * c->kw + kx];
                    }
                y[(p * c->h + oy) * c->w + ox] = sum;
            }
}

/* In place and out of place, the same bits, near the reference (1e-5 in
 * f32, 1e-2 in bf16, whose x is rounded to bf16 for the reference). */
static void check_case(const dw_case *c)
{
    dfg_attrs a = attrs_of(c);
    dfg_type in_types[3], out_type;
    types_of(c, DFG_F32, in_types, &out_type);
    assert_true(dfg_conv_may_write_over_x(&a, in_types, 3, &out_type, 1));
    int64_t numel = c->n * c->c * c->h * c->w, nw = c->c * c->kh * c->kw;
    float *x = malloc((size_t)numel * sizeof *x);
    float *w = malloc((size_t)nw * sizeof *w), *b = malloc((size_t)c->c * 4);
    uint16_t *narrow = malloc((size_t)numel * sizeof *narrow);
    double *want = malloc((size_t)numel * sizeof *want);
    for (int64_t i = 0; i < nw; i++)
        w[i] = check_uniform();
    for (int64_t i = 0; i < c->c; i++)
        b[i] = check_uniform();
    for (int bf = 0; bf < 2; bf++) {
        dfg_dtype dtype = bf ? DFG_BF16 : DFG_F32;
        for (int64_t i = 0; i < numel; i++) {
            x[i] = check_uniform();
            narrow[i] = dfg_f32_to_bf16(x[i]);
            if (bf)
                x[i] = dfg_bf16_to_f32(narrow[i]);
        }
        const void *stored = bf ? (const void *)narrow : x;
        size_t bytes = (size_t)numel * dfg_dtype_size(dtype);
        void *apart = malloc(bytes), *over = malloc(bytes);
        assert_int_equal(run_kernel(c, dtype, stored, w, b, 0, apart), DFG_OK);
        assert_int_equal(run_kernel(c, dtype, stored, w, b, 1, over), DFG_OK);
        assert_memory_equal(apart, over, bytes);
        reference(c, x, w, b, want);
        double diff = 0.0, norm = 0.0;
        for (int64_t i = 0; i < numel; i++) {
            double got = bf ? dfg_bf16_to_f32(((uint16_t *)over)[i])
                            : ((float *)over)[i];
            diff += (got - want[i]) * (got - want[i]);
            norm += want[i] * want[i];
        }
        assert_true(norm > 0.0);
        if (!(sqrt(diff / norm) < (bf ? 1e-2 : 1e-5)))
            fail_msg("%s: relative error %.3g", dfg_dtype_name(dtype),
                     sqrt(diff / norm));
        free(apart);
        free(over);
    }
    free(x);
    free(w);
    free(b);
    free(narrow);
    free(want);
}

static void test_kernel_sizes(void **state)
{
    (void)state;
    check_case(&(dw_case){1, 8, 9, 11, 3, 3, 1, {1, 1, 1, 1}});
    check_case(&(dw_case){2, 5, 10, 9, 5, 5, 1, {2, 2, 2, 2}});
    check_case(&(dw_case){1, 4, 12, 12, 7, 7, 1, {3, 3, 3, 3}});
}

static void test_dilation_and_asymmetric_pads(void **state)
{
    (void)state;
    check_case(&(dw_case){2, 6, 9, 10, 3, 3, 2, {2, 2, 2, 2}});
    check_case(&(dw_case){1, 3, 8, 7, 3, 3, 1, {2, 0, 0, 2}});
    check_case(&(dw_case){1, 3, 8, 7, 4, 2, 1, {1, 1, 2, 0}});
    check_case(&(dw_case){3, 2, 7, 6, 5, 1, 1, {0, 0, 4, 0}});
    /* pad_top past the plane: the ring holds every row */
    check_case(&(dw_case){1, 2, 2, 5, 5, 3, 1, {4, 1, 0, 1}});
}

/* Rows wider than a block of columns; more planes than slots, shared by
 * the threads (run with several). */
static void test_wide_rows_many_planes(void **state)
{
    (void)state;
    check_case(&(dw_case){1, 3, 5, 150, 3, 3, 1, {1, 1, 1, 1}});
    check_case(&(dw_case){2, 40, 21, 19, 3, 3, 1, {1, 1, 1, 1}});
}

/* The workspace rule: min(planes, slots) rings of pad_top + 1 rows. */
static void test_workspace_rule(void **state)
{
    (void)state;
    dw_case c = {2, 40, 21, 19, 5, 5, 1, {2, 2, 2, 2}};
    dfg_attrs a = attrs_of(&c);
    dfg_type in[3], out;
    types_of(&c, DFG_F32, in, &out);
    assert_int_equal(dfg_op_in_place_workspace(DFG_OP_CONV2D, &a, in, 3,
                                               &out, 1, 0),
                     DFG_CONV_IN_PLACE_SLOTS * 3 * 19 * 4);
    c.n = 1, c.c = 3;
    a = attrs_of(&c);
    types_of(&c, DFG_F32, in, &out);
    assert_int_equal(dfg_op_in_place_workspace(DFG_OP_CONV2D, &a, in, 3,
                                               &out, 1, 0),
                     3 * 3 * 19 * 4);
    /* the op's own rule is unchanged: none */
    assert_int_equal(dfg_op_get(DFG_OP_CONV2D)->workspace(&a, in, 3, &out, 1),
                     0);
}

/* What may not be written over x: a stride, a dense or grouped conv, a
 * channel multiplier, a residual, y of another dtype, blocked operands;
 * and the kernel, handed such a step or too small a workspace, says so. */
static void test_refused(void **state)
{
    (void)state;
    dw_case c = {1, 4, 8, 8, 3, 3, 1, {1, 1, 1, 1}};
    dfg_attrs a = attrs_of(&c);
    dfg_type in[4], out;
    types_of(&c, DFG_F32, in, &out);
    assert_true(dfg_op_may_write_over_input(DFG_OP_CONV2D, &a, in, 3, &out,
                                            1, 0));
    assert_false(dfg_op_may_write_over_input(DFG_OP_CONV2D, &a, in, 3, &out,
                                             1, 1));
    in[3] = out; /* a residual */
    assert_false(dfg_conv_may_write_over_x(&a, in, 4, &out, 1));
    assert_true(dfg_op_may_write_over_input(DFG_OP_CONV2D, &a, in, 4, &out,
                                            1, 3));
    in[3].rank = -1; /* absent */
    assert_true(dfg_conv_may_write_over_x(&a, in, 4, &out, 1));
    dfg_type bf = out;
    bf.dtype = DFG_BF16;
    assert_false(dfg_conv_may_write_over_x(&a, in, 3, &bf, 1));
    dfg_type blocked = out, x = in[0];
    blocked.layout = 1;
    in[0].layout = 1;
    assert_false(dfg_conv_may_write_over_x(&a, in, 3, &blocked, 1));
    in[0] = x;
    dfg_attrs strided = a;
    strided.strides[0] = strided.strides[1] = 2;
    dfg_type half = type4(DFG_F32, 1, 4, 4, 4);
    assert_false(dfg_conv_may_write_over_x(&strided, in, 3, &half, 1));
    dfg_attrs grouped = a;
    grouped.group = 2;
    dfg_type gw = in[1];
    in[1] = type4(DFG_F32, 4, 2, 3, 3);
    assert_false(dfg_conv_may_write_over_x(&grouped, in, 3, &out, 1));
    dfg_attrs dense = a;
    dense.group = 1;
    in[1] = type4(DFG_F32, 4, 4, 3, 3);
    assert_false(dfg_conv_may_write_over_x(&dense, in, 3, &out, 1));
    /* two filters per channel: 2 channels in, 4 out of 8x8 */
    in[0] = type4(DFG_F32, 1, 2, 8, 8);
    in[1] = type4(DFG_F32, 4, 1, 3, 3);
    dfg_attrs multiplier = a;
    multiplier.group = 2;
    dfg_type wide = type4(DFG_F32, 1, 4, 8, 8);
    assert_false(dfg_conv_may_write_over_x(&multiplier, in, 3, &wide, 1));
    in[0] = x, in[1] = gw;

    /* the dense conv handed y == x; the depthwise one too little room */
    float *both = calloc(256, sizeof *both), *weights = calloc(144, 4);
    float bias[4] = {0};
    static float scratch[4096];
    const void *operands[3] = {both, weights, bias};
    void *outs[1] = {both};
    dfg_type dense_in[3] = {in[0], type4(DFG_F32, 4, 4, 3, 3), in[2]};
    dfg_kernel_args args = {.op = DFG_OP_CONV2D, .attrs = &dense,
                            .n_inputs = 3, .in_types = dense_in,
                            .in = operands, .n_outputs = 1,
                            .out_types = &out, .out = outs,
                            .workspace = scratch,
                            .workspace_bytes = sizeof scratch};
    assert_int_equal(dfg_cpu_kernel_for(DFG_OP_CONV2D)(&args),
                     DFG_ERR_INVALID_ARGUMENT);
    args.attrs = &a;
    args.in_types = in;
    args.workspace_bytes = 4 * 2 * 8 * 4 - 4;
    assert_int_equal(dfg_cpu_kernel_for(DFG_OP_CONV2D)(&args),
                     DFG_ERR_INVALID_ARGUMENT);
    args.workspace_bytes = 4 * 2 * 8 * 4;
    assert_int_equal(dfg_cpu_kernel_for(DFG_OP_CONV2D)(&args), DFG_OK);
    free(both);
    free(weights);
}

/* z = conv2d(relu(a), w, b) * a: x = relu(a) dies at the conv, a lives
 * across it, so y over x lowers the peak from three tensors to two; or,
 * without times_a, y itself, whose peak y over x does not lower. */
static dfg_graph *dw_graph(const dw_case *c, const float *w, const float *b,
                           int times_a)
{
    dfg_graph *g;
    dfg_value a, x, wv, bv, y, z;
    int64_t x_shape[4] = {c->n, c->c, c->h, c->w};
    int64_t w_shape[4] = {c->c, 1, c->kh, c->kw}, b_shape[1] = {c->c};
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    assert_int_equal(dfg_graph_input(g, "a", DFG_F32, 4, x_shape, &a), DFG_OK);
    assert_int_equal(dfg_graph_weight(g, "w", DFG_F32, 4, w_shape, w, &wv),
                     DFG_OK);
    assert_int_equal(dfg_graph_weight(g, "b", DFG_F32, 1, b_shape, b, &bv),
                     DFG_OK);
    assert_int_equal(dfg_graph_node(g, "relu", NULL, &a, 1, NULL, &x, 1),
                     DFG_OK);
    dfg_attrs attrs = attrs_of(c);
    dfg_value operands[3] = {x, wv, bv};
    assert_int_equal(dfg_graph_node(g, "conv2d", "dw", operands, 3, &attrs,
                                    &y, 1), DFG_OK);
    dfg_value factors[2] = {y, a};
    if (times_a)
        assert_int_equal(dfg_graph_node(g, "mul", NULL, factors, 2, NULL, &z,
                                        1), DFG_OK);
    assert_int_equal(dfg_graph_output(g, times_a ? z : y, "z"), DFG_OK);
    return g;
}

/* The conv step of p, and whether it writes over its x (*over). */
static int32_t conv_step(const dfg_program *p, int *over)
{
    for (int32_t s = 0; s < p->n_steps; s++) {
        const dfg_program_step *st = &p->steps[s];
        if (st->op != DFG_OP_CONV2D)
            continue;
        const dfg_program_tensor *x = &p->tensors[st->inputs[0]];
        const dfg_program_tensor *y = &p->tensors[st->outputs[0]];
        *over = x->region == y->region && x->offset == y->offset;
        return s;
    }
    fail_msg("no conv2d step");
    return -1;
}

typedef struct compiled {
    int over;          /* the conv writes over its x */
    int by_library;    /* a library runs the conv in the session */
    int64_t workspace; /* the conv step's */
} compiled;

/* Compiles g with o, checks the plan, runs it on input into y. */
static compiled compile_and_run(const dfg_graph *g, dfg_compile_options *o,
                                const float *input, float *y)
{
    compiled r = {0, 0, 0};
    dfg_program *p;
    if (dfg_compile(g, o, &p) != DFG_OK)
        fail_msg("compile: %s", dfg_last_error());
    assert_int_equal(dfg_program_verify(p), DFG_OK);
    int32_t s = conv_step(p, &r.over);
    r.workspace = p->steps[s].workspace >= 0
                      ? p->tensors[p->steps[s].workspace].bytes
                      : 0;
    const dfg_backend *cpu;
    dfg_session *session;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    assert_int_equal(dfg_session_create(p, cpu, NULL, &session), DFG_OK);
    const char *library;
    assert_int_equal(dfg_session_step_library(session, s, &library), DFG_OK);
    r.by_library = library != NULL;
    const void *in[1] = {input};
    void *out[1] = {y};
    assert_int_equal(dfg_session_run(session, in, out), DFG_OK);
    dfg_session_destroy(session);
    dfg_program_destroy(p);
    return r;
}

/* Planned over the dying x where dfg's kernel runs the step (without
 * oneDNN's rule; with prefer memory), never handed to oneDNN, and the
 * result is the out-of-place program's; with oneDNN's scratch planned
 * (the default) never over x, nor with prefer memory where it does not
 * lower the arena. */
static void test_compiler_plans_it(void **state)
{
    (void)state;
    const dw_case c = {1, 48, 28, 28, 3, 3, 1, {1, 1, 1, 1}};
    int64_t numel = c.n * c.c * c.h * c.w;
    float w[48 * 9], b[48];
    for (int i = 0; i < 48 * 9; i++)
        w[i] = check_uniform();
    for (int i = 0; i < 48; i++)
        b[i] = check_uniform();
    float *a = malloc((size_t)numel * 4), *over = malloc((size_t)numel * 4);
    float *apart = malloc((size_t)numel * 4);
    for (int64_t i = 0; i < numel; i++)
        a[i] = check_uniform();
    dfg_graph *g = dw_graph(&c, w, b, 1);
    dfg_attrs attrs = attrs_of(&c);
    dfg_type in[3], out;
    types_of(&c, DFG_F32, in, &out);
    int64_t ring = dfg_op_in_place_workspace(DFG_OP_CONV2D, &attrs, in, 3,
                                             &out, 1, 0);

    dfg_compile_options o;
    dfg_compile_options_init(&o);
    o.backend_workspace = NULL, o.backend_workspace_for = NULL;
    compiled plain = compile_and_run(g, &o, a, over);
    assert_true(plain.over && !plain.by_library);
    assert_int_equal(plain.workspace, ring);
    o.reuse_inputs_in_place = 0;
    compiled off = compile_and_run(g, &o, a, apart);
    assert_false(off.over);
    assert_memory_equal(over, apart, (size_t)numel * 4);

    dfg_compile_options_init(&o);
    o.prefer_memory = 1;
    compiled memory = compile_and_run(g, &o, a, over);
    assert_true(memory.over && !memory.by_library);
    assert_int_equal(memory.workspace, ring);
    for (int64_t i = 0; i < numel; i++)
        assert_float_equal(over[i], apart[i], 1e-5f);

    /* where it saves nothing, the faster kernel: without oneDNN's rule,
     * and with prefer memory */
    dfg_graph *chain = dw_graph(&c, w, b, 0);
    dfg_compile_options_init(&o);
    o.backend_workspace = NULL, o.backend_workspace_for = NULL;
    assert_false(compile_and_run(chain, &o, a, over).over);
    dfg_compile_options_init(&o);
    o.prefer_memory = 1;
    assert_false(compile_and_run(chain, &o, a, over).over);
    dfg_graph_destroy(chain);

    dfg_compile_options_init(&o);
    compiled fast = compile_and_run(g, &o, a, over);
    if (dfg_cpu_step_workspace(DFG_OP_CONV2D, &attrs, in, 3, &out, 1) >= 0)
        assert_false(fast.over);
    for (int64_t i = 0; i < numel; i++)
        assert_float_equal(over[i], apart[i], 1e-5f);
    dfg_graph_destroy(g);
    free(a);
    free(over);
    free(apart);
}

/* Whether oneDNN takes a depthwise conv step given all the scratch it
 * asks for, with y in bytes of its own or over x. */
static int onednn_takes(int in_place)
{
    const dw_case c = {1, 32, 28, 28, 3, 3, 1, {1, 1, 1, 1}};
    dfg_attrs a = attrs_of(&c);
    dfg_type in_types[3], out_type;
    types_of(&c, DFG_F32, in_types, &out_type);
    int64_t scratch = dfg_cpu_step_workspace(DFG_OP_CONV2D, &a, in_types, 3,
                                             &out_type, 1);
    if (scratch < 0)
        return 0;
    float *x = calloc(32 * 28 * 28, 4), *y = calloc(32 * 28 * 28, 4);
    float *w = calloc(32 * 9, 4), *b = calloc(32, 4);
    void *workspace = calloc(1, (size_t)scratch + 1);
    const void *in[3] = {x, w, b};
    void *out[1] = {in_place ? x : y};
    dfg_kernel_args step = {.op = DFG_OP_CONV2D, .attrs = &a, .n_inputs = 3,
                            .in_types = in_types, .in = in, .n_outputs = 1,
                            .out_types = &out_type, .out = out,
                            .workspace = workspace,
                            .workspace_bytes = scratch,
                            .constant_inputs = 6u, .backend_workspace = 1,
                            .layout_isa = ""};
    dfg_dnnl_steps *steps;
    assert_int_equal(dfg_dnnl_steps_prepare(NULL, &step, 1, &steps), DFG_OK);
    int took = dfg_dnnl_steps_take(steps, 0);
    dfg_dnnl_steps_destroy(steps, NULL);
    free(x);
    free(y);
    free(w);
    free(b);
    free(workspace);
    return took;
}

/* The session's routing: a step whose output is its x runs dfg's
 * kernel, even with oneDNN's scratch there (where oneDNN takes the same
 * step out of place). */
static void test_onednn_never_gets_it(void **state)
{
    (void)state;
    if (!onednn_takes(0))
        skip(); /* oneDNN does not take this conv on this CPU */
    assert_false(onednn_takes(1));
}

/* A target without the form never gets it; a program that has it is
 * refused by a backend without it, by message. */
static void test_target_without_it(void **state)
{
    (void)state;
    const dw_case c = {1, 8, 10, 10, 3, 3, 1, {1, 1, 1, 1}};
    float w[8 * 9], b[8] = {0};
    for (int i = 0; i < 8 * 9; i++)
        w[i] = check_uniform();
    dfg_graph *g = dw_graph(&c, w, b, 1);
    const dfg_backend *cpu;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    dfg_target target = *dfg_backend_target(cpu);
    assert_true(target.in_place_depthwise);
    target.in_place_depthwise = 0;
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    o.prefer_memory = 1;
    assert_int_equal(dfg_compile_options_for(&o, &target), DFG_OK);
    dfg_program *p;
    int over;
    assert_int_equal(dfg_compile(g, &o, &p), DFG_OK);
    conv_step(p, &over);
    assert_false(over);
    dfg_program_destroy(p);

    dfg_compile_options_init(&o);
    o.prefer_memory = 1;
    assert_int_equal(dfg_compile(g, &o, &p), DFG_OK);
    conv_step(p, &over);
    assert_true(over);
    dfg_backend without = *cpu;
    without.target = &target;
    dfg_session *s;
    assert_int_equal(dfg_session_create(p, &without, NULL, &s),
                     DFG_ERR_UNSUPPORTED);
    assert_non_null(strstr(dfg_last_error(), "over its input"));
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel_sizes),
        cmocka_unit_test(test_dilation_and_asymmetric_pads),
        cmocka_unit_test(test_wide_rows_many_planes),
        cmocka_unit_test(test_workspace_rule),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_compiler_plans_it),
        cmocka_unit_test(test_onednn_never_gets_it),
        cmocka_unit_test(test_target_without_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
