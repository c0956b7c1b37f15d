/* A training step's convolutions on oneDNN (runtime/cpu/onednn/
 * dnnl_conv_grad.h, dnnl_conv.c with weights that change) against dfg's
 * own kernels, on random data, for every geometry class: strides,
 * asymmetric pads, groups, depthwise, dilation, 1x1, a 3-channel stem;
 * dx planned over dy; weights changed between runs. Then the bundled
 * cnn's training step: every conv and conv gradient runs on oneDNN
 * where the training rule planned its scratch, and four steps give dfg's
 * kernels' losses within f32 rounding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dfg/dfg.h"
#include "ir/op_table.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/onednn/dnnl_conv.h"
#include "runtime/cpu/onednn/dnnl_conv_grad.h"
#include "runtime/cpu_workspace_rule.h"
#include "tests/training/training_fixtures.h"

typedef struct geometry {
    const char *what;
    int64_t n, c, h, w, m, kh, kw;
    int32_t group, stride[2], dilation[2];
    int64_t pads[4]; /* top, left, bottom, right */
} geometry;

static const geometry cases[] = {
    {"3x3 pad 1", 4, 16, 9, 9, 32, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}},
    {"3x3 stride 2", 3, 16, 10, 10, 16, 3, 3, 1, {2, 2}, {1, 1}, {1, 1, 1, 1}},
    {"1x1", 4, 32, 6, 6, 16, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}},
    {"1x1 stride 2", 2, 16, 7, 7, 32, 1, 1, 1, {2, 2}, {1, 1}, {0, 0, 0, 0}},
    {"asymmetric pads", 2, 8, 7, 6, 16, 3, 2, 1, {1, 2}, {1, 1}, {0, 1, 2, 1}},
    {"2 groups", 2, 16, 8, 8, 32, 3, 3, 2, {1, 1}, {1, 1}, {1, 1, 1, 1}},
    {"depthwise", 2, 16, 8, 8, 16, 3, 3, 16, {1, 1}, {1, 1}, {1, 1, 1, 1}},
    {"dilation 2", 2, 16, 11, 11, 16, 3, 3, 1, {1, 1}, {2, 2}, {2, 2, 2, 2}},
    {"7x7 stem", 2, 3, 16, 16, 16, 7, 7, 1, {2, 2}, {1, 1}, {3, 3, 3, 3}},
    {"3x3 over 1x1", 4, 32, 1, 1, 32, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}},
};

static uint64_t rng = 99;

static float *random_floats(int64_t n)
{
    float *x = malloc((size_t)n * sizeof *x);
    assert_non_null(x);
    for (int64_t i = 0; i < n; i++) {
        rng = rng * 6364136223846793005u + 1442695040888963407u;
        x[i] = (float)((rng >> 40) * (1.0 / 16777216.0)) * 2.0f - 1.0f;
    }
    return x;
}

static double relative_error(const float *a, const float *b, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        den += (double)b[i] * b[i];
    }
    return sqrt(num / den);
}

/* The types of x, w, y and the conv's attributes. */
static void geometry_types(const geometry *k, dfg_type *x, dfg_type *w,
                           dfg_type *y, dfg_attrs *a)
{
    int64_t oh = (k->h + k->pads[0] + k->pads[2] -
                  k->dilation[0] * (k->kh - 1) - 1) / k->stride[0] + 1;
    int64_t ow = (k->w + k->pads[1] + k->pads[3] -
                  k->dilation[1] * (k->kw - 1) - 1) / k->stride[1] + 1;
    *x = (dfg_type){DFG_F32, 4, {k->n, k->c, k->h, k->w}, 0};
    *w = (dfg_type){DFG_F32, 4, {k->m, k->c / k->group, k->kh, k->kw}, 0};
    *y = (dfg_type){DFG_F32, 4, {k->n, k->m, oh, ow}, 0};
    dfg_attrs_init(a);
    a->group = k->group;
    memcpy(a->strides, k->stride, sizeof a->strides);
    memcpy(a->dilations, k->dilation, sizeof a->dilations);
    memcpy(a->pads, k->pads, sizeof k->pads);
}

/* A step of op over in -> out with a workspace of `bytes`. */
static dfg_kernel_args step_of(dfg_op op, const dfg_attrs *a,
                               const dfg_type *in_types, const void **in,
                               const dfg_type *out_type, void **out,
                               int64_t bytes)
{
    return (dfg_kernel_args){.op = op, .attrs = a, .n_inputs = 2,
                             .in_types = in_types, .in = in, .n_outputs = 1,
                             .out_types = out_type, .out = out,
                             /* a byte more: a planned workspace of 0 bytes
                                                is there too */
                             .workspace = malloc((size_t)bytes + 1),
                             .workspace_bytes = bytes,
                             .backend_workspace = 1};
}

typedef struct engine {
    dnnl_engine_t engine;
    dnnl_stream_t stream;
} engine;

static engine engine_make(void)
{
    engine e;
    assert_int_equal(dnnl_engine_create(&e.engine, dnnl_cpu, 0), dnnl_success);
    assert_int_equal(dnnl_stream_create(&e.stream, e.engine,
                                        dnnl_stream_default_flags),
                     dnnl_success);
    return e;
}

static void engine_free(engine *e)
{
    dnnl_stream_destroy(e->stream);
    dnnl_engine_destroy(e->engine);
}

/* One backward op of case k: oneDNN's result against dfg's kernel's on
 * two sets of inputs (the second after the first ran: a run reads its
 * inputs again); over: dx planned over dy, which oneDNN refuses where it
 * would read dy in place (no reorder of dy or dx). 0 if oneDNN does not
 * take it on this CPU. */
static int check_grad(const geometry *k, dfg_op op, int over, int fixed)
{
    dfg_type x, w, y;
    dfg_attrs a;
    geometry_types(k, &x, &w, &y, &a);
    int data = op == DFG_OP_CONV2D_GRAD_INPUT;
    const dfg_type *result = data ? &x : &w;
    a.n_shape = 4;
    memcpy(a.shape, result->shape, sizeof a.shape[0] * 4);
    dfg_type in_types[2] = {y, data ? w : x};
    int64_t n_dy = dfg_type_numel(&y), n_other = dfg_type_numel(&in_types[1]);
    int64_t n_out = dfg_type_numel(result);
    int64_t own = data ? dfg_workspace_conv2d_grad_input(&a, in_types, 2,
                                                         result, 1)
                       : dfg_workspace_conv2d_grad_weight(&a, in_types, 2,
                                                          result, 1);
    /* A training step's rule, or an inference program's for constant
     * weights (fixed: a ConvTranspose's w, reordered once outside the
     * workspace, which is then no larger). */
    int64_t bytes = fixed ? dfg_cpu_step_workspace(op, &a, in_types, 2, result, 1)
                          : dfg_cpu_training_step_workspace(op, &a, in_types, 2,
                                                            result, 1);
    if (bytes < 0)
        return 0;
    if (fixed)
        assert_true(bytes <= dfg_cpu_training_step_workspace(
                                 op, &a, in_types, 2, result, 1));
    engine e = engine_make();
    float *ref = malloc((size_t)n_out * sizeof *ref);
    float *got = malloc((size_t)(n_out > n_dy ? n_out : n_dy) * sizeof *got);
    assert_true(ref && got);
    for (int round = 0; round < 2; round++) {
        float *dy = random_floats(n_dy), *other = random_floats(n_other);
        const void *in[2] = {dy, other};
        void *ref_out[1] = {ref};
        dfg_kernel_args r = step_of(op, &a, in_types, in, result, ref_out, own);
        assert_int_equal(data ? dfg_cpu_conv2d_grad_input(&r)
                              : dfg_cpu_conv2d_grad_weight(&r),
                         DFG_OK);
        free(r.workspace);
        /* dx over dy: dy's bytes in the output buffer. */
        if (over)
            memcpy(got, dy, (size_t)n_dy * sizeof *got);
        const void *in_got[2] = {over ? got : dy, other};
        void *out[1] = {got};
        dfg_kernel_args s = step_of(op, &a, in_types, in_got, result, out,
                                    bytes);
        s.constant_inputs = fixed ? 2u : 0u;
        dfg_dnnl_conv_grad *grad = NULL;
        assert_int_equal(dfg_dnnl_conv_grad_create(e.engine, &s, NULL, &grad),
                         DFG_OK);
        if (!grad && over) { /* dy read in place: dfg's kernel runs it */
            free(s.workspace);
            free(dy);
            free(other);
            break;
        }
        if (!grad)
            fail_msg("%s %s: planned for oneDNN, not taken", k->what,
                     dfg_op_get(op)->name);
        assert_int_equal(dfg_dnnl_conv_grad_run(grad, e.stream), DFG_OK);
        double err = relative_error(got, ref, n_out);
        if (!(err < 1e-5))
            fail_msg("%s %s%s: oneDNN %s vs dfg relative error %g", k->what,
                     dfg_op_get(op)->name, over ? " over dy" : "",
                     dfg_dnnl_conv_grad_impl(grad), err);
        /* No workspace planned: dfg's kernel runs it. */
        dfg_dnnl_conv_grad_destroy(grad, NULL);
        free(s.workspace);
        s.workspace = NULL;
        s.workspace_bytes = 0;
        assert_int_equal(dfg_dnnl_conv_grad_create(e.engine, &s, NULL, &grad),
                         DFG_OK);
        assert_null(grad);
        free(dy);
        free(other);
    }
    free(ref);
    free(got);
    engine_free(&e);
    return 1;
}

/* The forward conv with weights that change: oneDNN reorders them at
 * every run, so a run after the weights changed gives the new result. */
static int check_forward(const geometry *k)
{
    dfg_type x, w, y;
    dfg_attrs a;
    geometry_types(k, &x, &w, &y, &a);
    dfg_type in_types[2] = {x, w};
    int64_t bytes = dfg_cpu_training_step_workspace(DFG_OP_CONV2D, &a,
                                                    in_types, 2, &y, 1);
    if (bytes < 0)
        return 0;
    int64_t own = dfg_workspace_conv2d(&a, in_types, 2, &y, 1);
    int64_t n_y = dfg_type_numel(&y);
    float *xs = random_floats(dfg_type_numel(&x));
    float *ws = random_floats(dfg_type_numel(&w));
    float *ref = malloc((size_t)n_y * sizeof *ref);
    float *got = malloc((size_t)n_y * sizeof *got);
    const void *in[2] = {xs, ws};
    void *ref_out[1] = {ref}, *out[1] = {got};
    engine e = engine_make();
    dfg_kernel_args s = step_of(DFG_OP_CONV2D, &a, in_types, in, &y, out,
                                bytes);
    dfg_dnnl_conv *conv = NULL;
    assert_int_equal(dfg_dnnl_conv_create(e.engine, &s, 0, NULL, &conv),
                     DFG_OK);
    if (!conv)
        fail_msg("%s conv2d: planned for oneDNN, not taken", k->what);
    for (int round = 0; round < 2; round++) {
        float *changed = random_floats(dfg_type_numel(&w));
        memcpy(ws, changed, (size_t)dfg_type_numel(&w) * sizeof *ws);
        free(changed);
        dfg_kernel_args r = step_of(DFG_OP_CONV2D, &a, in_types, in, &y,
                                    ref_out, own);
        assert_int_equal(dfg_cpu_conv2d(&r), DFG_OK);
        free(r.workspace);
        assert_int_equal(dfg_dnnl_conv_run(conv, e.stream), DFG_OK);
        double err = relative_error(got, ref, n_y);
        if (!(err < 1e-5))
            fail_msg("%s conv2d, weights changed: oneDNN vs dfg relative "
                     "error %g", k->what, err);
    }
    dfg_dnnl_conv_destroy(conv, NULL);
    free(s.workspace);
    engine_free(&e);
    free(xs);
    free(ws);
    free(ref);
    free(got);
    return 1;
}

static void test_every_geometry(void **state)
{
    (void)state;
    int taken = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const geometry *k = &cases[i];
        taken += check_grad(k, DFG_OP_CONV2D_GRAD_WEIGHT, 0, 0);
        taken += check_forward(k);
        if (k->stride[0] == 1 || k->c == k->m) { /* dx */
            taken += check_grad(k, DFG_OP_CONV2D_GRAD_INPUT, 0, 0);
            taken += check_grad(k, DFG_OP_CONV2D_GRAD_INPUT, 0, 1);
        }
        int square = k->stride[0] == 1 && k->stride[1] == 1 &&
                     k->c == k->m && k->pads[0] == k->pads[2] &&
                     k->pads[1] == k->pads[3];
        if (square) /* dx may be planned over dy */
            taken += check_grad(k, DFG_OP_CONV2D_GRAD_INPUT, 1, 0);
    }
    /* oneDNN has more than its reference for some of them on every CPU
     * it runs on (a gemm at least). */
    assert_true(taken > 0);
}

/* Mixed precision keeps dfg's kernels: bf16 operands have no rule. */
static void test_bf16_not_planned(void **state)
{
    (void)state;
    dfg_type x, w, y;
    dfg_attrs a;
    geometry_types(&cases[0], &x, &w, &y, &a);
    x.dtype = y.dtype = DFG_BF16;
    dfg_type in_types[2] = {y, x};
    a.n_shape = 4;
    memcpy(a.shape, w.shape, sizeof a.shape[0] * 4);
    assert_int_equal(dfg_cpu_training_step_workspace(
                         DFG_OP_CONV2D_GRAD_WEIGHT, &a, in_types, 2, &w, 1),
                     -1);
}

static float run_losses(dfg_program *p, float *losses, int steps)
{
    const dfg_backend *cpu;
    dfg_session *s;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    assert_int_equal(dfg_session_create(p, cpu, NULL, &s), DFG_OK);
    static float x[32 * 64];
    static int64_t labels[32];
    for (int step = 0; step < steps; step++) {
        rng = 1000u + (uint64_t)step; /* the same batches for every p */
        float *xs = random_floats(32 * 64);
        memcpy(x, xs, sizeof x);
        free(xs);
        for (int i = 0; i < 32; i++)
            labels[i] = i % 10;
        const void *in[2] = {x, labels};
        float norms[64];
        void *out[2] = {&losses[step], norms};
        assert_int_equal(dfg_session_run(s, in, out), DFG_OK);
    }
    /* Every conv and conv gradient whose workspace holds oneDNN's
     * scratch runs on oneDNN. */
    dfg_plan_stats stats;
    dfg_program_stats(p, &stats);
    int planned = 0, on_library = 0;
    for (int32_t i = 0; i < stats.n_steps; i++) {
        dfg_step_info info;
        const char *library = NULL;
        assert_int_equal(dfg_program_step_info(p, i, &info), DFG_OK);
        if (strcmp(info.op, "conv2d") != 0 &&
            strcmp(info.op, "conv2d_grad_input") != 0 &&
            strcmp(info.op, "conv2d_grad_weight") != 0)
            continue;
        assert_int_equal(dfg_session_step_library(s, i, &library), DFG_OK);
        planned++;
        on_library += library != NULL;
    }
    dfg_session_destroy(s);
    return planned ? (float)on_library / (float)planned : 0.0f;
}

static void test_cnn_step_on_onednn(void **state)
{
    (void)state;
    dfg_training_options t;
    dfg_training_options_init(&t);
    t.optimizer = DFG_OPTIMIZER_ADAM;
    t.learning_rate = 0.003f;
    dfg_program *fast = compile_bundled_training("cnn", &t);
    dfg_program *ref = compile_bundled_training_reference("cnn", &t);
    float losses[4], ref_losses[4];
    float share = run_losses(fast, losses, 4);
    float ref_share = run_losses(ref, ref_losses, 4);
    for (int step = 0; step < 4; step++)
        if (!(fabsf(losses[step] - ref_losses[step]) <=
              1e-4f * fabsf(ref_losses[step])))
            fail_msg("step %d: loss %.7g on oneDNN, %.7g on dfg's kernels",
                     step, losses[step], ref_losses[step]);
    assert_true(share == 1.0f);
    assert_true(ref_share == 0.0f);
    dfg_program_destroy(fast);
    dfg_program_destroy(ref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_geometry),
        cmocka_unit_test(test_bf16_not_planned),
        cmocka_unit_test(test_cnn_step_on_onednn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
