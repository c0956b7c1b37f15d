/* A trained model saved as ONNX (include/dfg/onnx_save.h): a small
 * convolution, batch norm and Gemm classifier built here is trained a few
 * Adam steps; the saved model, imported again, gives the outputs of the
 * original graph given the trained weights by dfg_session_copy_weights
 * (running statistics included), which differ from the untrained ones.
 * A malformed model file is refused. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "dfg/dfg.h"
#include "tests/support/onnx_builder.h"
#include "tests/support/onnx_run.h"
#include "tests/support/scratch_dir.h"

#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT

enum { N = 4, C = 2, H = 4, OC = 3, CLASSES = 5, X = N * C * H * H };

static void initializer(onnx_builder *b, const char *name, int rank,
                        const int64_t *dims, float offset)
{
    int64_t n = onnx_run_numel(rank, dims);
    float *data = onnx_run_random_floats(n);
    for (int64_t i = 0; i < n; i++)
        data[i] += offset;
    onnx_builder_initializer(b, name, F32, rank, dims, data,
                             (size_t)n * sizeof *data);
    free(data);
}

/* y = Gemm(Flatten(Relu(BatchNorm(Conv(x)))), W2, b2, transB). */
static void build(onnx_builder *b)
{
    onnx_builder_init(b, 13);
    onnx_builder_input(b, "x", F32, 4, (const int64_t[]){N, C, H, H}, NULL);
    initializer(b, "W", 4, (const int64_t[]){OC, C, 3, 3}, 0.0f);
    initializer(b, "B", 1, (const int64_t[]){OC}, 0.0f);
    initializer(b, "scale", 1, (const int64_t[]){OC}, 1.5f);
    initializer(b, "shift", 1, (const int64_t[]){OC}, 0.0f);
    initializer(b, "mean", 1, (const int64_t[]){OC}, 0.0f);
    initializer(b, "var", 1, (const int64_t[]){OC}, 2.0f);
    initializer(b, "W2", 2, (const int64_t[]){CLASSES, OC * H * H}, 0.0f);
    initializer(b, "b2", 1, (const int64_t[]){CLASSES}, 0.0f);
    Onnx__NodeProto *conv = onnx_builder_node(
        b, "Conv", "conv", (const char *[]){"x", "W", "B", NULL},
        (const char *[]){"c", NULL});
    onnx_builder_attr_ints(conv, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    onnx_builder_node(b, "BatchNormalization", "bn",
                      (const char *[]){"c", "scale", "shift", "mean", "var",
                                       NULL},
                      (const char *[]){"n", NULL});
    onnx_builder_node(b, "Relu", "relu", (const char *[]){"n", NULL},
                      (const char *[]){"r", NULL});
    onnx_builder_node(b, "Flatten", "flat", (const char *[]){"r", NULL},
                      (const char *[]){"f", NULL});
    Onnx__NodeProto *gemm = onnx_builder_node(
        b, "Gemm", "gemm", (const char *[]){"f", "W2", "b2", NULL},
        (const char *[]){"y", NULL});
    onnx_builder_attr_int(gemm, "transB", 1);
    onnx_builder_output(b, "y");
}

static dfg_session *session_of(const char *path, int training)
{
    dfg_graph *g;
    assert_int_equal(dfg_onnx_import_file(path, NULL, NULL, &g), DFG_OK);
    dfg_training_options t;
    dfg_training_options_init(&t);
    t.optimizer = DFG_OPTIMIZER_ADAM;
    t.learning_rate = 0.05f;
    t.loss = "loss";
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    o.share_weights = 0;
    if (training) {
        int64_t classes = 0;
        assert_int_equal(dfg_graph_add_loss(g, DFG_LOSS_CROSS_ENTROPY,
                                            &classes), DFG_OK);
        o.training = &t;
    }
    dfg_program *p;
    assert_int_equal(dfg_compile(g, &o, &p), DFG_OK);
    dfg_graph_destroy(g);
    const dfg_backend *cpu;
    dfg_session *s;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    assert_int_equal(dfg_session_create(p, cpu, NULL, &s), DFG_OK);
    return s;
}

static void destroy(dfg_session *s)
{
    const dfg_program *p = dfg_session_program(s);
    dfg_session_destroy(s);
    dfg_program_destroy((dfg_program *)p);
}

static void run(dfg_session *s, const float *x, float *y)
{
    const void *inputs[1] = {x};
    void *outputs[1] = {y};
    assert_int_equal(dfg_session_run(s, inputs, outputs), DFG_OK);
}

static double max_difference(const float *a, const float *b, int n)
{
    double most = 0.0;
    for (int i = 0; i < n; i++)
        most = fmax(most, fabs((double)a[i] - b[i]));
    return most;
}

static void test_saved_model_gives_the_trained_outputs(void **state)
{
    (void)state;
    onnx_builder b;
    build(&b);
    size_t size;
    uint8_t *bytes = onnx_builder_pack(&b, &size);
    onnx_builder_free(&b);
    const char *model = scratch_path("model.onnx");
    scratch_write(model, bytes, size);
    free(bytes);

    dfg_session *train = session_of(model, 1);
    float *x = onnx_run_random_floats(X);
    int64_t labels[N] = {0, 3, 1, 4};
    const void *inputs[2] = {x, labels};
    for (int step = 0; step < 5; step++)
        assert_int_equal(dfg_session_run(train, inputs, NULL), DFG_OK);
    void *weights;
    size_t weights_bytes;
    assert_int_equal(dfg_session_weights_region(train, &weights,
                                                &weights_bytes), DFG_OK);
    int32_t replaced = 0;
    const char *saved = scratch_path("trained.onnx");
    assert_int_equal(dfg_onnx_save_trained(model, dfg_session_program(train),
                                           weights, saved, &replaced), DFG_OK);
    /* Every initializer: the weights, the bias, the batch norm's scale and
     * shift, and its running mean and variance, updated in place. */
    assert_int_equal(replaced, 8);

    float untrained[N * CLASSES], copied[N * CLASSES], reloaded[N * CLASSES];
    dfg_session *original = session_of(model, 0);
    run(original, x, untrained);
    int32_t count = 0;
    assert_int_equal(dfg_session_copy_weights(original, train, &count), DFG_OK);
    assert_int_equal(count, 8);
    run(original, x, copied);
    dfg_session *again = session_of(saved, 0);
    run(again, x, reloaded);
    assert_true(max_difference(copied, reloaded, N * CLASSES) <= 1e-4);
    assert_true(max_difference(copied, untrained, N * CLASSES) > 1e-2);

    /* Not an ONNX model: refused, nothing written. */
    scratch_write(scratch_path("junk.onnx"), "\xff\xff\xff", 3);
    assert_int_not_equal(dfg_onnx_save_trained(scratch_path("junk.onnx"),
                                               dfg_session_program(train),
                                               weights, scratch_path("out"),
                                               NULL), DFG_OK);
    assert_null(fopen(scratch_path("out"), "rb"));
    free(x);
    destroy(again);
    destroy(original);
    destroy(train);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_saved_model_gives_the_trained_outputs),
    };
    return cmocka_run_group_tests(tests, scratch_dir_setup,
                                  scratch_dir_teardown);
}
