/* conv2d_grad_input written over its dy (runtime/cpu/linalg/conv2d_grad.c,
 * dfg_conv_grad_input_saved_bytes): where dx has dy's type, the kernel
 * gives the same bits with dx in dy's bytes as in bytes of its own, and
 * both match a double-precision reference on seeded random data, with
 * chunks of several whole images (batch larger than a chunk), chunks
 * that cut images apart (full and smaller workspaces), groups with
 * dilation, an asymmetric kernel and the direct 1x1 product, in f32 and
 * bf16. The alias pass plans dx over a dying dy, the plan verifier
 * accepts it, and the result is the out-of-place one; a training step
 * whose budget plan writes input gradients in place computes the losses
 * of the unconstrained step. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ir/geometry/backward_geometry.h"
#include "runtime/cpu/kernels.h"
#include "dfg/dfg.h"
#include "ir/op_table.h"
#include "program/program.h"
#include "tests/support/bf16.h"
#include "tests/training/training_fixtures.h"

/* A conv whose input gradient has dy's shape: n images of c channels of
 * h x w, a kh x kw kernel with pads (top, left, bottom, right). */
typedef struct same_case {
    int64_t n, c, h, w, kh, kw;
    int32_t group, dilation;
    int64_t pads[4];
} same_case;

static uint64_t rng = 0x2545F4914F6CDD1DULL;

static float random_signed(void)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (float)((double)(rng >> 40) / (double)(1 << 23) - 1.0);
}

static dfg_type type4(dfg_dtype dtype, int64_t a, int64_t b, int64_t c,
                      int64_t d)
{
    return (dfg_type){dtype, 4, {a, b, c, d}, DFG_LAYOUT_PLAIN};
}

static dfg_attrs attrs_of(const same_case *c)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.dilations[0] = a.dilations[1] = c->dilation;
    for (int i = 0; i < 4; i++)
        a.pads[i] = c->pads[i];
    a.group = c->group;
    a.n_shape = 4;
    int64_t shape[4] = {c->n, c->c, c->h, c->w};
    memcpy(a.shape, shape, sizeof shape);
    return a;
}

/* dx = conv2d_grad_input(dy, w) through the CPU kernel with `workspace`
 * bytes; dy (n elements of dtype) is copied into dx's buffer first when
 * in_place, so that dx is written over it. */
static void run_kernel(const same_case *c, dfg_dtype dtype, const void *dy,
                       const float *w, int64_t workspace, int in_place,
                       void *dx)
{
    dfg_attrs a = attrs_of(c);
    dfg_type types[2] = {type4(dtype, c->n, c->c, c->h, c->w),
                         type4(DFG_F32, c->c, c->c / c->group, c->kh, c->kw)};
    dfg_type out_type = types[0];
    int64_t bytes = dfg_type_bytes(&types[0]);
    if (in_place)
        memcpy(dx, dy, (size_t)bytes);
    const void *in[2] = {in_place ? dx : dy, w};
    void *out[1] = {dx};
    void *scratch = malloc((size_t)workspace + 1);
    dfg_kernel_args args = {.op = DFG_OP_CONV2D_GRAD_INPUT, .attrs = &a,
                            .n_inputs = 2, .in_types = types, .in = in,
                            .n_outputs = 1, .out_types = &out_type,
                            .out = out, .workspace = scratch,
                            .workspace_bytes = workspace};
    dfg_status st = dfg_cpu_kernel_for(DFG_OP_CONV2D_GRAD_INPUT)(&args);
    if (st != DFG_OK)
        fail_msg("conv2d_grad_input: %s", dfg_last_error());
    free(scratch);
}

/* dx from the definition, in double: every tap of every output pixel adds
 * dy * w into the input element it reads. */
static void reference(const same_case *c, const float *dy, const float *w,
                      double *dx)
{
    int64_t cg = c->c / c->group, plane = c->h * c->w;
    memset(dx, 0, (size_t)(c->n * c->c * plane) * sizeof *dx);
    for (int64_t n = 0; n < c->n; n++)
        for (int64_t m = 0; m < c->c; m++)
            for (int64_t p = 0; p < plane; p++)
                for (int64_t ci = 0; ci < cg; ci++)
                    for (int64_t ky = 0; ky < c->kh; ky++)
                        for (int64_t kx = 0; kx < c->kw; kx++) {
                            int64_t iy = p / c->w - c->pads[0] +
                                         ky * c->dilation;
                            int64_t ix = p % c->w - c->pads[1] +
                                         kx * c->dilation;
                            if (iy < 0 || iy >= c->h || ix < 0 || ix >= c->w)
                                continue;
                            int64_t ch = m / (c->c / c->group) * cg + ci;
                            dx[(n * c->c + ch) * plane + iy * c->w + ix] +=
                                (double)dy[(n * c->c + m) * plane + p] *
                                w[((m * cg + ci) * c->kh + ky) * c->kw + kx];
                        }
}

/* In place and out of place, the same bits, near the reference (1e-5 in
 * f32, 1e-2 in bf16, whose dy is rounded to bf16 for the reference). */
static void check_workspace(const same_case *c, dfg_dtype dtype,
                            int64_t workspace)
{
    int64_t numel = c->n * c->c * c->h * c->w;
    int64_t nw = c->c * (c->c / c->group) * c->kh * c->kw;
    float *dy = malloc((size_t)numel * sizeof *dy);
    float *w = malloc((size_t)nw * sizeof *w);
    uint16_t *narrow = malloc((size_t)numel * sizeof *narrow);
    for (int64_t i = 0; i < numel; i++) {
        dy[i] = random_signed();
        narrow[i] = to_bf16(dy[i]);
        if (dtype != DFG_F32)
            dy[i] = from_bf16(narrow[i]);
    }
    for (int64_t i = 0; i < nw; i++)
        w[i] = random_signed();
    const void *stored = dtype == DFG_F32 ? (const void *)dy : narrow;
    size_t bytes = (size_t)numel * dfg_dtype_size(dtype);
    void *apart = malloc(bytes), *over = malloc(bytes);
    run_kernel(c, dtype, stored, w, workspace, 0, apart);
    run_kernel(c, dtype, stored, w, workspace, 1, over);
    assert_memory_equal(apart, over, bytes);
    double *want = malloc((size_t)numel * sizeof *want);
    reference(c, dy, w, want);
    double diff = 0.0, norm = 0.0;
    for (int64_t i = 0; i < numel; i++) {
        double got = dtype == DFG_F32 ? ((float *)over)[i]
                                      : from_bf16(((uint16_t *)over)[i]);
        diff += (got - want[i]) * (got - want[i]);
        norm += want[i] * want[i];
    }
    assert_true(norm > 0.0);
    double tolerance = dtype == DFG_F32 ? 1e-5 : 1e-2;
    if (!(sqrt(diff / norm) < tolerance))
        fail_msg("%s, workspace %lld: relative error %.3g",
                 dfg_dtype_name(dtype), (long long)workspace,
                 sqrt(diff / norm));
    free(dy);
    free(w);
    free(narrow);
    free(apart);
    free(over);
    free(want);
}

/* The full workspace (the op's rule), the least, and one whose chunks
 * are an image and a half; each in f32 and bf16. Returns the geometry. */
static dfg_conv_geometry check_case(const same_case *c)
{
    dfg_attrs a = attrs_of(c);
    dfg_type types[2] = {type4(DFG_F32, c->n, c->c, c->h, c->w),
                         type4(DFG_F32, c->c, c->c / c->group, c->kh, c->kw)};
    dfg_conv_geometry g;
    assert_int_equal(dfg_conv_grad_geometry(&a, &types[0], &types[1],
                                            &types[0], &g), DFG_OK);
    for (int narrow = 0; narrow < 2; narrow++) {
        dfg_dtype dtype = narrow ? DFG_BF16 : DFG_F32;
        types[0].dtype = dtype;
        int64_t full = dfg_op_get(DFG_OP_CONV2D_GRAD_INPUT)->workspace(
            &a, types, 2, &types[0], 1);
        int64_t least = dfg_op_least_workspace(DFG_OP_CONV2D_GRAD_INPUT, &a,
                                               types, 2, &types[0], 1);
        int64_t saved = dfg_conv_grad_input_saved_bytes(&g, &types[0],
                                                        &types[0]);
        assert_true(saved >= g.filters_per_group * g.pixels *
                                 (int64_t)dfg_dtype_size(dtype));
        assert_int_equal(full, saved + dfg_conv_grad_workspace_bytes(&g));
        check_workspace(c, dtype, full);
        check_workspace(c, dtype, least);
        int64_t middle = saved + (g.filters_per_group + g.k) * 4 *
                                     (g.pixels * 3 / 2);
        if (!g.direct && middle < full)
            check_workspace(c, dtype, middle);
    }
    return g;
}

/* The bundled cnn's block convs, 9 images: chunks of 4 whole images, the
 * last one short. */
static void test_whole_images(void **state)
{
    (void)state;
    dfg_conv_geometry g =
        check_case(&(same_case){9, 16, 8, 8, 3, 3, 1, 1, {1, 1, 1, 1}});
    int64_t chunk = dfg_conv_grad_chunk(&g);
    assert_true(chunk % g.pixels == 0 && chunk < g.batch * g.pixels);
}

/* 32 channels at 32x32: a full chunk is less than an image and does not
 * divide the batch's columns, so chunks cut images apart. */
static void test_chunks_cut_images(void **state)
{
    (void)state;
    dfg_conv_geometry g =
        check_case(&(same_case){3, 32, 32, 32, 3, 3, 1, 1, {1, 1, 1, 1}});
    int64_t chunk = dfg_conv_grad_chunk(&g);
    assert_true(chunk < g.pixels && (g.batch * g.pixels) % chunk != 0);
}

static void test_grouped_dilated_asymmetric(void **state)
{
    (void)state;
    check_case(&(same_case){5, 8, 6, 7, 3, 3, 2, 2, {2, 2, 2, 2}});
    check_case(&(same_case){4, 6, 5, 9, 3, 1, 3, 1, {1, 0, 1, 0}});
}

static void test_direct_1x1(void **state)
{
    (void)state;
    dfg_conv_geometry g =
        check_case(&(same_case){4, 6, 5, 5, 1, 1, 2, 1, {0, 0, 0, 0}});
    assert_true(g.direct);
}

/* A stride changes the shape: never in place, no image kept aside. */
static void test_other_shape_keeps_nothing(void **state)
{
    (void)state;
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.strides[0] = a.strides[1] = 2;
    a.pads[0] = a.pads[1] = a.pads[2] = a.pads[3] = 1;
    a.n_shape = 4;
    int64_t shape[4] = {2, 4, 8, 8};
    memcpy(a.shape, shape, sizeof shape);
    dfg_type dx = type4(DFG_F32, 2, 4, 8, 8), w = type4(DFG_F32, 4, 4, 3, 3);
    dfg_type dy = type4(DFG_F32, 2, 4, 4, 4);
    dfg_conv_geometry g;
    assert_int_equal(dfg_conv_grad_geometry(&a, &dx, &w, &dy, &g), DFG_OK);
    assert_int_equal(dfg_conv_grad_input_saved_bytes(&g, &dy, &dx), 0);
    dfg_type in[2] = {dy, w};
    int64_t workspace = dfg_op_get(DFG_OP_CONV2D_GRAD_INPUT)->workspace(
        &a, in, 2, &dx, 1);
    assert_int_equal(workspace, dfg_conv_grad_workspace_bytes(&g));
    /* A program file that plans dx over such a dy (4 channels of 4x4
     * against 1 of 8x8 would have the same bytes): an error, not a write
     * past the workspace. */
    dy = type4(DFG_F32, 2, 4, 4, 4);
    dx = type4(DFG_F32, 2, 1, 8, 8);
    w = type4(DFG_F32, 4, 1, 3, 3);
    in[0] = dy, in[1] = w;
    a.shape[1] = 1;
    workspace = dfg_op_get(DFG_OP_CONV2D_GRAD_INPUT)->workspace(&a, in, 2,
                                                                &dx, 1);
    float *both = calloc(128, sizeof *both), *weights = calloc(36, 4);
    void *scratch = calloc(1, (size_t)workspace);
    const void *operands[2] = {both, weights};
    void *out[1] = {both};
    dfg_kernel_args args = {.op = DFG_OP_CONV2D_GRAD_INPUT, .attrs = &a,
                            .n_inputs = 2, .in_types = in, .in = operands,
                            .n_outputs = 1, .out_types = &dx, .out = out,
                            .workspace = scratch,
                            .workspace_bytes = workspace};
    assert_int_equal(dfg_cpu_kernel_for(DFG_OP_CONV2D_GRAD_INPUT)(&args),
                     DFG_ERR_INVALID_ARGUMENT);
    free(both);
    free(weights);
    free(scratch);
}

/* The step of p running op, and whether its output is its input 0's
 * bytes. */
static int writes_over_input(const dfg_program *p, dfg_op op)
{
    int n = 0;
    for (int32_t s = 0; s < p->n_steps; s++) {
        const dfg_program_step *st = &p->steps[s];
        if (st->op != op)
            continue;
        const dfg_program_tensor *in = &p->tensors[st->inputs[0]];
        const dfg_program_tensor *out = &p->tensors[st->outputs[0]];
        n += in->region == out->region && in->offset == out->offset;
    }
    return n;
}

/* dx = conv2d_grad_input(relu(a), w) compiled with in-place reuse on or
 * off, run on a and w; returns how many steps wrote over their dy, and
 * the step's workspace bytes in *workspace. */
static int run_program(const same_case *c, int reuse, const float *a_data,
                       const float *w_data, float *dx, int64_t *workspace)
{
    dfg_graph *g;
    dfg_value in[2], dy, out;
    int64_t x_shape[4] = {c->n, c->c, c->h, c->w};
    int64_t w_shape[4] = {c->c, c->c / c->group, c->kh, c->kw};
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    assert_int_equal(dfg_graph_input(g, "a", DFG_F32, 4, x_shape, &in[0]),
                     DFG_OK);
    assert_int_equal(dfg_graph_input(g, "w", DFG_F32, 4, w_shape, &in[1]),
                     DFG_OK);
    assert_int_equal(dfg_relu(g, in[0], &dy), DFG_OK);
    dfg_attrs a = attrs_of(c);
    dfg_value operands[2] = {dy, in[1]};
    assert_int_equal(dfg_graph_node(g, "conv2d_grad_input", NULL, operands, 2,
                                    &a, &out, 1), DFG_OK);
    assert_int_equal(dfg_graph_output(g, out, "dx"), DFG_OK);
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    o.reuse_inputs_in_place = reuse;
    dfg_program *p;
    if (dfg_compile(g, &o, &p) != DFG_OK)
        fail_msg("compile: %s", dfg_last_error());
    assert_int_equal(dfg_program_verify(p), DFG_OK);
    int over = writes_over_input(p, DFG_OP_CONV2D_GRAD_INPUT);
    for (int32_t k = 0; k < p->n_steps; k++)
        if (p->steps[k].op == DFG_OP_CONV2D_GRAD_INPUT)
            *workspace = p->tensors[p->steps[k].workspace].bytes;
    const dfg_backend *cpu;
    dfg_session *s;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    assert_int_equal(dfg_session_create(p, cpu, NULL, &s), DFG_OK);
    const void *inputs[2] = {a_data, w_data};
    void *outputs[1] = {dx};
    assert_int_equal(dfg_session_run(s, inputs, outputs), DFG_OK);
    dfg_session_destroy(s);
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
    return over;
}

/* Planned over relu's output, which dies there: the verifier accepts it
 * and the result is the kernel's out of place with the same workspace
 * (which an inference program fits under its peak). Without in-place
 * reuse, dx has bytes of its own. */
static void test_plan_writes_over_dying_dy(void **state)
{
    (void)state;
    const same_case c = {3, 32, 32, 32, 3, 3, 1, 1, {1, 1, 1, 1}};
    int64_t numel = c.n * c.c * c.h * c.w, nw = c.c * c.c * 9, workspace;
    float *a = malloc((size_t)numel * sizeof *a), *w = malloc((size_t)nw * 4);
    float *over = malloc((size_t)numel * 4), *apart = malloc((size_t)numel * 4);
    for (int64_t i = 0; i < numel; i++)
        a[i] = random_signed();
    for (int64_t i = 0; i < nw; i++)
        w[i] = random_signed();
    assert_int_equal(run_program(&c, 0, a, w, apart, &workspace), 0);
    assert_int_equal(run_program(&c, 1, a, w, over, &workspace), 1);
    for (int64_t i = 0; i < numel; i++)
        a[i] = a[i] > 0.0f ? a[i] : 0.0f;
    run_kernel(&c, DFG_F32, a, w, workspace, 0, apart);
    assert_memory_equal(over, apart, (size_t)numel * 4);
    free(a);
    free(w);
    free(over);
    free(apart);
}

static dfg_program *compile_cnn(float budget_percent)
{
    dfg_training_options t;
    dfg_training_options_init(&t);
    t.optimizer = DFG_OPTIMIZER_ADAM;
    t.memory_budget_percent = budget_percent;
    return budget_percent > 0.0f
               ? compile_bundled_training("cnn", &t)
               : compile_bundled_training_reference("cnn", &t);
}

/* Under a budget the fused weight updates run before the input gradients
 * (passes/remat/fuse_weight_update.c), which then write over their dying dy;
 * four steps give the unconstrained step's losses on the same (dfg's)
 * kernels. */
static void test_training_step_keeps_the_losses(void **state)
{
    (void)state;
    dfg_program *free_plan = compile_cnn(0.0f), *budget = compile_cnn(95.0f);
    assert_int_equal(writes_over_input(free_plan, DFG_OP_CONV2D_GRAD_INPUT), 0);
    assert_true(writes_over_input(budget, DFG_OP_CONV2D_GRAD_INPUT) > 0);
    const dfg_backend *cpu;
    dfg_session *sa, *sb;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    assert_int_equal(dfg_session_create(free_plan, cpu, NULL, &sa), DFG_OK);
    assert_int_equal(dfg_session_create(budget, cpu, NULL, &sb), DFG_OK);
    static float x[32 * 64];
    static int64_t labels[32];
    float loss_a, loss_b, norms_a[64], norms_b[64];
    for (int run = 0; run < 4; run++) {
        for (int i = 0; i < 32 * 64; i++)
            x[i] = random_signed();
        for (int i = 0; i < 32; i++)
            labels[i] = (int64_t)((random_signed() + 1.0f) * 4.99f);
        const void *in[2] = {x, labels};
        void *out_a[2] = {&loss_a, norms_a}, *out_b[2] = {&loss_b, norms_b};
        assert_int_equal(dfg_session_run(sa, in, out_a), DFG_OK);
        assert_int_equal(dfg_session_run(sb, in, out_b), DFG_OK);
        assert_float_equal(loss_a, loss_b, 1e-6 * fabsf(loss_a));
    }
    dfg_session_destroy(sa);
    dfg_session_destroy(sb);
    dfg_program_destroy(free_plan);
    dfg_program_destroy(budget);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_images),
        cmocka_unit_test(test_chunks_cut_images),
        cmocka_unit_test(test_grouped_dilated_asymmetric),
        cmocka_unit_test(test_direct_1x1),
        cmocka_unit_test(test_other_shape_keeps_nothing),
        cmocka_unit_test(test_plan_writes_over_dying_dy),
        cmocka_unit_test(test_training_step_keeps_the_losses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
