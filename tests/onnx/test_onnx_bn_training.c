/* A training-mode ONNX export trains (issue 32): conv -> BatchNormalization
 * (training_mode = 1, momentum 0.8, outputs Y, running_mean, running_var as
 * PyTorch's TrainingMode.TRAINING export writes them) -> relu -> Dropout
 * (training mode) -> flatten -> gemm, built with onnx_builder, imported,
 * given a cross-entropy loss and trained on a fixed batch. Each step's
 * running statistics are checked against a hand computation from the conv
 * weights that step reads: running = momentum running + (1 - momentum)
 * batch statistic, the variance biased as ONNX's spec says. The eval-mode
 * export of the same model trains as before: momentum 0.9, the variance
 * unbiased (runtime/cpu/reduce/batch_norm_train.c). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dfg/dfg.h"
#include "program/program.h"
#include "tests/support/onnx_builder.h"
#include "tests/support/training_options.h"

#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define BOOL ONNX__TENSOR_PROTO__DATA_TYPE__BOOL

enum { BATCH = 4, SIDE = 3, PLANE = SIDE * SIDE, CHANNELS = 2, CLASSES = 3 };

/* The model's knobs: the BatchNormalization node's form. */
typedef struct bn_form {
    int training_mode;       /* 1: outputs 1 and 2 asked for */
    int stats_as_inputs;     /* running statistics graph inputs */
    float momentum;
} bn_form;

static const float conv_w[CHANNELS] = {2.0f, -1.0f}, conv_b[CHANNELS] = {0.5f, 0.0f};
static const float mean0[CHANNELS] = {0.1f, -0.2f}, var0[CHANNELS] = {1.0f, 2.0f};

/* conv (1 -> 2 channels, 1x1) -> batch norm -> relu -> dropout -> gemm. */
static uint8_t *model_bytes(const bn_form *f, size_t *size)
{
    const int64_t x_dims[4] = {BATCH, 1, SIDE, SIDE}, w_dims[4] = {CHANNELS, 1, 1, 1};
    const int64_t c_dims[1] = {CHANNELS}, fc_dims[2] = {CLASSES, CHANNELS * PLANE};
    const int64_t fcb_dims[1] = {CLASSES};
    const float ones[CHANNELS] = {1, 1}, zeros[CHANNELS] = {0, 0}, ratio = 0.25f;
    const uint8_t yes = 1;
    float fc[CLASSES * CHANNELS * PLANE], fc_b[CLASSES] = {0, 0, 0};
    for (int i = 0; i < CLASSES * CHANNELS * PLANE; i++)
        fc[i] = (float)((i * 7) % 11 - 5) / 10.0f;
    onnx_builder b;
    onnx_builder_init(&b, 15);
    onnx_builder_input(&b, "x", F32, 4, x_dims, NULL);
    onnx_builder_initializer(&b, "c.weight", F32, 4, w_dims, conv_w, sizeof conv_w);
    onnx_builder_initializer(&b, "c.bias", F32, 1, c_dims, conv_b, sizeof conv_b);
    onnx_builder_initializer(&b, "bn.weight", F32, 1, c_dims, ones, sizeof ones);
    onnx_builder_initializer(&b, "bn.bias", F32, 1, c_dims, zeros, sizeof zeros);
    if (f->stats_as_inputs) {
        onnx_builder_input(&b, "bn.running_mean", F32, 1, c_dims, NULL);
        onnx_builder_input(&b, "bn.running_var", F32, 1, c_dims, NULL);
    } else {
        onnx_builder_initializer(&b, "bn.running_mean", F32, 1, c_dims, mean0,
                                 sizeof mean0);
        onnx_builder_initializer(&b, "bn.running_var", F32, 1, c_dims, var0,
                                 sizeof var0);
    }
    onnx_builder_initializer(&b, "fc.weight", F32, 2, fc_dims, fc, sizeof fc);
    onnx_builder_initializer(&b, "fc.bias", F32, 1, fcb_dims, fc_b, sizeof fc_b);
    onnx_builder_initializer(&b, "ratio", F32, 0, NULL, &ratio, sizeof ratio);
    onnx_builder_initializer(&b, "training", BOOL, 0, NULL, &yes, 1);
    onnx_builder_node(&b, "Conv", "/c/Conv",
                      (const char *[]){"x", "c.weight", "c.bias", NULL},
                      (const char *[]){"conv", NULL});
    Onnx__NodeProto *bn = onnx_builder_node(
        &b, "BatchNormalization", "/bn/BatchNormalization",
        (const char *[]){"conv", "bn.weight", "bn.bias", "bn.running_mean",
                         "bn.running_var", NULL},
        f->training_mode ? (const char *[]){"bn", "bn_mean", "bn_var", NULL}
                         : (const char *[]){"bn", NULL});
    onnx_builder_attr_float(bn, "momentum", f->momentum);
    onnx_builder_attr_float(bn, "epsilon", 1e-5f);
    if (f->training_mode)
        onnx_builder_attr_int(bn, "training_mode", 1);
    onnx_builder_node(&b, "Relu", "/Relu", (const char *[]){"bn", NULL},
                      (const char *[]){"relu", NULL});
    onnx_builder_node(&b, "Dropout", "/d/Dropout",
                      (const char *[]){"relu", "ratio", "training", NULL},
                      (const char *[]){"dropped", "mask", NULL});
    onnx_builder_attr_int(onnx_builder_node(&b, "Flatten", "/Flatten",
                                            (const char *[]){"dropped", NULL},
                                            (const char *[]){"flat", NULL}),
                          "axis", 1);
    onnx_builder_attr_int(onnx_builder_node(&b, "Gemm", "/fc/Gemm",
                                            (const char *[]){"flat", "fc.weight",
                                                             "fc.bias", NULL},
                                            (const char *[]){"logits", NULL}),
                          "transB", 1);
    onnx_builder_output(&b, "logits");
    uint8_t *bytes = onnx_builder_pack(&b, size);
    onnx_builder_free(&b);
    return bytes;
}

static dfg_status compile_training(const bn_form *f, dfg_program **out)
{
    size_t size;
    uint8_t *bytes = model_bytes(f, &size);
    dfg_graph *g = NULL;
    int64_t classes = CLASSES;
    dfg_status st = dfg_onnx_import_memory(bytes, size, NULL, NULL, &g);
    free(bytes);
    if (st == DFG_OK)
        st = dfg_graph_add_loss(g, DFG_LOSS_CROSS_ENTROPY, &classes);
    dfg_training_options t;
    dfg_compile_options o;
    training_compile_options(&t, &o);
    t.learning_rate = 0.1f;
    if (st == DFG_OK)
        st = dfg_compile(g, &o, out);
    dfg_graph_destroy(g);
    return st;
}

/* The session's current copy of the weight called name (n floats). */
static const float *weight_of(const dfg_program *p, dfg_session *s,
                              const char *name, int64_t n)
{
    void *region;
    size_t bytes;
    assert_int_equal(dfg_session_weights_region(s, &region, &bytes), DFG_OK);
    for (int32_t i = 0; i < p->n_tensors; i++) {
        const dfg_program_tensor *t = &p->tensors[i];
        if (t->region == DFG_REGION_WEIGHTS && strcmp(t->name, name) == 0) {
            assert_int_equal(t->bytes, n * (int64_t)sizeof(float));
            return (const float *)((const char *)region + t->offset);
        }
    }
    fail_msg("no weight '%s' in the program", name);
    return NULL;
}

/* The running statistics after one step on x from conv weights w, b
 * (channel c of the conv is w[c] x + b[c]) with the form's momentum and
 * variance. */
static void expected_running(const float *x, const float *w, const float *b,
                             const bn_form *f, const float *mean,
                             const float *var, double *mean_out,
                             double *var_out)
{
    const double momentum = f->training_mode ? f->momentum : 0.9;
    const int m = BATCH * PLANE;
    double sum = 0.0, squares = 0.0;
    for (int i = 0; i < m; i++)
        sum += x[i];
    for (int i = 0; i < m; i++)
        squares += (x[i] - sum / m) * (x[i] - sum / m);
    for (int c = 0; c < CHANNELS; c++) {
        double batch_mean = w[c] * sum / m + b[c];
        double batch_var = (double)w[c] * w[c] * squares /
                           (f->training_mode ? m : m - 1);
        mean_out[c] = momentum * mean[c] + (1.0 - momentum) * batch_mean;
        var_out[c] = momentum * var[c] + (1.0 - momentum) * batch_var;
    }
}

static void expect_near(const float *got, const double *want, const char *what)
{
    for (int c = 0; c < CHANNELS; c++)
        if (fabs(got[c] - want[c]) > 1e-5 * (1.0 + fabs(want[c])))
            fail_msg("%s[%d] = %.8g, the formula gives %.8g", what, c,
                     (double)got[c], want[c]);
}

/* Trains steps steps on a fixed batch; each step's running statistics
 * follow the formula; the loss goes down. */
static void train_and_check(const bn_form *f, int steps)
{
    dfg_program *p;
    assert_int_equal(compile_training(f, &p), DFG_OK);
    const dfg_backend *cpu;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    dfg_session *s;
    assert_int_equal(dfg_session_create(p, cpu, NULL, &s), DFG_OK);
    float x[BATCH * PLANE], loss = 0.0f, first_loss = 0.0f;
    int64_t labels[BATCH];
    for (int i = 0; i < BATCH * PLANE; i++)
        x[i] = (float)((i * 13) % 17) / 8.0f - 1.0f;
    for (int i = 0; i < BATCH; i++)
        labels[i] = i % CLASSES;
    float mean[CHANNELS], var[CHANNELS], w[CHANNELS], b[CHANNELS];
    memcpy(mean, mean0, sizeof mean);
    memcpy(var, var0, sizeof var);
    for (int step = 1; step <= steps; step++) {
        /* The conv weights this step reads: the last step's update. */
        memcpy(w, weight_of(p, s, "c.weight", CHANNELS), sizeof w);
        memcpy(b, weight_of(p, s, "c.bias", CHANNELS), sizeof b);
        double want_mean[CHANNELS], want_var[CHANNELS];
        expected_running(x, w, b, f, mean, var, want_mean, want_var);
        const void *in[2] = {x, labels};
        assert_int_equal(dfg_session_run(s, in, NULL), DFG_OK);
        void *out;
        assert_int_equal(dfg_session_output_buffer(s, 0, &out), DFG_OK);
        loss = *(const float *)out;
        if (step == 1)
            first_loss = loss;
        memcpy(mean, weight_of(p, s, "bn.running_mean", CHANNELS), sizeof mean);
        memcpy(var, weight_of(p, s, "bn.running_var", CHANNELS), sizeof var);
        expect_near(mean, want_mean, "running_mean");
        expect_near(var, want_var, "running_var");
    }
    assert_true(isfinite(loss) && loss < first_loss);
    dfg_session_destroy(s);
    dfg_program_destroy(p);
}

static void test_training_mode_export_trains(void **state)
{
    (void)state;
    const bn_form f = {.training_mode = 1, .momentum = 0.8f};
    train_and_check(&f, 12);
}

/* Eval-mode export: its momentum attribute is not a training node's; the
 * training step keeps dfg's default, 0.9, and the unbiased variance, as
 * before. */
static void test_eval_mode_export_trains_as_before(void **state)
{
    (void)state;
    const bn_form f = {.training_mode = 0, .momentum = 0.8f};
    train_and_check(&f, 12);
}

/* Running statistics that are not initializers are no state to update;
 * momentum 1 (never updated) is refused too: clear errors at import. */
static void test_training_mode_refusals(void **state)
{
    (void)state;
    dfg_program *p = NULL;
    const bn_form inputs = {.training_mode = 1, .stats_as_inputs = 1,
                            .momentum = 0.9f};
    assert_int_equal(compile_training(&inputs, &p), DFG_ERR_UNSUPPORTED);
    assert_non_null(strstr(dfg_last_error(), "must be initializers"));
    const bn_form frozen = {.training_mode = 1, .momentum = 1.0f};
    assert_int_equal(compile_training(&frozen, &p), DFG_ERR_UNSUPPORTED);
    assert_non_null(strstr(dfg_last_error(), "momentum 1 is not supported"));
    assert_null(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_training_mode_export_trains),
        cmocka_unit_test(test_eval_mode_export_trains_as_before),
        cmocka_unit_test(test_training_mode_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
