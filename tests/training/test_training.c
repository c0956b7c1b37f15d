/* Training end to end: both bundled classifiers trained on the digits with
 * a fixed seed reach a test accuracy above 0.94, with verified plans; a
 * training program tells its tensor classes apart, survives a program
 * file round trip, and accumulates K micro-batches per optimizer step. */
#include <math.h>
#include <setjmp.h>
#include "dfg/compile.h"
#include "dfg/memory_predict.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "program/program.h"
#include "tests/support/json_tree.h"
#include "tests/support/training_options.h"
#include "tests/training/training_fixtures.h"
#include "tools/training/digits_training.h"

static dfgc_digits data;

static int load_data(void **state)
{
    (void)state;
    return dfgc_digits_load(dfgc_digits_default_path(), &data);
}

static int free_data(void **state)
{
    (void)state;
    dfgc_digits_free(&data);
    return 0;
}

/* The defaults of 'dfgc train'; the accuracy goal leaves the margin that
 * other BLAS kernels (other rounding, another trajectory) may need: the
 * models reach 0.956-0.981 over seeds 1..10 (tools/training/digits_training.h). */
static void train_model(const char *model, dfg_dtype precision,
                        int32_t epochs, double goal)
{
    dfgc_train_config c = {.model = model, .epochs = epochs, .seed = 7,
                           .rank = 0, .ranks = 1, .precision = precision};
    dfg_training_options_init(&c.training);
    c.training.optimizer = DFG_OPTIMIZER_ADAM;
    c.training.learning_rate = 0.003f;
    c.training.decay_steps = dfgc_optimizer_steps(c.epochs, 32, 1);
    dfgc_train_result r;
    if (dfgc_train_digits(&c, &data, &r) != DFG_OK)
        fail_msg("%s: %s", model, dfg_last_error());
    printf("%s: loss %.4f, test accuracy %.3f\n", model, r.final_loss,
           r.test_accuracy);
    assert_true(r.plan_verified);
    assert_true(r.test_accuracy >= goal);
}

static void test_mlp_learns_the_digits(void **state)
{
    (void)state;
    train_model("mlp", DFG_F32, dfgc_default_epochs("mlp"), 0.94);
}

static void test_cnn_learns_the_digits(void **state)
{
    (void)state;
    /* Batch norm in training mode (batch statistics, running statistics
     * for the evaluation): 0.99 here. */
    train_model("cnn", DFG_F32, dfgc_default_epochs("cnn"), 0.95);
}

/* The same with activations and gradients stored in bf16, weights and
 * optimizer state in f32 (passes/training/mixed_precision.c), evaluated in bf16
 * too: issue 12 asks for 0.94. Three epochs keep the suite short (one
 * reaches 0.95 already; 'dfgc train example:cnn --precision bf16' runs
 * the default ten). */
static void test_cnn_learns_the_digits_in_bf16(void **state)
{
    (void)state;
    train_model("cnn", DFG_BF16, 3, 0.94);
}

static dfg_program *compile_training_decayed(const char *model,
                                            int32_t accumulate,
                                            int64_t decay_steps)
{
    dfg_training_options t;
    dfg_training_options_init(&t);
    t.optimizer = DFG_OPTIMIZER_SGD;
    t.accumulate = accumulate;
    t.decay_steps = decay_steps;
    return compile_bundled_training(model, &t);
}

static dfg_program *compile_training(const char *model, int32_t accumulate)
{
    return compile_training_decayed(model, accumulate, 0);
}

static int64_t bytes_of(const dfg_program *p, dfg_tensor_kind kind,
                        dfg_region region)
{
    int64_t total = 0;
    for (int32_t i = 0; i < p->n_tensors; i++)
        if (p->tensors[i].kind == kind && p->tensors[i].alias_of < 0) {
            assert_int_equal(p->tensors[i].region, region);
            total += p->tensors[i].bytes;
        }
    return total;
}

static void test_plan_classes_and_round_trip(void **state)
{
    (void)state;
    dfg_program *p = compile_training("cnn", 2);
    assert_int_equal(dfg_program_verify(p), DFG_OK);
    /* Weights, state and accumulators persist in the weights region;
     * gradients and saved activations are planned in the arena. */
    int64_t weights = bytes_of(p, DFG_TENSOR_WEIGHT, DFG_REGION_WEIGHTS);
    assert_true(weights > 0);
    /* One accumulator per trained weight: all but the batch-norm
     * statistics (4 bytes x channels, two per batch norm). */
    int64_t accumulators = bytes_of(p, DFG_TENSOR_GRADIENT_ACCUMULATOR,
                                    DFG_REGION_WEIGHTS);
    assert_true(accumulators > weights / 2 && accumulators < weights);
    assert_true(bytes_of(p, DFG_TENSOR_OPTIMIZER_STATE, DFG_REGION_WEIGHTS) > 0);
    assert_true(bytes_of(p, DFG_TENSOR_GRADIENT, DFG_REGION_ARENA) > 0);
    assert_true(bytes_of(p, DFG_TENSOR_SAVED_ACTIVATION, DFG_REGION_ARENA) > 0);
    assert_string_equal(dfg_tensor_kind_name(DFG_TENSOR_GRADIENT), "gradient");
    /* The plan JSON's bytes_by_kind holds the same totals. */
    char *text = NULL;
    size_t size = 0;
    FILE *json = open_memstream(&text, &size);
    assert_non_null(json);
    assert_int_equal(dfg_report_json(p, json), DFG_OK);
    fclose(json);
    json_node *root = json_parse(text);
    assert_non_null(root);
    const json_node *by_kind = json_get(root, "bytes_by_kind");
    assert_non_null(by_kind);
    const dfg_tensor_kind kinds[] = {DFG_TENSOR_WEIGHT, DFG_TENSOR_GRADIENT,
                                     DFG_TENSOR_GRADIENT_ACCUMULATOR,
                                     DFG_TENSOR_OPTIMIZER_STATE,
                                     DFG_TENSOR_SAVED_ACTIVATION};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        const json_node *n = json_get(by_kind, dfg_tensor_kind_name(kinds[k]));
        assert_true(n && json_is_integer(n));
        dfg_region region = kinds[k] == DFG_TENSOR_GRADIENT ||
                                    kinds[k] == DFG_TENSOR_SAVED_ACTIVATION
                                ? DFG_REGION_ARENA : DFG_REGION_WEIGHTS;
        assert_int_equal(json_integer(n), bytes_of(p, kinds[k], region));
    }
    json_free(root);
    free(text);
    const char *path = "test_training.dfgp";
    assert_int_equal(dfg_program_save(p, path), DFG_OK);
    dfg_program *loaded;
    assert_int_equal(dfg_program_load(path, NULL, &loaded), DFG_OK);
    assert_int_equal(loaded->n_steps, p->n_steps);
    assert_int_equal(dfg_program_verify(loaded), DFG_OK);
    remove(path);
    dfg_program_destroy(loaded);
    dfg_program_destroy(p);
}

static int is_update(dfg_op op)
{
    return op == DFG_OP_SGD_UPDATE || op == DFG_OP_ADAM_UPDATE ||
           op == DFG_OP_ADAMW_UPDATE;
}

/* Each weight's update runs as soon as it may: the step before it is its
 * gradient's producer or the last other reader of its weight, so that the
 * gradient dies there instead of living to the end of the backward pass;
 * and no step after it reads the weight it wrote. */
static void check_updates_run_early(const char *model, int32_t accumulate)
{
    dfg_program *p = compile_training(model, accumulate);
    int32_t updates = 0, before_backward_end = 0, last_backward = -1;
    for (int32_t s = 0; s < p->n_steps; s++)
        if (p->steps[s].op == DFG_OP_CONV2D_GRAD_INPUT ||
            p->steps[s].op == DFG_OP_CONV2D_GRAD_WEIGHT ||
            p->steps[s].op == DFG_OP_GEMM)
            last_backward = s;
    for (int32_t s = 0; s < p->n_steps; s++) {
        const dfg_program_step *u = &p->steps[s];
        if (!is_update(u->op))
            continue;
        updates++;
        before_backward_end += s < last_backward;
        int32_t weight = u->inputs[0], gradient = u->inputs[1];
        int32_t waited_for = -1;
        for (int32_t r = 0; r < s; r++) {
            const dfg_program_step *step = &p->steps[r];
            for (int32_t i = 0; i < step->n_outputs; i++)
                if (step->outputs[i] == gradient && r > waited_for)
                    waited_for = r;
            for (int32_t i = 0; i < step->n_inputs; i++)
                if (step->inputs[i] == weight && r > waited_for)
                    waited_for = r;
        }
        for (int32_t r = s + 1; r < p->n_steps; r++)
            for (int32_t i = 0; i < p->steps[r].n_inputs; i++)
                if (p->steps[r].inputs[i] == weight)
                    fail_msg("%s: step %d reads %s after its update", model,
                             (int)r, p->tensors[weight].name);
        /* Updates waiting for the same step follow each other. */
        int32_t gap = s - 1 - waited_for;
        for (int32_t r = waited_for + 1; r < s; r++)
            gap -= is_update(p->steps[r].op) ||
                   p->steps[r].op == DFG_OP_OPTIMIZER_TICK;
        if (gap != 0)
            fail_msg("%s: the update of %s (step %d) could run after step %d",
                     model, p->tensors[weight].name, (int)s, (int)waited_for);
    }
    /* Most updates run before the backward pass ends. */
    assert_true(updates > 0 && 2 * before_backward_end >= updates);
    dfg_program_destroy(p);
}

static void test_updates_run_when_their_gradient_is_final(void **state)
{
    (void)state;
    check_updates_run_early("mlp", 1);
    check_updates_run_early("cnn", 1);
    check_updates_run_early("cnn", 2);
}

/* Runs the mlp's training session `runs` times on the first examples;
 * norms[run * 6 + k]: weight k's squared update norm at that run. */
static void run_mlp(dfg_program *p, int runs, float *norms)
{
    int64_t n_norms;
    dfg_session *s = training_session(p, &n_norms);
    assert_int_equal(n_norms, 6); /* 3 layers: weight and bias */
    float x[32 * 64], loss;
    int64_t labels[32];
    for (int i = 0; i < 32 * 64; i++)
        x[i] = data.pixels[i];
    for (int i = 0; i < 32; i++)
        labels[i] = data.labels[i];
    const void *inputs[2] = {x, labels};
    for (int run = 0; run < runs; run++) {
        void *outputs[2] = {&loss, norms + run * 6};
        assert_int_equal(dfg_session_run(s, inputs, outputs), DFG_OK);
    }
    dfg_session_destroy(s);
}

#define CNN_WEIGHTS 26

/* One SGD step of the cnn on the first 32 digits, activations stored in
 * `precision`: the loss and each weight's squared update norm (lr^2 times
 * its squared gradient norm), CNN_WEIGHTS of them. */
static void cnn_sgd_step(dfg_dtype precision, float *loss, float *norms)
{
    dfg_graph *g;
    assert_int_equal(dfg_model_build_training("cnn", NULL, &g), DFG_OK);
    dfg_training_options t;
    dfg_compile_options o;
    training_compile_options(&t, &o);
    t.momentum = 0.0f;
    o.precision = precision;
    dfg_program *p;
    assert_int_equal(dfg_compile(g, &o, &p), DFG_OK);
    dfg_graph_destroy(g);
    dfg_tensor_info info;
    assert_int_equal(dfg_program_output_info(p, 1, &info), DFG_OK);
    assert_int_equal(info.shape[0], CNN_WEIGHTS);
    const dfg_backend *cpu;
    dfg_session *s;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    assert_int_equal(dfg_session_create(p, cpu, NULL, &s), DFG_OK);
    int64_t labels[32];
    for (int i = 0; i < 32; i++)
        labels[i] = data.labels[i];
    assert_int_equal(dfg_session_run(s, (const void *[]){data.pixels, labels},
                                     (void *[]){loss, norms}), DFG_OK);
    dfg_session_destroy(s);
    dfg_program_destroy(p);
}

/* bf16 storage computes the same step as f32 to bf16's precision: the
 * loss within 1%, every weight's gradient norm within 5% (a wrong bf16
 * kernel, a lost cast or a gradient read as the wrong dtype is off by
 * far more). */
static void test_bf16_step_matches_f32(void **state)
{
    (void)state;
    float loss[2], norms[2][CNN_WEIGHTS];
    cnn_sgd_step(DFG_F32, &loss[0], norms[0]);
    cnn_sgd_step(DFG_BF16, &loss[1], norms[1]);
    assert_true(fabsf(loss[1] - loss[0]) <= 0.01f * loss[0]);
    for (int k = 0; k < CNN_WEIGHTS; k++) {
        double f32 = sqrt(norms[0][k]), bf16 = sqrt(norms[1][k]);
        if (!(f32 > 0.0) || !(fabs(bf16 - f32) <= 0.05 * f32))
            fail_msg("weight %d: gradient norm %g in f32, %g in bf16", k,
                     f32, bf16);
    }
}

/* A cosine decay over 2 steps: full steps, then half (the factor at step
 * 2 is (1 + cos(pi / 2)) / 2), then none: the weights stop moving. */
static void test_learning_rate_decays_to_zero(void **state)
{
    (void)state;
    dfg_program *p = compile_training_decayed("mlp", 1, 2);
    float norms[4 * 6];
    run_mlp(p, 4, norms);
    for (int k = 0; k < 6; k++)
        if (!(norms[k] > 0.0f && norms[6 + k] > 0.0f && norms[12 + k] == 0.0f &&
              norms[18 + k] == 0.0f))
            fail_msg("weight %d: update norms %g %g %g %g", k,
                     (double)norms[k], (double)norms[6 + k],
                     (double)norms[12 + k], (double)norms[18 + k]);
    dfg_program_destroy(p);
    dfg_graph *g;
    assert_int_equal(dfg_model_build_training("mlp", NULL, &g), DFG_OK);
    dfg_training_options t;
    dfg_compile_options o;
    training_compile_options(&t, &o);
    t.decay_steps = -1;
    assert_int_equal(dfg_compile(g, &o, &p), DFG_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(dfg_last_error(), "decay_steps"));
    dfg_graph_destroy(g);
}

/* With accumulate = 3 the weights move on every third run only. */
static void test_accumulation_gates_the_update(void **state)
{
    (void)state;
    dfg_program *p = compile_training("mlp", 3);
    float norms[6 * 6];
    run_mlp(p, 6, norms);
    for (int run = 1; run <= 6; run++)
        for (int k = 0; k < 6; k++)
            if ((norms[(run - 1) * 6 + k] > 0.0f) != (run % 3 == 0))
                fail_msg("run %d: weight %d moved by %g", run, k,
                         (double)norms[(run - 1) * 6 + k]);
    dfg_program_destroy(p);
}

/* x [4, 3] -> gemm with weight w [3, 5] -> op -> prediction [4, 5]. */
static dfg_graph *classifier(const char *op)
{
    dfg_graph *g;
    dfg_value x, w, h, y;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 2, (int64_t[]){4, 3}, &x),
                     DFG_OK);
    float data[15] = {0.1f, 0.2f, -0.3f, 0.4f, 0.5f, -0.6f, 0.7f, 0.8f,
                      -0.9f, 1.0f, 0.1f, 0.2f, 0.3f, -0.4f, 0.5f};
    assert_int_equal(dfg_graph_weight(g, "w", DFG_F32, 2, (int64_t[]){3, 5},
                                      data, &w), DFG_OK);
    assert_int_equal(dfg_matmul(g, x, w, &h), DFG_OK);
    if (op)
        assert_int_equal(dfg_graph_node(g, op, NULL, &h, 1, NULL, &y, 1), DFG_OK);
    else
        y = h;
    assert_int_equal(dfg_graph_output(g, y, "prediction"), DFG_OK);
    return g;
}

static dfg_status compile_with_loss(dfg_graph *g, dfg_loss_kind kind)
{
    dfg_training_options t;
    dfg_compile_options o;
    training_compile_options(&t, &o);
    dfg_program *p = NULL;
    dfg_status st = dfg_graph_add_loss(g, kind, NULL);
    if (st == DFG_OK)
        st = dfg_compile(g, &o, &p);
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
    return st;
}

/* The errors a user meets when making a model trainable name what is
 * wrong: labels of another class count, a loss that reaches no weight, an
 * op without a gradient rule. */
static void test_training_errors_name_the_cause(void **state)
{
    (void)state;
    dfg_graph *g = classifier(NULL);
    int64_t classes = 10;
    assert_int_equal(dfg_graph_add_loss(g, DFG_LOSS_CROSS_ENTROPY, &classes),
                     DFG_ERR_SHAPE);
    assert_non_null(strstr(dfg_last_error(), "labels of 10 classes"));
    assert_non_null(strstr(dfg_last_error(), "'prediction' [4,5]"));
    classes = 5;
    assert_int_equal(dfg_graph_add_loss(g, DFG_LOSS_CROSS_ENTROPY, &classes),
                     DFG_OK);
    dfg_graph_destroy(g);

    assert_int_equal(compile_with_loss(classifier("floor"), DFG_LOSS_MSE),
                     DFG_ERR_UNSUPPORTED);
    assert_non_null(strstr(dfg_last_error(), "floor"));
    assert_non_null(strstr(dfg_last_error(), "not differentiable"));

    /* A prediction that depends on no weight at all. */
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    dfg_value x, y;
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 2, (int64_t[]){4, 5}, &x),
                     DFG_OK);
    assert_int_equal(dfg_relu(g, x, &y), DFG_OK);
    assert_int_equal(dfg_graph_output(g, y, "prediction"), DFG_OK);
    assert_int_equal(compile_with_loss(g, DFG_LOSS_CROSS_ENTROPY),
                     DFG_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(dfg_last_error(), "depends on no f32 weight"));
    assert_int_equal(compile_with_loss(classifier(NULL), DFG_LOSS_MSE), DFG_OK);
}

/* Batch norm trains with batch statistics whether its running
 * statistics are weights or constants (what the ONNX importer makes of an
 * eval-mode export): the program runs batch_norm_train, and none of the
 * inference batch_norm. */
static void test_batch_norm_trains_with_constant_statistics(void **state)
{
    (void)state;
    dfg_graph *g;
    dfg_value x, scale, bias, mean, var, y;
    const float ones[3] = {1, 1, 1}, zeros[3] = {0, 0, 0};
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 2, (int64_t[]){4, 3}, &x),
                     DFG_OK);
    assert_int_equal(dfg_graph_weight(g, "scale", DFG_F32, 1, (int64_t[]){3},
                                      ones, &scale), DFG_OK);
    assert_int_equal(dfg_graph_weight(g, "bias", DFG_F32, 1, (int64_t[]){3},
                                      zeros, &bias), DFG_OK);
    assert_int_equal(dfg_graph_constant(g, "mean", DFG_F32, 1, (int64_t[]){3},
                                        zeros, &mean), DFG_OK);
    assert_int_equal(dfg_graph_constant(g, "var", DFG_F32, 1, (int64_t[]){3},
                                        ones, &var), DFG_OK);
    assert_int_equal(dfg_batch_norm(g, x, scale, bias, mean, var, 1e-5f, &y),
                     DFG_OK);
    assert_int_equal(dfg_graph_output(g, y, "prediction"), DFG_OK);
    assert_int_equal(dfg_graph_add_loss(g, DFG_LOSS_CROSS_ENTROPY, NULL), DFG_OK);
    dfg_training_options t;
    dfg_compile_options o;
    training_compile_options(&t, &o);
    dfg_program *p;
    assert_int_equal(dfg_compile(g, &o, &p), DFG_OK);
    int training_form = 0, inference_form = 0;
    for (int32_t s = 0; s < p->n_steps; s++) {
        training_form += p->steps[s].op == DFG_OP_BATCH_NORM_TRAIN;
        inference_form += p->steps[s].op == DFG_OP_BATCH_NORM;
    }
    assert_int_equal(training_form, 1);
    assert_int_equal(inference_form, 0);
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
}

/* Adam's zero-initialised moments of a 1 MiB weight take no memory in the
 * compiled program (pages mapped, never written: mincore finds none
 * resident), and a session reads them as zeros: its first step equals a
 * second session's of the same program. */
static void test_zero_state_takes_no_memory(void **state)
{
    (void)state;
    enum { K = 512 };
    dfg_graph *g;
    dfg_value x, w, y;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 2, (int64_t[]){4, K}, &x),
                     DFG_OK);
    float *data = calloc(K * K, sizeof *data);
    assert_non_null(data);
    for (int i = 0; i < K * K; i++)
        data[i] = (float)(i % 7) * 0.01f;
    assert_int_equal(dfg_graph_weight(g, "w", DFG_F32, 2, (int64_t[]){K, K},
                                      data, &w), DFG_OK);
    free(data);
    assert_int_equal(dfg_matmul(g, x, w, &y), DFG_OK);
    assert_int_equal(dfg_graph_output(g, y, "prediction"), DFG_OK);
    assert_int_equal(dfg_graph_add_loss(g, DFG_LOSS_CROSS_ENTROPY, NULL), DFG_OK);
    dfg_training_options t;
    dfg_compile_options o;
    training_compile_options(&t, &o);
    t.optimizer = DFG_OPTIMIZER_ADAM;
    dfg_program *p;
    assert_int_equal(dfg_compile(g, &o, &p), DFG_OK);
    dfg_graph_destroy(g);
    const dfg_program_tensor *moments = NULL;
    for (int32_t i = 0; i < p->n_tensors; i++)
        if (strcmp(p->tensors[i].name, "w.adam_moments") == 0)
            moments = &p->tensors[i];
    assert_non_null(moments);
    assert_non_null(moments->data);
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t first = ((uintptr_t)moments->data + (uintptr_t)page - 1) &
                      ~((uintptr_t)page - 1);
    size_t pages = (size_t)(((uintptr_t)moments->data + moments->bytes -
                             first) / (uintptr_t)page);
    unsigned char *resident = calloc(pages, 1);
    assert_non_null(resident);
    assert_int_equal(mincore((void *)first, pages * (size_t)page, resident), 0);
    size_t in_memory = 0;
    for (size_t i = 0; i < pages; i++)
        in_memory += resident[i] & 1u;
    free(resident);
    assert_true(pages > 400);
    assert_int_equal(in_memory, 0);
    float losses[2];
    const dfg_backend *cpu;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    /* The prediction counts the session's whole region beside the
     * program's bytes less those zero pages. */
    dfg_memory_prediction m;
    assert_int_equal(dfg_memory_predict(p, cpu, &m), DFG_OK);
    uint64_t region = (uint64_t)p->region_bytes[DFG_REGION_WEIGHTS];
    uint64_t expected = 2 * region - (uint64_t)moments->bytes +
                        m.weight_copy_bytes - m.replaced_plain_bytes;
    assert_true(m.weights_bytes <= expected);
    assert_true(m.weights_bytes + 64 >= expected);
    for (int k = 0; k < 2; k++) {
        dfg_session *s;
        assert_int_equal(dfg_session_create(p, cpu, NULL, &s), DFG_OK);
        float xs[4 * K];
        int64_t labels[4] = {1, 2, 3, 4};
        for (int i = 0; i < 4 * K; i++)
            xs[i] = (float)(i % 11) * 0.1f;
        const void *in[2] = {xs, labels};
        assert_int_equal(dfg_session_run(s, in, NULL), DFG_OK);
        assert_int_equal(dfg_session_run(s, in, NULL), DFG_OK);
        void *loss;
        assert_int_equal(dfg_session_output_buffer(s, 0, &loss), DFG_OK);
        losses[k] = *(const float *)loss;
        dfg_session_destroy(s);
    }
    assert_true(isfinite(losses[0]));
    assert_memory_equal(&losses[0], &losses[1], sizeof losses[0]);
    dfg_program_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_training_errors_name_the_cause),
        cmocka_unit_test(test_zero_state_takes_no_memory),
        cmocka_unit_test(test_batch_norm_trains_with_constant_statistics),
        cmocka_unit_test(test_plan_classes_and_round_trip),
        cmocka_unit_test(test_accumulation_gates_the_update),
        cmocka_unit_test(test_learning_rate_decays_to_zero),
        cmocka_unit_test(test_updates_run_when_their_gradient_is_final),
        cmocka_unit_test(test_mlp_learns_the_digits),
        cmocka_unit_test(test_cnn_learns_the_digits),
        cmocka_unit_test(test_cnn_learns_the_digits_in_bf16),
        cmocka_unit_test(test_bf16_step_matches_f32),
    };
    return cmocka_run_group_tests(tests, load_data, free_data);
}
