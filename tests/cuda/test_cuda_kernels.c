/* The CUDA kernels' division of work, tested on the CPU through the
 * emulator (cuda_emulator.h) against the CPU backend: the forward conv's
 * im2col batches and strided-batched products (conv_forward.h), also
 * with a workspace the plan shrank (down to one output row), sums
 * spread over blocks through partial sums planned in the workspace
 * (math/partial_sums.h: reductions to few outputs, the optimizer
 * updates), the training batch norm's per-channel block folds
 * (batch_norm_train_ops.h), and the 32- and 64-bit instantiations of the
 * index arithmetic (math/index_split.h). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ir/geometry/conv_geometry.h"
#include "tests/cuda/cuda_op_check.h"
#include "math/partial_sums.h"
#include "math/training_layout.h"

/* conv2d of x and w (bias when with_bias) with attrs a on the emulator
 * against the CPU; its plan batches `images` images, `groups` groups and
 * `cols` pixels per im2col. */
static void check_conv_batching(const dfg_attrs *a, dfg_type x, dfg_type w,
                                int with_bias, int64_t images, int64_t groups,
                                int64_t cols)
{
    dfg_type in[3] = {x, w, type_of(x.dtype, 1, (int)w.shape[0])};
    op_run r;
    run_setup(&r, DFG_OP_CONV2D, a, with_bias ? 3 : 2, in, 1, -1, 1);
    dfg_cuda_step_plan plan;
    assert_int_equal(dfg_cuda_step_plan_make(&r.emu, 0, &plan), DFG_OK);
    assert_int_equal(plan.kind, DFG_CUDA_CONV2D);
    assert_int_equal(plan.u.conv.batching.images, images);
    assert_int_equal(plan.u.conv.batching.groups, groups);
    assert_int_equal(plan.u.conv.batching.cols, cols);
    run_compare(&r);
    run_free(&r);
}

/* The forward conv's batches (conv_forward.h): several whole images per
 * strided-batched product (group 1 and 2, f32 and f16, a last batch
 * partly filled), several groups of one image, chunks of one group's
 * pixels. */
static void test_conv_batches(void **state)
{
    (void)state;
    dfg_attrs a = defaults();
    a.pads[0] = a.pads[1] = a.pads[2] = a.pads[3] = 1;
    /* 8x8 outputs, k = 27: four slots of whole images (DFG_CONV_MAX_SLOTS),
     * twice as many in f16; 5 images: batches of 4 and 1. */
    check_conv_batching(&a, type_of(DFG_F32, 4, 5, 3, 8, 8),
                        type_of(DFG_F32, 4, 4, 3, 3, 3), 1, 4, 1, 64);
    check_conv_batching(&a, type_of(DFG_F16, 4, 9, 3, 8, 8),
                        type_of(DFG_F16, 4, 4, 3, 3, 3), 0, 8, 1, 64);
    /* Two groups: two images of both per batch, 3 images. */
    a.group = 2;
    check_conv_batching(&a, type_of(DFG_F32, 4, 3, 4, 8, 8),
                        type_of(DFG_F32, 4, 6, 2, 3, 3), 1, 2, 2, 64);
    /* Eight groups, four slots: half of one image's groups per batch. */
    a.group = 8;
    check_conv_batching(&a, type_of(DFG_F32, 4, 2, 16, 8, 8),
                        type_of(DFG_F32, 4, 8, 2, 3, 3), 1, 1, 4, 64);
    /* k * pixels beyond the budget: chunks of 455 of 1024 pixels. */
    a.group = 1;
    check_conv_batching(&a, type_of(DFG_F32, 4, 2, 64, 32, 32),
                        type_of(DFG_F32, 4, 8, 64, 3, 3), 1, 1, 1,
                        DFG_CONV_IM2COL_BUDGET_BYTES / 4 / 576);
}

/* conv2d with less than the full workspace, as the plan gives a conv at
 * the arena's peak (passes/workspace_fit.c): both sides get `bytes`; the
 * emulator's plan takes chunks of `cols` pixels, one byte less than the
 * least is refused. */
static void check_conv_workspace(const dfg_attrs *a, dfg_type x, dfg_type w,
                                 int64_t bytes, int64_t cols)
{
    dfg_type in[2] = {x, w};
    op_run r;
    run_setup(&r, DFG_OP_CONV2D, a, 2, in, 1, -1, 1);
    int64_t least = dfg_op_least_workspace(DFG_OP_CONV2D, a, in, 2,
                                           r.out_types, 1);
    assert_true(least <= bytes && bytes < r.ws_bytes);
    dfg_cuda_step_plan plan;
    r.emu.workspace_bytes = least - 1;
    assert_int_equal(dfg_cuda_step_plan_make(&r.emu, 0, &plan),
                     DFG_ERR_INVALID_ARGUMENT);
    r.cpu.workspace_bytes = r.emu.workspace_bytes = bytes;
    assert_int_equal(dfg_cuda_step_plan_make(&r.emu, 0, &plan), DFG_OK);
    assert_int_equal(plan.u.conv.batching.images, 1);
    assert_int_equal(plan.u.conv.batching.groups, 1);
    assert_int_equal(plan.u.conv.batching.cols, cols);
    run_compare(&r);
    run_free(&r);
}

/* The least workspace (one output row of 32 or 8 pixels; f16 fits two),
 * and one in between (an odd byte count). */
static void test_conv_small_workspace(void **state)
{
    (void)state;
    dfg_attrs a = defaults();
    a.pads[0] = a.pads[1] = a.pads[2] = a.pads[3] = 1;
    dfg_type w = type_of(DFG_F32, 4, 8, 64, 3, 3); /* k = 576 */
    check_conv_workspace(&a, type_of(DFG_F32, 4, 2, 64, 32, 32), w,
                         576 * 32 * 4, 32);
    check_conv_workspace(&a, type_of(DFG_F32, 4, 2, 64, 32, 32), w,
                         576 * 100 * 4 + 3, 100);
    check_conv_workspace(&a, type_of(DFG_F16, 4, 2, 64, 32, 32),
                         type_of(DFG_F16, 4, 8, 64, 3, 3), 576 * 32 * 4, 64);
    /* Small images (whole ones per slot in full): one row of 8. */
    check_conv_workspace(&a, type_of(DFG_F32, 4, 5, 3, 8, 8),
                         type_of(DFG_F32, 4, 4, 3, 3, 3), 27 * 8 * 4, 8);
}

/* A float sum or mean reduced to few outputs (a loss): split over
 * blocks, with split partial sums per output in the planned workspace. */
static void check_reduce_split(dfg_op op, const dfg_attrs *a, dfg_type in,
                               int32_t split)
{
    op_run r;
    run_setup(&r, op, a, 1, &in, 1, -2, 2);
    dfg_cuda_step_plan plan;
    assert_int_equal(dfg_cuda_step_plan_make(&r.emu, 0, &plan), DFG_OK);
    assert_int_equal(plan.u.reduce.split, split);
    assert_int_equal(r.ws_bytes, split > 1 ? plan.u.reduce.outputs * split *
                                                 (int64_t)sizeof(float)
                                           : 0);
    run_compare(&r);
    if (split > 1) { /* too little workspace: refused */
        r.emu.workspace_bytes--;
        assert_int_equal(dfg_cuda_step_plan_make(&r.emu, 0, &plan),
                         DFG_ERR_INVALID_ARGUMENT);
    }
    run_free(&r);
}

static void test_reduce_split(void **state)
{
    (void)state;
    dfg_attrs all = defaults();
    all.keepdims = 0;
    /* One scalar of 3 * 5000 terms: 15000 / 2048 + 1 blocks. */
    check_reduce_split(DFG_OP_REDUCE_MEAN, &all, type_of(DFG_F32, 2, 3, 5000), 8);
    check_reduce_split(DFG_OP_REDUCE_SUM, &all, type_of(DFG_BF16, 2, 3, 5000), 8);
    /* Three outputs over a middle axis of 4100: 3 blocks each. */
    dfg_attrs middle = defaults();
    middle.n_axes = 1, middle.axes[0] = 1;
    check_reduce_split(DFG_OP_REDUCE_SUM, &middle,
                       type_of(DFG_F32, 3, 3, 4100, 1), 3);
    /* Many outputs, or short sums: a block per output. */
    check_reduce_split(DFG_OP_REDUCE_SUM, &middle,
                       type_of(DFG_F32, 3, 400, 3000, 2), 1);
    check_reduce_split(DFG_OP_REDUCE_MEAN, &all, type_of(DFG_F32, 1, 2000), 1);
    /* Integers: a block per output (int64 sums). */
    check_reduce_split(DFG_OP_REDUCE_SUM, &all, type_of(DFG_I32, 1, 9000), 1);
}

/* A float reduction over outer dims with many outputs takes a thread per
 * output (reduction_ops.h: columns); over the innermost dim, or with few
 * outputs, or on integers, a block per output. Each against the CPU. */
static void check_columns(dfg_op op, dfg_type in, int32_t axis, int columns)
{
    dfg_attrs a = defaults();
    a.n_axes = 1, a.axes[0] = axis;
    op_run r;
    run_setup(&r, op, &a, 1, &in, 1, -2, 2);
    dfg_cuda_step_plan plan;
    assert_int_equal(dfg_cuda_step_plan_make(&r.emu, 0, &plan), DFG_OK);
    assert_int_equal(plan.u.reduce.columns, columns);
    run_compare(&r);
    run_free(&r);
}

static void test_reduce_columns(void **state)
{
    (void)state;
    check_columns(DFG_OP_REDUCE_SUM, type_of(DFG_F32, 2, 40, 2048), 0, 1);
    check_columns(DFG_OP_REDUCE_MEAN, type_of(DFG_F16, 3, 8, 30, 300), 1, 1);
    check_columns(DFG_OP_REDUCE_MAX, type_of(DFG_BF16, 2, 7, 4096), 0, 1);
    check_columns(DFG_OP_REDUCE_SUM, type_of(DFG_F32, 2, 2048, 40), 1, 0);
    check_columns(DFG_OP_REDUCE_SUM, type_of(DFG_F32, 2, 40, 100), 0, 0);
    check_columns(DFG_OP_REDUCE_SUM, type_of(DFG_I32, 2, 40, 4096), 0, 0);
}

/* The 32-bit flag of plan's index arithmetic (math/index_split.h). */
static int *index32_of(dfg_cuda_step_plan *plan)
{
    switch (plan->kind) {
    case DFG_CUDA_BINARY: return &plan->u.binary.index32;
    case DFG_CUDA_WHERE: return &plan->u.where.index32;
    case DFG_CUDA_BATCH_NORM: return &plan->u.batch_norm.index32;
    case DFG_CUDA_STRIDED: return &plan->u.strided.index32;
    case DFG_CUDA_CONV2D: return &plan->u.conv.batching.index32;
    case DFG_CUDA_POOL: return &plan->u.pool.index32;
    case DFG_CUDA_DEPTHWISE: return &plan->u.depthwise.index32;
    default: fail_msg("kind %d has no index flag", (int)plan->kind);
    }
    return NULL;
}

/* op on inputs in: the plan picks 32-bit index arithmetic (the sizes are
 * small), and the 64-bit instantiation writes the same bits; the CPU
 * comparison checks the result. */
static void check_index_widths(dfg_op op, const dfg_attrs *a, int32_t n_in,
                               const dfg_type *in)
{
    op_run r;
    run_setup(&r, op, a, n_in, in, 1, -2, 2);
    run_compare(&r);
    dfg_cuda_step_plan plan;
    assert_int_equal(dfg_cuda_step_plan_make(&r.emu, 0, &plan), DFG_OK);
    assert_int_equal(*index32_of(&plan), 1);
    size_t bytes = (size_t)dfg_type_bytes(&r.out_types[0]);
    void *narrow = malloc(bytes);
    memcpy(narrow, r.out_emu[0], bytes);
    memset(r.out_emu[0], 0xA5, bytes);
    *index32_of(&plan) = 0;
    unsigned status = 0;
    assert_int_equal(cuda_emulate_step(&plan, &status), DFG_OK);
    assert_memory_equal(narrow, r.out_emu[0], bytes);
    free(narrow);
    run_free(&r);
}

static void test_index_widths(void **state)
{
    (void)state;
    dfg_attrs a = defaults();
    dfg_type broadcast[2] = {type_of(DFG_F32, 3, 4, 1, 6),
                             type_of(DFG_F32, 2, 5, 1)};
    check_index_widths(DFG_OP_ADD, &a, 2, broadcast);
    dfg_type where[3] = {type_of(DFG_BOOL, 2, 5, 1), type_of(DFG_F32, 1, 6),
                         type_of(DFG_F32, 3, 2, 1, 6)};
    check_index_widths(DFG_OP_WHERE, &a, 3, where);
    dfg_type norm[5] = {type_of(DFG_F32, 4, 2, 3, 4, 5), type_of(DFG_F32, 1, 3),
                        type_of(DFG_F32, 1, 3), type_of(DFG_F32, 1, 3),
                        type_of(DFG_F32, 1, 3)};
    check_index_widths(DFG_OP_BATCH_NORM, &a, 5, norm);
    dfg_attrs t = defaults();
    t.n_shape = 3, t.shape[0] = 2, t.shape[1] = 0, t.shape[2] = 1;
    dfg_type transpose[1] = {type_of(DFG_F32, 3, 3, 4, 5)};
    check_index_widths(DFG_OP_TRANSPOSE, &t, 1, transpose);
    dfg_attrs c = defaults();
    c.group = 2, c.strides[0] = 2;
    c.pads[0] = c.pads[1] = c.pads[2] = c.pads[3] = 1;
    dfg_type conv[2] = {type_of(DFG_F32, 4, 3, 4, 7, 6),
                        type_of(DFG_F32, 4, 6, 2, 3, 3)};
    check_index_widths(DFG_OP_CONV2D, &c, 2, conv);
    c.group = 4; /* depthwise, two filters per channel */
    dfg_type depthwise[3] = {type_of(DFG_F32, 4, 2, 4, 7, 6),
                             type_of(DFG_F32, 4, 8, 1, 3, 3),
                             type_of(DFG_F32, 1, 8)};
    check_index_widths(DFG_OP_CONV2D, &c, 3, depthwise);
    dfg_attrs pool = defaults();
    pool.kernel[0] = 3, pool.kernel[1] = 2, pool.strides[0] = 2;
    pool.pads[0] = pool.pads[1] = 1;
    dfg_type x[1] = {type_of(DFG_F32, 4, 2, 3, 9, 8)};
    check_index_widths(DFG_OP_MAX_POOL, &pool, 1, x);
    check_index_widths(DFG_OP_AVERAGE_POOL, &pool, 1, x);
}

/* One optimizer op on two copies of its operands (it writes them in
 * place), the CPU kernel on one, the emulated plan on the other. */
/* The optimizer state of one side: tick, weights, moments, accumulator
 * and the update's squared norm. */
typedef struct update_side {
    int64_t counter[DFG_COUNTER_SIZE];
    float control[DFG_CONTROL_SIZE];
    float *w, *state, *acc, *partials, norm;
} update_side;

/* n weights updated `runs` times by the CPU backend and the emulator: the
 * weights, moments and accumulators agree bit for bit (the same per-element
 * code), the norms (a double sum beside the device's partial sums) within
 * the f32 tolerance. */
static void check_update(dfg_op op, int with_accumulator, int64_t n,
                         int32_t runs)
{
    int64_t state_n = op == DFG_OP_SGD_UPDATE ? n : 2 * n;
    dfg_type t_counter = type_of(DFG_I64, 1, DFG_COUNTER_SIZE);
    dfg_type t_hyper = type_of(DFG_F32, 1, DFG_HYPER_SIZE);
    dfg_type t_w = type_of(DFG_F32, 1, (int)n);
    dfg_type t_state = op == DFG_OP_SGD_UPDATE ? t_w : type_of(DFG_F32, 2, 2, (int)n);
    dfg_type t_control = type_of(DFG_F32, 1, DFG_CONTROL_SIZE);
    dfg_type t_norm = type_of(DFG_F32, 1, 1);
    float hyper[DFG_HYPER_SIZE] = {0.05f, 0.9f, 0.99f, 1e-6f, 0.01f,
                                   with_accumulator ? 2.0f : 1.0f};
    dfg_attrs a = defaults();
    const dfg_type up_in[5] = {t_w, t_w, t_control, t_state, t_w};
    int64_t ws_bytes = dfg_op_get(op)->workspace(&a, up_in, 4, &t_norm, 1);
    assert_int_equal(ws_bytes,
                     dfg_partial_sum_blocks(n) * (int64_t)sizeof(float));
    update_side sides[2];
    memset(sides, 0, sizeof sides);
    float *grad = calloc((size_t)n, sizeof *grad);
    for (int s = 0; s < 2; s++) {
        sides[s].w = calloc((size_t)n, sizeof(float));
        sides[s].state = calloc((size_t)state_n, sizeof(float));
        sides[s].acc = calloc((size_t)n, sizeof(float));
        sides[s].partials = calloc((size_t)ws_bytes, 1);
    }
    for (int64_t i = 0; i < n; i++)
        sides[0].w[i] = sides[1].w[i] = uniform(-1, 1);
    for (int64_t i = 0; i < state_n; i++)
        sides[0].state[i] = sides[1].state[i] = uniform(0, 0.5f);
    for (int32_t run = 0; run < runs; run++) {
        for (int64_t i = 0; i < n; i++)
            grad[i] = uniform(-1, 1);
        for (int s = 0; s < 2; s++) {
            update_side *d = &sides[s];
            const dfg_type tick_in[2] = {t_counter, t_hyper};
            const void *tick_ptr[2] = {d->counter, hyper};
            void *tick_out[1] = {d->control};
            dfg_kernel_args tick = {.op = DFG_OP_OPTIMIZER_TICK, .attrs = &a,
                                    .n_inputs = 2, .in_types = tick_in,
                                    .in = tick_ptr, .n_outputs = 1,
                                    .out_types = &t_control, .out = tick_out};
            const void *up_ptr[5] = {d->w, grad, d->control, d->state, d->acc};
            void *up_out[1] = {&d->norm};
            dfg_kernel_args update = {.op = op, .attrs = &a,
                                      .n_inputs = with_accumulator ? 5 : 4,
                                      .in_types = up_in, .in = up_ptr,
                                      .n_outputs = 1, .out_types = &t_norm,
                                      .out = up_out, .workspace = d->partials,
                                      .workspace_bytes = ws_bytes};
            if (s == 0) {
                assert_int_equal(dfg_cpu_kernel_for(DFG_OP_OPTIMIZER_TICK)(&tick), DFG_OK);
                assert_int_equal(dfg_cpu_kernel_for(op)(&update), DFG_OK);
                continue;
            }
            dfg_cuda_step_plan plan;
            unsigned status = 0;
            assert_int_equal(dfg_cuda_step_plan_make(&tick, 0, &plan), DFG_OK);
            assert_int_equal(cuda_emulate_step(&plan, &status), DFG_OK);
            assert_int_equal(dfg_cuda_step_plan_make(&update, 1, &plan), DFG_OK);
            assert_int_equal(plan.u.optimizer.blocks, dfg_partial_sum_blocks(n));
            assert_int_equal(cuda_emulate_step(&plan, &status), DFG_OK);
            void *at[DFG_CUDA_MAX_INPLACE_WRITES];
            size_t bytes[DFG_CUDA_MAX_INPLACE_WRITES];
            assert_int_equal(dfg_cuda_inplace_writes(&update, at, bytes),
                             with_accumulator ? 3 : 2);
            assert_ptr_equal(at[1], d->state);
            assert_int_equal(bytes[1], (size_t)state_n * sizeof(float));
            assert_int_equal(dfg_cuda_inplace_writes(&tick, at, bytes), 1);
            /* Too little workspace for the partial sums: refused. */
            update.workspace_bytes = ws_bytes - 1;
            assert_int_equal(dfg_cuda_step_plan_make(&update, 1, &plan),
                             DFG_ERR_INVALID_ARGUMENT);
        }
        /* The same code on the same data: identical bits. */
        assert_memory_equal(sides[0].counter, sides[1].counter,
                            sizeof sides[0].counter);
        assert_memory_equal(sides[0].control, sides[1].control,
                            sizeof sides[0].control);
        assert_memory_equal(sides[0].w, sides[1].w, (size_t)n * sizeof(float));
        assert_memory_equal(sides[0].state, sides[1].state,
                            (size_t)state_n * sizeof(float));
        assert_memory_equal(sides[0].acc, sides[1].acc,
                            (size_t)n * sizeof(float));
        assert_true(fabsf(sides[1].norm - sides[0].norm) <=
                    1e-5f * sides[0].norm);
        assert_true(with_accumulator && run % 2 == 0 ? sides[1].norm == 0.0f
                                                     : sides[1].norm > 0.0f);
    }
    for (int s = 0; s < 2; s++) {
        free(sides[s].w);
        free(sides[s].state);
        free(sides[s].acc);
        free(sides[s].partials);
    }
    free(grad);
}

static void test_optimizers(void **state)
{
    (void)state;
    static const dfg_op ops[] = {DFG_OP_SGD_UPDATE, DFG_OP_ADAM_UPDATE,
                                 DFG_OP_ADAMW_UPDATE};
    for (int i = 0; i < 3; i++)
        for (int acc = 0; acc < 2; acc++) {
            check_update(ops[i], acc, 37, 4);
            /* several blocks, the last one partly filled */
            check_update(ops[i], acc, 3 * DFG_PARTIAL_SUM_TERMS + 77, 2);
        }
}

/* Fills input i of r with values in [lo, hi) (a variance: positive). */
static void refill(op_run *r, int32_t i, float lo, float hi)
{
    for (int64_t e = 0; e < dfg_type_numel(&r->in_types[i]); e++)
        ((float *)r->in[i])[e] = uniform(lo, hi);
}

/* The plan's other index width writes the same bits (math/index_split.h). */
static void check_wide_index(op_run *r, dfg_cuda_step_plan *plan)
{
    assert_int_equal(plan->u.batch_norm_train.index32, 1);
    size_t bytes = (size_t)dfg_type_bytes(&r->out_types[0]);
    void *narrow = malloc(bytes);
    memcpy(narrow, r->out_emu[0], bytes);
    plan->u.batch_norm_train.index32 = 0;
    unsigned status = 0;
    assert_int_equal(cuda_emulate_step(plan, &status), DFG_OK);
    assert_memory_equal(narrow, r->out_emu[0], bytes);
    free(narrow);
}

/* batch_norm_train on x (momentum 0.9) against the CPU backend: y, the
 * batch statistics, and the running statistics it updates in place (a
 * copy of them on each side; with the biased variance when beta is 0, as
 * ONNX's BatchNormalization, else the unbiased one); then its gradient on
 * random dy. */
static void check_batch_norm_train(dfg_type x, float beta)
{
    dfg_attrs a = defaults();
    a.alpha = 0.9f;
    a.beta = beta;
    a.epsilon = 1e-5f;
    dfg_type c = type_of(DFG_F32, 1, (int)x.shape[1]);
    const dfg_type forward[5] = {x, c, c, c, c};
    op_run r;
    run_setup(&r, DFG_OP_BATCH_NORM_TRAIN, &a, 5, forward, 3, -2, 3);
    refill(&r, 4, 0.5f, 2.0f);
    size_t c_bytes = (size_t)dfg_type_bytes(&c);
    float *running[2] = {malloc(c_bytes), malloc(c_bytes)};
    memcpy(running[0], r.in[3], c_bytes);
    memcpy(running[1], r.in[4], c_bytes);
    const void *emu_in[5] = {r.in[0], r.in[1], r.in[2], running[0], running[1]};
    r.emu.in = emu_in;
    run_compare(&r);
    for (int i = 0; i < 2; i++) {
        double err = relative_error(&c, r.in[3 + i], running[i]);
        if (!(err < tolerance(DFG_F32)))
            fail_msg("running %s: relative error %g", i ? "var" : "mean", err);
    }
    dfg_cuda_step_plan plan;
    assert_int_equal(dfg_cuda_step_plan_make(&r.emu, 0, &plan), DFG_OK);
    assert_int_equal(plan.kind, DFG_CUDA_BATCH_NORM_TRAIN);
    int32_t split = dfg_partial_sum_channel_split(
        x.shape[1], dfg_type_numel(&x) / x.shape[1]);
    assert_int_equal(plan.u.batch_norm_train.split, split);
    check_wide_index(&r, &plan);
    void *at[DFG_CUDA_MAX_INPLACE_WRITES];
    size_t bytes[DFG_CUDA_MAX_INPLACE_WRITES];
    assert_int_equal(dfg_cuda_inplace_writes(&r.emu, at, bytes), 2);
    assert_ptr_equal(at[0], running[0]);
    assert_ptr_equal(at[1], running[1]);
    assert_int_equal(bytes[1], c_bytes);
    free(running[0]);
    free(running[1]);
    /* The gradient with the statistics the CPU computed. */
    const dfg_type backward[5] = {x, x, c, c, c};
    op_run g;
    run_setup(&g, DFG_OP_BATCH_NORM_TRAIN_GRAD, &a, 5, backward, 3, -2, 3);
    memcpy(g.in[0], r.in[0], (size_t)dfg_type_bytes(&x));
    memcpy(g.in[3], r.out_cpu[1], c_bytes);
    memcpy(g.in[4], r.out_cpu[2], c_bytes);
    run_compare(&g);
    assert_int_equal(dfg_cuda_step_plan_make(&g.emu, 0, &plan), DFG_OK);
    assert_int_equal(plan.kind, DFG_CUDA_BATCH_NORM_TRAIN_GRAD);
    assert_int_equal(plan.u.batch_norm_train.split, split);
    check_wide_index(&g, &plan);
    /* Without the partial sums' workspace (a program file written before
     * them): a block per channel, the same results within f32's error. */
    g.emu.workspace = NULL;
    g.emu.workspace_bytes = 0;
    run_compare(&g);
    assert_int_equal(dfg_cuda_step_plan_make(&g.emu, 0, &plan), DFG_OK);
    assert_int_equal(plan.u.batch_norm_train.split, 1);
    run_free(&g);
    run_free(&r);
}

static void test_batch_norm_train(void **state)
{
    (void)state;
    /* Channels of 162, 140 and 37 elements (fewer than a block's threads),
     * of 1200 (several per thread), x of rank 2 (plane 1) and 5. */
    check_batch_norm_train(type_of(DFG_F32, 4, 2, 16, 9, 9), 1.0f);
    check_batch_norm_train(type_of(DFG_F32, 4, 4, 3, 5, 7), 1.0f);
    check_batch_norm_train(type_of(DFG_F32, 2, 37, 5), 1.0f);
    check_batch_norm_train(type_of(DFG_F32, 4, 3, 2, 20, 20), 1.0f);
    check_batch_norm_train(type_of(DFG_F32, 5, 2, 3, 4, 3, 5), 1.0f);
    check_batch_norm_train(type_of(DFG_F32, 4, 2, 3, 2, 2), 0.0f);
    /* Channels of 4096 and 12800 elements: 3 and 7 blocks each, their
     * partial sums in the step's workspace (math/partial_sums.h). */
    check_batch_norm_train(type_of(DFG_F32, 4, 4, 3, 32, 32), 1.0f);
    check_batch_norm_train(type_of(DFG_F32, 4, 8, 2, 40, 40), 0.0f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_batches),
        cmocka_unit_test(test_conv_small_workspace),
        cmocka_unit_test(test_reduce_split),
        cmocka_unit_test(test_reduce_columns),
        cmocka_unit_test(test_index_widths),
        cmocka_unit_test(test_optimizers),
        cmocka_unit_test(test_batch_norm_train),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
