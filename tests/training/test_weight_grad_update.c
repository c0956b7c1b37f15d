/* A conv's weight gradient fused with its optimizer update
 * (runtime/cpu/training/weight_grad_update.c) against the pair it replaces:
 * conv2d_grad_weight with its full workspace (as a training step plans
 * it), then sgd/adam/adamw_update. On seeded random data, for every
 * optimizer, in f32 and with bf16 activations and gradient (mixed
 * precision), over two runs: the weights, the optimizer state and
 * the update's norm are the same bits. The geometries cut the gradient
 * into several slices (a remainder slice among them) through every path
 * of the kernels: im2col with padding and stride, the batch's columns in
 * one chunk, in several chunks made once, in several chunks made again
 * per slice, and the direct 1x1 product; one fits in a single slice. */
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
#include "runtime/cpu/training/optimizer_step.h"
#include "math/training.h"
#include "math/training_layout.h"
#include "ir/geometry/weight_update_geometry.h"
#include "tests/support/random_data.h"

static float uniform(float lo, float hi)
{
    return lo + (float)random_unit() * (hi - lo);
}

/* data as dtype: f32 as it is, bf16 by truncation (any bf16 will do). */
static void fill(void *data, dfg_dtype dtype, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        float f = uniform(-1.0f, 1.0f);
        if (dtype == DFG_F32) {
            ((float *)data)[i] = f;
        } else {
            uint32_t u;
            memcpy(&u, &f, sizeof u);
            ((uint16_t *)data)[i] = (uint16_t)(u >> 16);
        }
    }
}

typedef struct conv_case {
    int64_t n, c, h, w, m, k, stride, pad;
    int whole_columns; /* the batch's im2col made once */
} conv_case;

static dfg_type type4(dfg_dtype dtype, int64_t a, int64_t b, int64_t c,
                      int64_t d)
{
    return (dfg_type){dtype, 4, {a, b, c, d}, DFG_LAYOUT_PLAIN};
}

/* One side's weight, state and norm. */
typedef struct side {
    float *w, *state, norm;
    float control[DFG_CONTROL_SIZE];
    int64_t counter[DFG_COUNTER_SIZE];
} side;

static void tick(side *s, const float *hyper)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    const dfg_type in_types[2] = {
        {DFG_I64, 1, {DFG_COUNTER_SIZE}, DFG_LAYOUT_PLAIN},
        {DFG_F32, 1, {DFG_HYPER_SIZE}, DFG_LAYOUT_PLAIN}};
    const dfg_type out_type = {DFG_F32, 1, {DFG_CONTROL_SIZE},
                               DFG_LAYOUT_PLAIN};
    const void *in[2] = {s->counter, hyper};
    void *out[1] = {s->control};
    dfg_kernel_args args = {.op = DFG_OP_OPTIMIZER_TICK, .attrs = &a,
                            .n_inputs = 2, .in_types = in_types, .in = in,
                            .n_outputs = 1, .out_types = &out_type,
                            .out = out};
    assert_int_equal(dfg_cpu_kernel_for(DFG_OP_OPTIMIZER_TICK)(&args), DFG_OK);
}

static void run(dfg_op op, const dfg_attrs *a, const dfg_type *in_types,
                const void *const *in, int32_t n_in, const dfg_type *out_type,
                void *out, int64_t workspace_bytes)
{
    void *workspace = malloc((size_t)workspace_bytes + 1);
    void *outs[1] = {out};
    dfg_kernel_args args = {.op = op, .attrs = a, .n_inputs = n_in,
                            .in_types = in_types, .in = in, .n_outputs = 1,
                            .out_types = out_type, .out = outs,
                            .workspace = workspace,
                            .workspace_bytes = workspace_bytes};
    dfg_status st = dfg_cpu_kernel_for(op)(&args);
    if (st != DFG_OK)
        fail_msg("%s: %s", dfg_op_get(op)->name, dfg_last_error());
    free(workspace);
}

static void check_case(const conv_case *c, dfg_op update, dfg_op fused,
                       dfg_dtype dtype, int expect_slices)
{
    int64_t out_hw = (c->h + 2 * c->pad - c->k) / c->stride + 1;
    dfg_attrs a;
    dfg_attrs_init(&a);
    for (int i = 0; i < 2; i++)
        a.strides[i] = (int32_t)c->stride;
    for (int i = 0; i < 4; i++)
        a.pads[i] = c->pad;
    a.n_shape = 4;
    int64_t wshape[4] = {c->m, c->c, c->k, c->k};
    memcpy(a.shape, wshape, sizeof wshape);
    dfg_type t_dy = type4(dtype, c->n, c->m, out_hw, out_hw);
    dfg_type t_x = type4(dtype, c->n, c->c, c->h, c->w);
    dfg_type t_w = type4(DFG_F32, c->m, c->c, c->k, c->k);
    dfg_type t_grad = type4(dtype, c->m, c->c, c->k, c->k);
    int adam = update != DFG_OP_SGD_UPDATE;
    dfg_type t_state = adam ? (dfg_type){DFG_F32, 5,
                                         {2, c->m, c->c, c->k, c->k},
                                         DFG_LAYOUT_PLAIN}
                            : t_w;
    dfg_type t_control = {DFG_F32, 1, {DFG_CONTROL_SIZE}, DFG_LAYOUT_PLAIN};
    dfg_type t_norm = {DFG_F32, 1, {1}, DFG_LAYOUT_PLAIN};
    dfg_conv_geometry g;
    assert_int_equal(dfg_conv_grad_geometry(&a, &t_x, &t_w, &t_dy, &g), DFG_OK);
    int64_t size = (int64_t)dfg_dtype_size(dtype);
    int64_t rows = dfg_weight_slice_rows(&g, size);
    assert_int_equal((c->m + rows - 1) / rows, expect_slices);
    assert_int_equal(dfg_weight_update_whole_columns(&g, size), c->whole_columns);
    int64_t nw = dfg_type_numel(&t_w), n_state = dfg_type_numel(&t_state);
    void *dy = malloc((size_t)dfg_type_bytes(&t_dy));
    void *x = malloc((size_t)dfg_type_bytes(&t_x));
    void *grad = malloc((size_t)dfg_type_bytes(&t_grad));
    side sides[2];
    memset(sides, 0, sizeof sides);
    for (int s = 0; s < 2; s++) {
        sides[s].w = malloc((size_t)nw * sizeof(float));
        sides[s].state = malloc((size_t)n_state * sizeof(float));
    }
    fill(sides[0].w, DFG_F32, nw);
    for (int64_t i = 0; i < n_state; i++)
        sides[0].state[i] = uniform(0.0f, 0.01f);
    memcpy(sides[1].w, sides[0].w, (size_t)nw * sizeof(float));
    memcpy(sides[1].state, sides[0].state, (size_t)n_state * sizeof(float));
    float hyper[DFG_HYPER_SIZE] = {0.01f, 0.9f, 0.999f, 1e-8f, 0.01f, 1.0f};
    for (int r = 0; r < 2; r++) {
        fill(dy, dtype, dfg_type_numel(&t_dy));
        fill(x, dtype, dfg_type_numel(&t_x));
        /* The pair: the whole gradient, then its update. */
        tick(&sides[0], hyper);
        const dfg_type grad_in[2] = {t_dy, t_x};
        const void *grad_ptr[2] = {dy, x};
        run(DFG_OP_CONV2D_GRAD_WEIGHT, &a, grad_in, grad_ptr, 2, &t_grad, grad,
            dfg_conv_grad_workspace_bytes(&g));
        const dfg_type up_in[4] = {t_w, t_grad, t_control, t_state};
        const void *up_ptr[4] = {sides[0].w, grad, sides[0].control,
                                 sides[0].state};
        run(update, &a, up_in, up_ptr, 4, &t_norm, &sides[0].norm, 4096);
        /* The fused op, in slices. */
        tick(&sides[1], hyper);
        const dfg_type fused_in[5] = {t_dy, t_x, t_w, t_control, t_state};
        const void *fused_ptr[5] = {dy, x, sides[1].w, sides[1].control,
                                    sides[1].state};
        dfg_type norm_type;
        assert_int_equal(dfg_op_get(fused)->shape(&a, fused_in, 5, &norm_type,
                                                  1), DFG_OK);
        run(fused, &a, fused_in, fused_ptr, 5, &t_norm, &sides[1].norm,
            dfg_op_get(fused)->workspace(&a, fused_in, 5, &t_norm, 1));
        assert_memory_equal(sides[0].w, sides[1].w, (size_t)nw * sizeof(float));
        assert_memory_equal(sides[0].state, sides[1].state,
                            (size_t)n_state * sizeof(float));
        assert_memory_equal(&sides[0].norm, &sides[1].norm, sizeof(float));
        assert_true(sides[0].norm > 0.0f);
    }
    for (int s = 0; s < 2; s++) {
        free(sides[s].w);
        free(sides[s].state);
    }
    free(dy);
    free(x);
    free(grad);
}

static const dfg_op updates[3][2] = {
    {DFG_OP_SGD_UPDATE, DFG_OP_CONV2D_WEIGHT_SGD_UPDATE},
    {DFG_OP_ADAM_UPDATE, DFG_OP_CONV2D_WEIGHT_ADAM_UPDATE},
    {DFG_OP_ADAMW_UPDATE, DFG_OP_CONV2D_WEIGHT_ADAMW_UPDATE},
};

static void check_every_optimizer(const conv_case *c, int f32_slices,
                                  int bf16_slices)
{
    for (int u = 0; u < 3; u++) {
        check_case(c, updates[u][0], updates[u][1], DFG_F32, f32_slices);
        check_case(c, updates[u][0], updates[u][1], DFG_BF16, bf16_slices);
    }
}

/* 3x3, padding 1: k = 2304, 56 rows of f32 a slice (112 of bf16); the
 * batch's columns are one chunk, made once for every slice. */
static void test_padded_3x3_in_slices(void **state)
{
    (void)state;
    check_every_optimizer(&(conv_case){2, 256, 6, 6, 128, 3, 1, 1, 0}, 3, 2);
}

/* Stride 2: k = 1800, 72 rows a slice, the last one 64. */
static void test_strided_in_slices(void **state)
{
    (void)state;
    check_every_optimizer(&(conv_case){3, 200, 9, 9, 136, 3, 2, 1, 0}, 2, 1);
}

/* 1x1, stride 1: the direct product, k = 1024, 128 rows a slice. */
static void test_direct_1x1_in_slices(void **state)
{
    (void)state;
    check_every_optimizer(&(conv_case){2, 1024, 4, 4, 200, 1, 1, 0, 0}, 2, 1);
}

/* 32x32 and 16x16 images: the batch's im2col columns exceed the
 * workspace's bound, so each slice walks the column chunks, making their
 * im2col again; k = 576, 224 rows a slice; k = 4608, 64 rows of f32 a
 * slice (the 1.25 MiB they hold, fewer than 128) and 128 of bf16. */
static void test_chunked_columns_in_slices(void **state)
{
    (void)state;
    check_every_optimizer(&(conv_case){2, 64, 32, 32, 256, 3, 1, 1, 0}, 2, 1);
    check_every_optimizer(&(conv_case){1, 512, 16, 16, 256, 3, 1, 1, 0}, 4, 2);
}

/* resnet18's layer4 at 32x32: one output pixel an image, chunks of a
 * few columns, all of the batch's in the workspace. */
static void test_one_pixel_images_in_slices(void **state)
{
    (void)state;
    check_every_optimizer(&(conv_case){32, 256, 1, 1, 512, 3, 1, 1, 1}, 10, 5);
}

/* A small gradient: one slice, the whole of it. */
static void test_one_slice(void **state)
{
    (void)state;
    check_every_optimizer(&(conv_case){4, 8, 8, 8, 16, 3, 1, 1, 0}, 1, 1);
}

/* The Adam update over a range of elements (four at a time where SSE2
 * is) gives, bit for bit, dfg_adam_step element by element, with the
 * squares summed in element order: Adam and AdamW, ranges not of fours,
 * an f32 gradient starting at its range's first element. */
static void test_adam_range_is_elementwise(void **state)
{
    (void)state;
    enum { N = 103 };
    for (int decoupled = 0; decoupled < 2; decoupled++) {
        float control[DFG_CONTROL_SIZE] = {0};
        control[DFG_CONTROL_APPLY] = 1.0f;
        control[DFG_CONTROL_LR] = 0.003f;
        control[DFG_CONTROL_MOMENTUM] = 0.9f;
        control[DFG_CONTROL_BETA2] = 0.999f;
        control[DFG_CONTROL_EPSILON] = 1e-8f;
        control[DFG_CONTROL_WEIGHT_DECAY] = 0.01f;
        control[DFG_CONTROL_BIAS1] = 0.271f;
        control[DFG_CONTROL_BIAS2] = 0.00299f;
        float w[2][N], state_[2][2 * N], grad[N];
        for (int i = 0; i < N; i++) {
            w[0][i] = w[1][i] = uniform(-1.0f, 1.0f);
            state_[0][i] = state_[1][i] = 0.1f * uniform(-1.0f, 1.0f);
            state_[0][N + i] = state_[1][N + i] =
                0.01f * fabsf(uniform(-1.0f, 1.0f));
            grad[i] = uniform(-1.0f, 1.0f);
        }
        int64_t begin = 3, end = N - 2;
        dfg_cpu_gradient g = {.grad = grad + begin, .grad_dtype = DFG_F32,
                              .first = begin};
        double squares = 0.0, expected = 0.0;
        dfg_cpu_optimizer_apply(decoupled ? DFG_OP_ADAMW_UPDATE
                                          : DFG_OP_ADAM_UPDATE,
                                control, &g, begin, end, w[0], state_[0], N,
                                &squares);
        for (int64_t i = begin; i < end; i++) {
            double step = dfg_adam_step(control, decoupled, grad[i], &w[1][i],
                                        &state_[1][i], &state_[1][N + i]);
            expected += step * step;
        }
        assert_memory_equal(w[0], w[1], sizeof w[0]);
        assert_memory_equal(state_[0], state_[1], sizeof state_[0]);
        assert_memory_equal(&squares, &expected, sizeof squares);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_padded_3x3_in_slices),
        cmocka_unit_test(test_strided_in_slices),
        cmocka_unit_test(test_direct_1x1_in_slices),
        cmocka_unit_test(test_chunked_columns_in_slices),
        cmocka_unit_test(test_one_pixel_images_in_slices),
        cmocka_unit_test(test_one_slice),
        cmocka_unit_test(test_adam_range_is_elementwise),
    };
    random_seed(0x2545F4914F6CDD1DULL);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
