/* conv2d with few filters (runtime/cpu/linalg/conv_few_filters.h): convs
 * of 1 to 4 filters over random data, of kernel sizes from 1x2 to 9x7,
 * asymmetric pads, row strides 1 and 2, rows narrower than a vector
 * and wider than a block of columns, with and without a bias, a fused
 * relu or tanh, a residual sum, against a double-precision reference;
 * each compiled with the CPU's rule (where the step runs dfg's kernel,
 * on no library, as the compiler predicts) and mapped, and on the
 * reference rule; and which convs the kernel takes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dfg/dfg.h"
#include "passes/pass.h"
#include "program/program.h"
#include "runtime/cpu_workspace_rule.h"
#include "tests/runtime_cpu/dnnl_check.h"
#include "tests/support/random_data.h"

typedef struct few_case {
    int64_t n, c, h, w, m, kh, kw;
    int32_t stride_h;
    int64_t pads[4]; /* top, left, bottom, right */
    int bias, residual;
    const char *activation; /* "relu", "tanh" or NULL */
} few_case;

static int64_t out_size(int64_t in, int64_t k, int64_t stride, int64_t a,
                        int64_t b)
{
    return (in + a + b - k) / stride + 1;
}

/* y = act(conv(x, w) + bias [+ r]) in double. */
static void reference(const few_case *k, const float *x, const float *w,
                      const float *bias, const float *r, double *y)
{
    int64_t oh = out_size(k->h, k->kh, k->stride_h, k->pads[0], k->pads[2]);
    int64_t ow = out_size(k->w, k->kw, 1, k->pads[1], k->pads[3]);
    for (int64_t n = 0; n < k->n; n++)
        for (int64_t m = 0; m < k->m; m++)
            for (int64_t oy = 0; oy < oh; oy++)
                for (int64_t ox = 0; ox < ow; ox++) {
                    double s = bias ? bias[m] : 0.0;
                    for (int64_t c = 0; c < k->c; c++)
                        for (int64_t ky = 0; ky < k->kh; ky++)
                            for (int64_t kx = 0; kx < k->kw; kx++) {
                                int64_t iy = oy * k->stride_h + ky -
                                             k->pads[0];
                                int64_t ix = ox + kx - k->pads[1];
                                if (iy < 0 || iy >= k->h || ix < 0 ||
                                    ix >= k->w)
                                    continue;
                                s += (double)w[((m * k->c + c) * k->kh + ky) *
                                               k->kw + kx] *
                                     x[((n * k->c + c) * k->h + iy) * k->w +
                                       ix];
                            }
                    int64_t at = ((n * k->m + m) * oh + oy) * ow + ox;
                    if (r)
                        s += r[at];
                    if (k->activation && strcmp(k->activation, "relu") == 0)
                        s = s > 0.0 ? s : 0.0;
                    if (k->activation && strcmp(k->activation, "tanh") == 0)
                        s = tanh(s);
                    y[at] = s;
                }
}

/* x (and r) -> conv [+ r] [-> activation] -> y. */
static dfg_graph *few_graph(const few_case *k, const float *w,
                            const float *bias, int64_t out_numel)
{
    dfg_graph *g = NULL;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    int64_t oh = out_size(k->h, k->kh, k->stride_h, k->pads[0], k->pads[2]);
    int64_t ow = out_size(k->w, k->kw, 1, k->pads[1], k->pads[3]);
    int64_t xs[4] = {k->n, k->c, k->h, k->w};
    int64_t ws[4] = {k->m, k->c, k->kh, k->kw};
    int64_t ys[4] = {k->n, k->m, oh, ow};
    assert_int_equal(ys[0] * ys[1] * ys[2] * ys[3], out_numel);
    dfg_value x, wv, b = DFG_NO_VALUE, y, r;
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 4, xs, &x), DFG_OK);
    if (k->residual)
        assert_int_equal(dfg_graph_input(g, "r", DFG_F32, 4, ys, &r), DFG_OK);
    assert_int_equal(dfg_graph_weight(g, "w", DFG_F32, 4, ws, w, &wv), DFG_OK);
    if (k->bias)
        assert_int_equal(dfg_graph_weight(g, "b", DFG_F32, 1, &k->m, bias, &b),
                         DFG_OK);
    dfg_conv2d_params p = {
        {k->stride_h, 1}, {1, 1},
        {k->pads[0], k->pads[1], k->pads[2], k->pads[3]}, 1};
    assert_int_equal(dfg_conv2d(g, x, wv, b, &p, &y), DFG_OK);
    if (k->residual)
        y = node2(g, "add", y, r);
    if (k->activation)
        y = node1(g, k->activation, y, NULL);
    assert_int_equal(dfg_graph_output(g, y, "y"), DFG_OK);
    return g;
}

/* The program's conv step. */
static int32_t conv_step(const dfg_program *p)
{
    for (int32_t i = 0; i < p->n_steps; i++)
        if (p->steps[i].op == DFG_OP_CONV2D)
            return i;
    fail_msg("no conv2d step");
    return -1;
}

/* p run on x (and r) against want; with the CPU's rule (on_dfg 1), the
 * conv step one dfg's few-filter kernel takes, on no library, as the
 * compiler predicts. */
static void check_program(const dfg_program *p, const float *x,
                          const float *r, const double *want, int64_t n,
                          int on_dfg, const char *what)
{
    dfg_session *session;
    assert_int_equal(dfg_session_create(p, cpu(), NULL, &session), DFG_OK);
    int32_t step = conv_step(p);
    if (on_dfg) {
        const char *library = NULL;
        const dfg_program_step *s = &p->steps[step];
        dfg_type types[5];
        for (int32_t j = 0; j < s->n_inputs; j++) {
            memset(&types[j], 0, sizeof types[j]);
            types[j].rank = -1; /* absent */
            if (s->inputs[j] >= 0)
                types[j] = p->tensors[s->inputs[j]].type;
        }
        types[s->n_inputs] = p->tensors[s->outputs[0]].type;
        assert_true(dfg_cpu_step_few_filters(s->op, &s->attrs, types,
                                             s->n_inputs, types + s->n_inputs,
                                             1));
        assert_int_equal(dfg_session_step_library(session, step, &library),
                         DFG_OK);
        if (library)
            fail_msg("%s: the conv runs on %s", what, library);
        assert_false(dfg_program_step_on_library(p, step));
    }
    float *y = malloc((size_t)n * sizeof *y);
    assert_non_null(y);
    const void *inputs[2] = {x, r};
    void *outputs[1] = {y};
    assert_int_equal(dfg_session_run(session, inputs, outputs), DFG_OK);
    double err = 0.0, norm = 0.0;
    for (int64_t i = 0; i < n; i++) {
        err = fmax(err, fabs(y[i] - want[i]));
        norm = fmax(norm, fabs(want[i]));
    }
    if (!(err <= 1e-5 * norm + 1e-6))
        fail_msg("%s: max error %g against max %g", what, err, norm);
    free(y);
    dfg_session_destroy(session);
}

static void check_case(const few_case *k)
{
    int64_t oh = out_size(k->h, k->kh, k->stride_h, k->pads[0], k->pads[2]);
    int64_t ow = out_size(k->w, k->kw, 1, k->pads[1], k->pads[3]);
    int64_t n_out = k->n * k->m * oh * ow;
    float *x = random_floats(k->n * k->c * k->h * k->w, 1.0f);
    float *w = random_floats(k->m * k->c * k->kh * k->kw, 0.3f);
    float *bias = random_floats(k->m, 0.5f);
    float *r = k->residual ? random_floats(n_out, 1.0f) : NULL;
    double *want = malloc((size_t)n_out * sizeof *want);
    assert_non_null(want);
    reference(k, x, w, k->bias ? bias : NULL, r, want);
    dfg_graph *g = few_graph(k, w, bias, n_out);
    char what[160];
    snprintf(what, sizeof what, "%lldx%lldx%lldx%lld, %lld filters %lldx%lld, "
             "stride %d, %s%s%s", (long long)k->n, (long long)k->c,
             (long long)k->h, (long long)k->w, (long long)k->m,
             (long long)k->kh, (long long)k->kw, (int)k->stride_h,
             k->bias ? "bias " : "", k->residual ? "residual " : "",
             k->activation ? k->activation : "");
    dfg_program *p = compiled_for(g, FUSED_ONEDNN, 0);
    check_program(p, x, r, want, n_out, 1, what);
    dfg_program_destroy(p);
    p = compiled_for(g, FUSED_REFERENCE, 0);
    check_program(p, x, r, want, n_out, 0, what);
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
    free(want);
    free(r);
    free(bias);
    free(w);
    free(x);
}

static void test_random_convs(void **state)
{
    (void)state;
    random_seed(31);
    static const int64_t widths[] = {1, 5, 16, 37, 300};
    static const char *const activations[] = {NULL, "relu", "tanh"};
    for (int i = 0; i < 40; i++) {
        few_case k = {
            .n = 1 + i % 2, .c = 1 + (i * 7) % 17, .h = 3 + (i * 5) % 11,
            .w = widths[i % 5], .m = 1 + i % 4, .kh = 1 + (i * 3) % 9,
            .kw = 2 + (i * 5) % 6, .stride_h = 1 + (i / 3) % 2,
            .bias = i % 3 != 0, .residual = i % 5 == 2,
            .activation = activations[i % 3]};
        k.pads[0] = (k.kh - 1) / 2 + i % 2;
        k.pads[1] = (k.kw - 1) / 2;
        k.pads[2] = k.kh / 2;
        k.pads[3] = k.kw / 2 + (i % 4 == 1);
        if (k.h + k.pads[0] + k.pads[2] < k.kh)
            k.h = k.kh;
        check_case(&k);
    }
}

/* The shapes the kernel was made for: an image-to-image network's last
 * conv (32 channels to 3 colours, 9x9, at 64x300; to 1 channel, 3x3). */
static void test_output_convs(void **state)
{
    (void)state;
    random_seed(32);
    few_case colours = {1, 32, 64, 300, 3, 9, 9, 1, {4, 4, 4, 4}, 1, 0, NULL};
    check_case(&colours);
    few_case depth = {1, 64, 40, 80, 1, 3, 3, 1, {1, 1, 1, 1}, 1, 0, "relu"};
    check_case(&depth);
}

/* Which convs the kernel takes: up to 4 filters of plain f32 operands,
 * one group, stride 1 along the width, no dilation, kernels up to 32
 * wide; not 5 filters, blocked or f16 operands, a 1x1 kernel, groups, a
 * stride or a dilation along the width, or a wider kernel. */
static void test_which_convs(void **state)
{
    (void)state;
    dfg_type t[4] = {{DFG_F32, 4, {1, 8, 10, 10}, DFG_LAYOUT_PLAIN},
                     {DFG_F32, 4, {4, 8, 3, 3}, DFG_LAYOUT_PLAIN},
                     {DFG_F32, 1, {4}, DFG_LAYOUT_PLAIN},
                     {DFG_F32, 4, {1, 4, 10, 10}, DFG_LAYOUT_PLAIN}};
    dfg_attrs a;
    dfg_attrs_init(&a);
    for (int i = 0; i < 4; i++)
        a.pads[i] = 1;
    assert_true(dfg_cpu_step_few_filters(DFG_OP_CONV2D, &a, t, 3, &t[3], 1));
    assert_false(dfg_cpu_step_few_filters(DFG_OP_MATMUL, &a, t, 3, &t[3], 1));
    dfg_type u[4];
    memcpy(u, t, sizeof u);
    u[1].shape[0] = u[2].shape[0] = u[3].shape[1] = 5; /* five filters */
    assert_false(dfg_cpu_step_few_filters(DFG_OP_CONV2D, &a, u, 3, &u[3], 1));
    memcpy(u, t, sizeof u);
    u[0].layout = DFG_LAYOUT_NCHW16C;
    assert_false(dfg_cpu_step_few_filters(DFG_OP_CONV2D, &a, u, 3, &u[3], 1));
    memcpy(u, t, sizeof u);
    u[0].dtype = u[1].dtype = u[3].dtype = DFG_F16;
    assert_false(dfg_cpu_step_few_filters(DFG_OP_CONV2D, &a, u, 2, &u[3], 1));
    memcpy(u, t, sizeof u);
    u[1].shape[2] = u[1].shape[3] = 1; /* 1x1: oneDNN's product */
    dfg_attrs b = a;
    for (int i = 0; i < 4; i++)
        b.pads[i] = 0;
    assert_false(dfg_cpu_step_few_filters(DFG_OP_CONV2D, &b, u, 3, &u[3], 1));
    b = a;
    b.strides[1] = 2;
    memcpy(u, t, sizeof u);
    u[3].shape[3] = 5;
    assert_false(dfg_cpu_step_few_filters(DFG_OP_CONV2D, &b, u, 3, &u[3], 1));
    b = a;
    b.dilations[1] = 2;
    memcpy(u, t, sizeof u);
    u[3].shape[3] = 8;
    assert_false(dfg_cpu_step_few_filters(DFG_OP_CONV2D, &b, u, 3, &u[3], 1));
    b = a;
    b.group = 2;
    memcpy(u, t, sizeof u);
    u[1].shape[1] = 4;
    assert_false(dfg_cpu_step_few_filters(DFG_OP_CONV2D, &b, u, 3, &u[3], 1));
    b = a;
    b.pads[1] = b.pads[3] = 16;
    memcpy(u, t, sizeof u);
    u[1].shape[3] = 33;
    assert_false(dfg_cpu_step_few_filters(DFG_OP_CONV2D, &b, u, 3, &u[3], 1));
    b.pads[1] = b.pads[3] = 15;
    u[1].shape[3] = 31;
    assert_true(dfg_cpu_step_few_filters(DFG_OP_CONV2D, &b, u, 3, &u[3], 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_convs),
        cmocka_unit_test(test_output_convs),
        cmocka_unit_test(test_which_convs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
