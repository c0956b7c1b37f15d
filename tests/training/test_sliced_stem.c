/* The channel-sliced stem (passes/remat/remat_sliced_stem.c): a training step
 * whose conv -> batch_norm -> relu -> max_pool stem is computed per slice
 * of output channels computes what the unsliced step computes (losses,
 * weights and running statistics after several Adam steps), and a memory
 * budget that the unsliced step cannot meet is met by slicing the stem,
 * with the plan verified and the recomputation's FLOPs reported. The
 * sliced chain's gradients match the unsliced chain's (both in training
 * mode) and central finite differences. A residual block's first conv,
 * batch norm and relu sliced too computes the same step, and is kept
 * where it meets a budget with fewer FLOPs (passes/pipeline.c); so is the
 * sliced stem where the unsliced step meets a budget at more FLOPs. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "passes/training/autodiff.h"
#include "dfg/dfg.h"
#include "ir/graph.h"
#include "program/program.h"
#include "program/program_flops.h"
#include "passes/remat/remat.h"
#include "tests/support/training_options.h"

#define BATCH 8
#define SIDE 32
#define CHANNELS 16
#define POOLED (SIDE / 2)
#define CLASSES 10
#define STEPS 4

static uint64_t rng = 42;

static float uniform(float scale)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return ((float)(rng >> 40) / (float)(1 << 24) - 0.5f) * 2.0f * scale;
}

static dfg_value weight(dfg_graph *g, const char *name, int32_t rank,
                        const int64_t *shape, float offset, float scale)
{
    static float data[CHANNELS * POOLED * POOLED * CLASSES];
    int64_t n = 1;
    for (int32_t d = 0; d < rank; d++)
        n *= shape[d];
    for (int64_t i = 0; i < n; i++)
        data[i] = offset + uniform(scale);
    dfg_value v;
    assert_int_equal(dfg_graph_weight(g, name, DFG_F32, rank, shape, data, &v),
                     DFG_OK);
    return v;
}

/* conv 3x3 (CHANNELS) of x -> batch_norm, weights named after prefix. */
static dfg_value conv_bn(dfg_graph *g, const char *prefix, dfg_value x,
                         int64_t in_channels)
{
    char name[64];
    const int64_t c[1] = {CHANNELS};
    snprintf(name, sizeof name, "%s.w", prefix);
    dfg_value w = weight(g, name, 4, (int64_t[]){CHANNELS, in_channels, 3, 3},
                         0.0f, 0.3f);
    dfg_conv2d_params cp = {.pads = {1, 1, 1, 1}};
    dfg_value h;
    assert_int_equal(dfg_conv2d(g, x, w, DFG_NO_VALUE, &cp, &h), DFG_OK);
    static const char *const what[4] = {"scale", "bias", "mean", "var"};
    static const float offset[4] = {1.0f, 0.0f, 0.0f, 1.0f};
    dfg_value bn[4];
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "%s.%s", prefix, what[i]);
        bn[i] = weight(g, name, 1, c, offset[i], i < 2 ? 0.2f : 0.1f);
    }
    assert_int_equal(dfg_batch_norm(g, h, bn[0], bn[1], bn[2], bn[3], 1e-5f,
                                    &h), DFG_OK);
    return h;
}

/* A residual block: relu(bn2(conv2(relu(bn1(conv1(x))))) + x). */
static dfg_value residual_block(dfg_graph *g, int k, dfg_value x)
{
    char name[32];
    dfg_value h;
    snprintf(name, sizeof name, "block%d.conv1", k);
    assert_int_equal(dfg_relu(g, conv_bn(g, name, x, CHANNELS), &h), DFG_OK);
    snprintf(name, sizeof name, "block%d.conv2", k);
    assert_int_equal(dfg_add(g, conv_bn(g, name, h, CHANNELS), x, &h),
                     DFG_OK);
    assert_int_equal(dfg_relu(g, h, &h), DFG_OK);
    return h;
}

/* x [8,3,32,32] -> [relu, so that no stem matches ->] conv 3x3 (16)
 * -> batch_norm -> relu -> max_pool 2x2/2 -> [blocks residual blocks ->]
 * flatten -> gemm -> mse against targets. */
static dfg_graph *model_of(int relu_first, int blocks)
{
    rng = 42;
    dfg_graph *g;
    dfg_value x, h;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 4,
                                     (int64_t[]){BATCH, 3, SIDE, SIDE}, &x),
                     DFG_OK);
    const int64_t c[1] = {CHANNELS};
    dfg_value w = weight(g, "conv.w", 4, (int64_t[]){CHANNELS, 3, 3, 3}, 0.0f,
                         0.3f);
    dfg_conv2d_params cp = {.pads = {1, 1, 1, 1}};
    if (relu_first)
        assert_int_equal(dfg_relu(g, x, &x), DFG_OK);
    assert_int_equal(dfg_conv2d(g, x, w, DFG_NO_VALUE, &cp, &h), DFG_OK);
    dfg_value scale = weight(g, "bn.scale", 1, c, 1.0f, 0.2f);
    dfg_value bias = weight(g, "bn.bias", 1, c, 0.0f, 0.2f);
    dfg_value mean = weight(g, "bn.mean", 1, c, 0.0f, 0.1f);
    dfg_value var = weight(g, "bn.var", 1, c, 1.0f, 0.1f);
    assert_int_equal(dfg_batch_norm(g, h, scale, bias, mean, var, 1e-5f, &h),
                     DFG_OK);
    assert_int_equal(dfg_relu(g, h, &h), DFG_OK);
    dfg_pool_params pp = {.kernel = {2, 2}, .strides = {2, 2}};
    assert_int_equal(dfg_max_pool(g, h, &pp, &h), DFG_OK);
    for (int k = 0; k < blocks; k++)
        h = residual_block(g, k, h);
    assert_int_equal(dfg_flatten(g, h, 1, &h), DFG_OK);
    dfg_value fc = weight(g, "fc.w", 2,
                          (int64_t[]){CHANNELS * POOLED * POOLED, CLASSES},
                          0.0f, 0.02f);
    assert_int_equal(dfg_gemm(g, h, fc, DFG_NO_VALUE, NULL, &h), DFG_OK);
    assert_int_equal(dfg_graph_output(g, h, "prediction"), DFG_OK);
    return g;
}

static dfg_graph *stem_model(void)
{
    return model_of(0, 0);
}

static dfg_graph *block_model(void)
{
    return model_of(0, 2);
}

typedef dfg_graph *(*model_builder)(void);

/* g compiled as an Adam step within budget_percent of its arena or
 * budget_bytes (0: none). */
static dfg_status compile_within(dfg_graph *g, float budget_percent,
                                 uint64_t budget_bytes, dfg_program **p)
{
    assert_int_equal(dfg_graph_add_loss(g, DFG_LOSS_MSE, NULL), DFG_OK);
    dfg_training_options t;
    dfg_compile_options o;
    training_compile_options(&t, &o);
    t.optimizer = DFG_OPTIMIZER_ADAM;
    t.learning_rate = 0.0002f;
    t.memory_budget_percent = budget_percent;
    t.memory_budget_bytes = budget_bytes;
    *p = NULL;
    return dfg_compile(g, &o, p);
}

static dfg_status compile_step(dfg_graph *g, float budget_percent,
                               dfg_program **p)
{
    return compile_within(g, budget_percent, 0, p);
}

/* STEPS Adam steps on one fixed batch: the losses; then the trained
 * weights and running statistics through an inference program's output
 * (probs, BATCH x CLASSES). */
static void train(const dfg_program *p, model_builder model, float *losses,
                  float *probs)
{
    const dfg_backend *cpu;
    dfg_session *s;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    assert_int_equal(dfg_session_create(p, cpu, NULL, &s), DFG_OK);
    static float x[BATCH * 3 * SIDE * SIDE], targets[BATCH * CLASSES];
    rng = 7;
    for (int i = 0; i < BATCH * 3 * SIDE * SIDE; i++)
        x[i] = uniform(1.0f);
    for (int i = 0; i < BATCH * CLASSES; i++)
        targets[i] = uniform(1.0f);
    for (int step = 0; step < STEPS; step++) {
        const void *in[2] = {x, targets};
        float norms[16];
        void *out[2] = {&losses[step], norms};
        assert_int_equal(dfg_session_run(s, in, out), DFG_OK);
    }
    dfg_graph *g = model();
    dfg_program *eval;
    dfg_session *e;
    assert_int_equal(dfg_compile(g, NULL, &eval), DFG_OK);
    dfg_graph_destroy(g);
    assert_int_equal(dfg_session_create(eval, cpu, NULL, &e), DFG_OK);
    assert_int_equal(dfg_session_copy_weights(e, s, NULL), DFG_OK);
    const void *in[1] = {x};
    void *out[1] = {probs};
    assert_int_equal(dfg_session_run(e, in, out), DFG_OK);
    dfg_session_destroy(e);
    dfg_program_destroy(eval);
    dfg_session_destroy(s);
}

static int has_tensor_named(const dfg_program *p, const char *part)
{
    for (int32_t i = 0; i < p->n_tensors; i++)
        if (strstr(p->tensors[i].name, part))
            return 1;
    return 0;
}

/* The forward's sliced convs: tensors named "<conv>/slice_0/conv". */
static int count_sliced_convs(const dfg_program *p)
{
    int n = 0;
    for (int32_t i = 0; i < p->n_tensors; i++) {
        const char *at = strstr(p->tensors[i].name, "/slice_0/conv");
        n += at && strcmp(at, "/slice_0/conv") == 0;
    }
    return n;
}

static double relative_difference(const float *a, const float *b, int n)
{
    double diff = 0.0, norm = 0.0;
    for (int i = 0; i < n; i++) {
        diff += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        norm += (double)b[i] * b[i];
    }
    return sqrt(diff) / (norm > 0.0 ? sqrt(norm) : 1.0);
}

/* The inference outputs of the trained weights, sliced against unsliced,
 * by ||b - a|| / ||a||. */
static void check_outputs(const float *b, const float *a)
{
    double d = relative_difference(b, a, BATCH * CLASSES);
    if (!(d < 1e-5))
        fail_msg("the trained weights' outputs differ by %g", d);
}

/* a and b, steps of model, trained from the same start give the same
 * losses step by step (a's into losses) and the same outputs. */
static void assert_same_training(const dfg_program *a, const dfg_program *b,
                                 model_builder model, float losses[STEPS])
{
    float others[STEPS];
    static float probs_a[BATCH * CLASSES], probs_b[BATCH * CLASSES];
    train(a, model, losses, probs_a);
    train(b, model, others, probs_b);
    for (int step = 0; step < STEPS; step++)
        assert_float_equal(losses[step], others[step],
                           1e-5 * fabsf(losses[step]));
    check_outputs(probs_b, probs_a);
}

/* The step with its stem sliced (applied by hand, without a budget)
 * against the step as it is: the losses of four Adam steps, the weights
 * and running statistics after them. Every channel's batch statistics,
 * relu and pool are computed by the same kernels on the same values; the
 * conv per slice is a GEMM over fewer output rows, which may round
 * differently, so the check is 1e-5 relative, not bit for bit (measured:
 * the outputs 2.6e-7 apart in norm). */
static void assert_sliced_step_computes_the_same(model_builder model,
                                                 int with_block)
{
    dfg_graph *plain = model(), *sliced = model();
    int32_t slices;
    assert_int_equal(dfg_slice_stem(sliced, &slices), DFG_OK);
    assert_int_equal(slices, 8);
    if (with_block) {
        assert_int_equal(dfg_slice_first_block(sliced, &slices), DFG_OK);
        assert_int_equal(slices, 8);
    }
    dfg_program *a, *b;
    assert_int_equal(compile_step(plain, 0.0f, &a), DFG_OK);
    if (compile_step(sliced, 0.0f, &b) != DFG_OK)
        fail_msg("%s", dfg_last_error());
    assert_false(has_tensor_named(a, "/slice_"));
    assert_true(has_tensor_named(b, "/slice_7/conv"));
    assert_int_equal(count_sliced_convs(b), with_block ? 2 : 1);
    assert_int_equal(has_tensor_named(b, "/sliced_input_grad/product"),
                     with_block);
    float losses[STEPS];
    assert_same_training(a, b, model, losses);
    assert_true(losses[STEPS - 1] < losses[0]);
    dfg_program_destroy(a);
    dfg_program_destroy(b);
    dfg_graph_destroy(plain);
    dfg_graph_destroy(sliced);
}

static void test_sliced_step_computes_the_same(void **state)
{
    (void)state;
    assert_sliced_step_computes_the_same(stem_model, 0);
}

/* The same with a residual block's first conv, batch norm and relu
 * sliced too: its input's gradient is one product of the slices' output
 * gradients concatenated (passes/training/sliced_input_grad.c). */
static void test_sliced_block_computes_the_same(void **state)
{
    (void)state;
    assert_sliced_step_computes_the_same(block_model, 1);
}

/* A budget recomputation alone cannot meet (the stem's conv output and
 * its gradient are live together in batch norm's backward) is met with
 * the stem sliced: the plan verifies, reports the recomputed convs'
 * FLOPs, and trains as the unconstrained step does. */
static void test_budget_slices_the_stem(void **state)
{
    (void)state;
    dfg_graph *g = stem_model(), *h = stem_model();
    dfg_program *free_plan, *budget;
    assert_int_equal(compile_step(g, 0.0f, &free_plan), DFG_OK);
    if (compile_step(h, 50.0f, &budget) != DFG_OK)
        fail_msg("%s", dfg_last_error());
    dfg_plan_stats a, b;
    dfg_program_stats(free_plan, &a);
    dfg_program_stats(budget, &b);
    assert_true(b.arena_bytes * 2 <= a.arena_bytes);
    assert_int_equal(dfg_program_verify(budget), DFG_OK);
    assert_true(has_tensor_named(budget, "/slice_0/conv"));
    int32_t steps;
    uint64_t extra, other;
    dfg_program_recomputation(budget, &steps, &extra, &other);
    assert_true(steps > 0 && extra > 0);
    /* Here the stem's conv is most of the step's FLOPs (measured: 31%). */
    assert_true(100.0 * (double)extra / (double)other < 50.0);
    float losses[STEPS];
    assert_same_training(free_plan, budget, stem_model, losses);
    dfg_program_destroy(free_plan);
    dfg_program_destroy(budget);
    dfg_graph_destroy(g);
    dfg_graph_destroy(h);
}

/* The step with two blocks within `fraction` of free_plan's arena in
 * bytes, as the pipeline chooses it (verified) and with its stem sliced
 * by hand. */
static void compile_chosen_and_by_hand(const dfg_program *free_plan,
                                       double fraction, dfg_program **chosen,
                                       dfg_program **by_hand)
{
    dfg_plan_stats a;
    dfg_program_stats(free_plan, &a);
    uint64_t budget = (uint64_t)((double)a.arena_bytes * fraction);
    dfg_graph *stem_only = block_model(), *h = block_model();
    int32_t slices;
    assert_int_equal(dfg_slice_stem(stem_only, &slices), DFG_OK);
    if (compile_within(stem_only, 0.0f, budget, by_hand) != DFG_OK ||
        compile_within(h, 0.0f, budget, chosen) != DFG_OK)
        fail_msg("%s", dfg_last_error());
    assert_int_equal(dfg_program_verify(*chosen), DFG_OK);
    dfg_graph_destroy(stem_only);
    dfg_graph_destroy(h);
}

/* A budget the stem-sliced step meets (57.5% of the arena of the step
 * with two blocks) is met with fewer FLOPs with the first block's conv,
 * batch norm and relu sliced too (measured: +32.5% against +60.2%); the
 * pipeline keeps that step: its FLOPs below those of the step sliced at
 * the stem alone (by hand) at the same budget in bytes, the plan
 * verified, training as the unconstrained step does. */
static void test_budget_slices_a_block_where_cheaper(void **state)
{
    (void)state;
    dfg_graph *g = block_model();
    dfg_program *free_plan, *by_hand, *chosen;
    assert_int_equal(compile_step(g, 0.0f, &free_plan), DFG_OK);
    compile_chosen_and_by_hand(free_plan, 0.575, &chosen, &by_hand);
    assert_int_equal(count_sliced_convs(by_hand), 1);
    assert_int_equal(count_sliced_convs(chosen), 2);
    assert_true(dfg_program_flops(chosen) < dfg_program_flops(by_hand));
    float losses[STEPS];
    assert_same_training(free_plan, chosen, block_model, losses);
    dfg_program_destroy(free_plan);
    dfg_program_destroy(by_hand);
    dfg_program_destroy(chosen);
    dfg_graph_destroy(g);
}

/* Budgets the unsliced step meets (fractions of the step with two
 * blocks' arena): where it recomputes more than a pass of its stem's
 * conv, the stem-sliced step is built too and the one of fewer FLOPs
 * kept, so that no budget costs more than the stem-sliced step (by hand)
 * at the same bytes; the sliced step kept at one at least (the larger
 * budgets' plans cost no more than the smaller ones' there too). */
static void test_met_budget_keeps_the_cheaper_step(void **state)
{
    (void)state;
    dfg_graph *g = block_model();
    dfg_program *free_plan;
    assert_int_equal(compile_step(g, 0.0f, &free_plan), DFG_OK);
    static const double fractions[] = {0.9, 0.8, 0.7};
    int sliced = 0;
    for (size_t i = 0; i < sizeof fractions / sizeof fractions[0]; i++) {
        dfg_program *by_hand, *chosen;
        compile_chosen_and_by_hand(free_plan, fractions[i], &chosen,
                                   &by_hand);
        assert_true(dfg_program_flops(chosen) <= dfg_program_flops(by_hand));
        sliced += count_sliced_convs(chosen) > 0;
        dfg_program_destroy(by_hand);
        dfg_program_destroy(chosen);
    }
    assert_true(sliced > 0);
    dfg_program_destroy(free_plan);
    dfg_graph_destroy(g);
}

/* ---- gradients of the chain alone ----------------------------------- */

#define G_BATCH 2
#define G_SIDE 6
#define G_CHANNELS 8
#define G_OUT (G_CHANNELS * (G_SIDE / 2) * (G_SIDE / 2))
#define G_INPUT (G_BATCH * 3 * G_SIDE * G_SIDE)
#define G_KERNEL (G_CHANNELS * 3 * 3 * 3)
#define FD_EPS 1e-3

/* x [2,3,6,6] -> conv 3x3 (8) -> batch_norm_train -> relu -> max_pool
 * 2x2/2 -> flatten -> L = sum(y * R), sliced (one channel a slice) or
 * not; with gradients, outputs dL/dx, dL/dkernel, dL/dscale, dL/dbias
 * after L. */
static dfg_program *gradient_program(int sliced, int with_gradients)
{
    rng = 5;
    dfg_graph *g;
    dfg_value x, h;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 4,
                                     (int64_t[]){G_BATCH, 3, G_SIDE, G_SIDE},
                                     &x), DFG_OK);
    const int64_t c[1] = {G_CHANNELS};
    dfg_value wrt[4] = {x};
    wrt[1] = weight(g, "conv.w", 4, (int64_t[]){G_CHANNELS, 3, 3, 3}, 0.0f,
                    0.5f);
    dfg_conv2d_params cp = {.pads = {1, 1, 1, 1}};
    assert_int_equal(dfg_conv2d(g, x, wrt[1], DFG_NO_VALUE, &cp, &h), DFG_OK);
    wrt[2] = weight(g, "bn.scale", 1, c, 1.0f, 0.3f);
    wrt[3] = weight(g, "bn.bias", 1, c, 0.0f, 0.3f);
    dfg_value mean = weight(g, "bn.mean", 1, c, 0.0f, 0.1f);
    dfg_value var = weight(g, "bn.var", 1, c, 1.0f, 0.1f);
    assert_int_equal(dfg_batch_norm(g, h, wrt[2], wrt[3], mean, var, 1e-5f,
                                    &h), DFG_OK);
    assert_int_equal(dfg_relu(g, h, &h), DFG_OK);
    dfg_pool_params pp = {.kernel = {2, 2}, .strides = {2, 2}};
    assert_int_equal(dfg_max_pool(g, h, &pp, &h), DFG_OK);
    dfg_value y, r, product, loss;
    assert_int_equal(dfg_flatten(g, h, 1, &y), DFG_OK);
    int32_t slices;
    if (sliced) {
        assert_int_equal(dfg_slice_stem(g, &slices), DFG_OK);
        assert_int_equal(slices, G_CHANNELS);
    } else {
        assert_int_equal(dfg_training_batch_norm_mode(g), DFG_OK);
    }
    static float weights[G_BATCH * G_OUT];
    for (int i = 0; i < G_BATCH * G_OUT; i++)
        weights[i] = uniform(1.0f);
    assert_int_equal(dfg_graph_constant(g, "R", DFG_F32, 2,
                                        (int64_t[]){G_BATCH, G_OUT}, weights,
                                        &r), DFG_OK);
    assert_int_equal(dfg_mul(g, y, r, &product), DFG_OK);
    assert_int_equal(dfg_reduce_sum(g, product, 0, NULL, 0, &loss), DFG_OK);
    assert_int_equal(dfg_graph_output(g, loss, "L"), DFG_OK);
    if (with_gradients) {
        int32_t at[4], grads[4];
        for (int i = 0; i < 4; i++)
            at[i] = dfg_graph_index(g, wrt[i]);
        assert_int_equal(dfg_autodiff(g, dfg_graph_index(g, loss), at, 4,
                                      grads), DFG_OK);
        for (int i = 0; i < 4; i++) {
            char name[8];
            snprintf(name, sizeof name, "d%d", i);
            assert_true(grads[i] >= 0);
            assert_int_equal(dfg_graph_output(g, dfg_graph_handle(g, grads[i]),
                                              name), DFG_OK);
        }
    }
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    o.fuse_operators = 0;
    dfg_program *p;
    assert_int_equal(dfg_compile(g, &o, &p), DFG_OK);
    assert_int_equal(dfg_program_verify(p), DFG_OK);
    dfg_graph_destroy(g);
    return p;
}

static float run_gradients(const dfg_program *p, const float *x,
                           float grads[4][G_KERNEL + G_INPUT])
{
    const dfg_backend *cpu;
    dfg_session *s;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    assert_int_equal(dfg_session_create(p, cpu, NULL, &s), DFG_OK);
    float loss;
    const void *in[1] = {x};
    void *out[5] = {&loss, grads[0], grads[1], grads[2], grads[3]};
    assert_int_equal(dfg_session_run(s, in, out), DFG_OK);
    dfg_session_destroy(s);
    return loss;
}

/* The sliced chain's gradients (input, kernel, scale, bias) against the
 * unsliced chain's, and the input's against central differences of the
 * sliced forward program (its batch statistics move with the input). */
static void test_sliced_gradients_match(void **state)
{
    (void)state;
    static float x[G_INPUT], a[4][G_KERNEL + G_INPUT], b[4][G_KERNEL + G_INPUT];
    rng = 11;
    for (int i = 0; i < G_INPUT; i++)
        x[i] = uniform(1.0f);
    dfg_program *plain = gradient_program(0, 1);
    dfg_program *sliced = gradient_program(1, 1);
    float loss_a = run_gradients(plain, x, a);
    float loss_b = run_gradients(sliced, x, b);
    assert_float_equal(loss_a, loss_b, 1e-6 * fabsf(loss_a));
    const int n[4] = {G_INPUT, G_KERNEL, G_CHANNELS, G_CHANNELS};
    for (int k = 0; k < 4; k++)
        if (!(relative_difference(b[k], a[k], n[k]) < 1e-5))
            fail_msg("gradient %d: sliced and unsliced differ by %g", k,
                     relative_difference(b[k], a[k], n[k]));
    dfg_program *forward = gradient_program(1, 0);
    const dfg_backend *cpu;
    dfg_session *s;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    assert_int_equal(dfg_session_create(forward, cpu, NULL, &s), DFG_OK);
    static float reference[G_INPUT];
    for (int j = 0; j < G_INPUT; j++) {
        float keep = x[j], up, down;
        const void *in[1] = {x};
        void *out_up[1] = {&up}, *out_down[1] = {&down};
        x[j] = (float)(keep + FD_EPS);
        assert_int_equal(dfg_session_run(s, in, out_up), DFG_OK);
        x[j] = (float)(keep - FD_EPS);
        assert_int_equal(dfg_session_run(s, in, out_down), DFG_OK);
        x[j] = keep;
        reference[j] = (float)(((double)up - down) / (2.0 * FD_EPS));
    }
    double error = relative_difference(b[0], reference, G_INPUT);
    if (!(error < 1e-2))
        fail_msg("input gradient against finite differences: %g", error);
    dfg_session_destroy(s);
    dfg_program_destroy(forward);
    dfg_program_destroy(plain);
    dfg_program_destroy(sliced);
}

/* Where a batch-norm backward's input and output gradient alone exceed
 * the budget and no stem can be sliced, the step fails at once, naming
 * that node (passes/remat/remat_floor.c). */
static void test_budget_below_the_floor_names_the_node(void **state)
{
    (void)state;
    dfg_graph *g = model_of(1, 0);
    dfg_program *p;
    assert_int_equal(compile_step(g, 10.0f, &p), DFG_ERR_PLAN);
    assert_null(p);
    const char *e = dfg_last_error();
    assert_non_null(strstr(e, "which no recomputation splits"));
    assert_non_null(strstr(e, "batch_norm_train_grad"));
    dfg_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sliced_step_computes_the_same),
        cmocka_unit_test(test_budget_slices_the_stem),
        cmocka_unit_test(test_sliced_block_computes_the_same),
        cmocka_unit_test(test_budget_slices_a_block_where_cheaper),
        cmocka_unit_test(test_met_budget_keeps_the_cheaper_step),
        cmocka_unit_test(test_budget_below_the_floor_names_the_node),
        cmocka_unit_test(test_sliced_gradients_match),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
