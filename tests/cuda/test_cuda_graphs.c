/* The CUDA backend with CUDA graphs on and off (suite 'cuda'): the same
 * outputs bit for bit, a training session's weights untouched by the
 * warm-up before the capture, byte for byte, a program whose zeroed
 * warm-up computes an index out of range still created, an index out of
 * range in a run reported and cleared, an error another caller left
 * pending not taken for the session's own, and a session created on one
 * device run from a thread whose current device is another (when there
 * are two).
 *
 * Exits 77 (skipped), saying why, when the backend is not built or cannot
 * run here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dfg/dfg.h"
#include "program/program.h"
#include "tests/cuda/cuda_test_device.h"
#ifdef DFG_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static const dfg_backend *backend(const char *name)
{
    const dfg_backend *b = NULL;
    assert_int_equal(dfg_backend_find(name, &b), DFG_OK);
    return b;
}

static dfg_session *session_with_graphs(const dfg_program *p, int graphs)
{
    setenv("DFG_CUDA_GRAPHS", graphs ? "1" : "0", 1);
    dfg_session *s = NULL;
    if (dfg_session_create(p, backend("cuda"), NULL, &s) != DFG_OK)
        fail_msg("cuda session (graphs %d): %s", graphs, dfg_last_error());
    unsetenv("DFG_CUDA_GRAPHS");
    return s;
}

static size_t tensor_bytes(const dfg_tensor_info *t)
{
    size_t n = dfg_dtype_size(t->dtype);
    for (int32_t d = 0; d < t->rank; d++)
        n *= (size_t)t->shape[d];
    return n;
}

/* Every output of one run, concatenated (malloc'ed; *bytes its size). */
static uint8_t *run_outputs(const dfg_program *p, dfg_session *s,
                            void *const *inputs, size_t *bytes)
{
    int32_t n = dfg_program_num_outputs(p);
    void **outs = calloc((size_t)n + 1, sizeof *outs);
    size_t total = 0;
    for (int32_t i = 0; i < n; i++) {
        dfg_tensor_info info;
        assert_int_equal(dfg_program_output_info(p, i, &info), DFG_OK);
        outs[i] = (void *)(uintptr_t)total; /* offsets until allocated */
        total += tensor_bytes(&info);
    }
    uint8_t *all = calloc(1, total + 1);
    for (int32_t i = 0; i < n; i++)
        outs[i] = all + (uintptr_t)outs[i];
    if (dfg_session_run(s, (const void *const *)inputs, outs) != DFG_OK)
        fail_msg("run: %s", dfg_last_error());
    free(outs);
    *bytes = total;
    return all;
}

/* A program whose outputs are the trainable weights of `training`, and
 * the bytes those weights start with. */
static dfg_program *weights_reader(const dfg_program *training,
                                   uint8_t **initial, size_t *bytes)
{
    dfg_graph *g = NULL;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    size_t total = 0;
    for (int32_t i = 0; i < training->n_tensors; i++) {
        const dfg_program_tensor *t = &training->tensors[i];
        if (t->kind == DFG_TENSOR_WEIGHT && t->alias_of < 0)
            total += (size_t)t->bytes;
    }
    *initial = calloc(1, total + 1);
    *bytes = total;
    size_t at = 0;
    for (int32_t i = 0; i < training->n_tensors; i++) {
        const dfg_program_tensor *t = &training->tensors[i];
        if (t->kind != DFG_TENSOR_WEIGHT || t->alias_of >= 0)
            continue;
        const uint8_t *data = t->data;
        memcpy(*initial + at, data, (size_t)t->bytes);
        at += (size_t)t->bytes;
        dfg_value w, y;
        assert_int_equal(dfg_graph_weight(g, t->name, t->type.dtype,
                                          t->type.rank, t->type.shape, data,
                                          &w), DFG_OK);
        dfg_attrs a;
        dfg_attrs_init(&a);
        /* mul by 1, not identity: an output must be a tensor of its own. */
        const float one = 1.0f;
        dfg_value c;
        char name[256];
        snprintf(name, sizeof name, "one_%d", (int)i);
        assert_int_equal(dfg_graph_constant(g, name, DFG_F32, 0, NULL, &one,
                                            &c), DFG_OK);
        const dfg_value in[2] = {w, c};
        assert_int_equal(dfg_graph_node(g, "mul", NULL, in, 2, &a, &y, 1),
                         DFG_OK);
        assert_int_equal(dfg_graph_output(g, y, NULL), DFG_OK);
    }
    dfg_program *p = NULL;
    if (dfg_compile(g, NULL, &p) != DFG_OK)
        fail_msg("weights reader: %s", dfg_last_error());
    dfg_graph_destroy(g);
    return p;
}

/* The trainable weights a session holds now, through a CPU session. */
static uint8_t *weights_of(const dfg_program *reader, dfg_session *s,
                           size_t *bytes)
{
    dfg_session *cpu = NULL;
    assert_int_equal(dfg_session_create(reader, backend("cpu"), NULL, &cpu),
                     DFG_OK);
    assert_int_equal(dfg_session_copy_weights(cpu, s, NULL), DFG_OK);
    uint8_t *w = run_outputs(reader, cpu, NULL, bytes);
    dfg_session_destroy(cpu);
    return w;
}

static void **seeded_inputs(const dfg_program *p, int labels)
{
    int32_t n = dfg_program_num_inputs(p);
    void **in = calloc((size_t)n + 1, sizeof *in);
    uint32_t state = 12345;
    for (int32_t i = 0; i < n; i++) {
        dfg_tensor_info info;
        assert_int_equal(dfg_program_input_info(p, i, &info), DFG_OK);
        size_t bytes = tensor_bytes(&info);
        in[i] = calloc(1, bytes + 1);
        size_t count = bytes / dfg_dtype_size(info.dtype);
        for (size_t e = 0; e < count; e++) {
            state = state * 1664525u + 1013904223u;
            if (info.dtype == DFG_F32)
                ((float *)in[i])[e] = (float)(state >> 8) / 16777216.0f - 0.5f;
            else if (info.dtype == DFG_I64)
                ((int64_t *)in[i])[e] = labels ? (int64_t)(state >> 8) % 10 : 0;
        }
    }
    return in;
}

static void free_inputs(const dfg_program *p, void **in)
{
    for (int32_t i = 0; i < dfg_program_num_inputs(p); i++)
        free(in[i]);
    free(in);
}

static void test_inference_bitwise(void **state)
{
    (void)state;
    for (const char *const *name = dfg_model_names(); *name; name++) {
        dfg_graph *g = NULL;
        dfg_program *p = NULL;
        assert_int_equal(dfg_model_build(*name, NULL, &g), DFG_OK);
        dfg_compile_options o;
        cuda_test_compile_options(&o);
        assert_int_equal(dfg_compile(g, &o, &p), DFG_OK);
        dfg_graph_destroy(g);
        void **in = seeded_inputs(p, 0);
        dfg_session *on = session_with_graphs(p, 1);
        dfg_session *off = session_with_graphs(p, 0);
        size_t n_on, n_off;
        for (int r = 0; r < 2; r++) {
            uint8_t *a = run_outputs(p, on, in, &n_on);
            uint8_t *b = run_outputs(p, off, in, &n_off);
            assert_int_equal(n_on, n_off);
            if (memcmp(a, b, n_on) != 0)
                fail_msg("%s: outputs differ with graphs on and off", *name);
            free(a);
            free(b);
        }
        dfg_session_destroy(on);
        dfg_session_destroy(off);
        free_inputs(p, in);
        dfg_program_destroy(p);
    }
}

static void test_training_bitwise(void **state)
{
    (void)state;
    static const char *const models[] = {"mlp", "cnn"};
    for (int m = 0; m < 2; m++) {
        dfg_graph *g = NULL;
        assert_int_equal(dfg_model_build_training(models[m], NULL, &g), DFG_OK);
        dfg_training_options t;
        dfg_training_options_init(&t);
        t.loss = "loss";
        t.optimizer = DFG_OPTIMIZER_ADAM;
        dfg_compile_options o;
        dfg_compile_options_init(&o);
        o.training = &t;
        dfg_program *p = NULL;
        if (dfg_compile(g, &o, &p) != DFG_OK)
            fail_msg("%s", dfg_last_error());
        dfg_graph_destroy(g);
        uint8_t *initial;
        size_t n_initial, n;
        dfg_program *reader = weights_reader(p, &initial, &n_initial);
        dfg_session *on = session_with_graphs(p, 1);
        dfg_session *off = session_with_graphs(p, 0);
        /* The warm-up ran every step, optimizer updates included, and put
         * back what they wrote. */
        uint8_t *w = weights_of(reader, on, &n);
        assert_int_equal(n, n_initial);
        if (memcmp(w, initial, n) != 0)
            fail_msg("%s: the warm-up changed the weights", models[m]);
        free(w);
        void **in = seeded_inputs(p, 1);
        for (int r = 0; r < 3; r++) {
            size_t n_on, n_off;
            uint8_t *a = run_outputs(p, on, in, &n_on);
            uint8_t *b = run_outputs(p, off, in, &n_off);
            if (n_on != n_off || memcmp(a, b, n_on) != 0)
                fail_msg("%s: run %d differs with graphs on and off",
                         models[m], r);
            free(a);
            free(b);
        }
        uint8_t *w_on = weights_of(reader, on, &n);
        uint8_t *w_off = weights_of(reader, off, &n);
        if (memcmp(w_on, w_off, n) != 0)
            fail_msg("%s: trained weights differ with graphs on and off",
                     models[m]);
        /* The reader sees the updates (it would miss a change otherwise). */
        assert_true(memcmp(w_on, initial, n) != 0);
        free(w_on);
        free(w_off);
        free(initial);
        free_inputs(p, in);
        dfg_session_destroy(on);
        dfg_session_destroy(off);
        dfg_program_destroy(reader);
        dfg_program_destroy(p);
    }
}

/* gather(data, idx + 9): the warm-up's zeroed idx makes index 9, out of
 * range for 4 rows; real inputs are in range. */
static dfg_program *shifted_gather(void)
{
    dfg_graph *g = NULL;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    const int64_t data_shape[2] = {4, 3}, idx_shape[1] = {2};
    const int64_t nine = 9;
    dfg_value data, idx, shift, shifted, out;
    assert_int_equal(dfg_graph_input(g, "data", DFG_F32, 2, data_shape, &data), DFG_OK);
    assert_int_equal(dfg_graph_input(g, "idx", DFG_I64, 1, idx_shape, &idx), DFG_OK);
    assert_int_equal(dfg_graph_constant(g, "nine", DFG_I64, 0, NULL, &nine,
                                        &shift), DFG_OK);
    dfg_attrs a;
    dfg_attrs_init(&a);
    const dfg_value sum[2] = {idx, shift};
    assert_int_equal(dfg_graph_node(g, "add", NULL, sum, 2, &a, &shifted, 1), DFG_OK);
    const dfg_value in[2] = {data, shifted};
    assert_int_equal(dfg_graph_node(g, "gather", NULL, in, 2, &a, &out, 1), DFG_OK);
    assert_int_equal(dfg_graph_output(g, out, NULL), DFG_OK);
    dfg_program *p = NULL;
    assert_int_equal(dfg_compile(g, NULL, &p), DFG_OK);
    dfg_graph_destroy(g);
    return p;
}

static void test_warm_up_status_cleared(void **state)
{
    (void)state;
    dfg_program *p = shifted_gather();
    float data[12], result[2][6];
    for (int i = 0; i < 12; i++)
        data[i] = (float)i;
    int64_t idx[2] = {-8, -7}; /* rows 1 and 2 */
    const void *inputs[2] = {data, idx};
    for (int graphs = 0; graphs < 2; graphs++) {
        dfg_session *s = session_with_graphs(p, graphs);
        void *outputs[1] = {result[graphs]};
        if (dfg_session_run(s, inputs, outputs) != DFG_OK)
            fail_msg("graphs %d: %s", graphs, dfg_last_error());
        assert_true(result[graphs][0] == 3.0f && result[graphs][5] == 8.0f);
        dfg_session_destroy(s);
    }
    dfg_program_destroy(p);
}

/* An index out of range is the run's error, with graphs on and off, and
 * clears: the next run succeeds. */
static void test_index_out_of_range(void **state)
{
    (void)state;
    dfg_program *p = shifted_gather();
    float data[12] = {0}, result[6];
    int64_t bad[2] = {-8, 0}, good[2] = {-10, -7}; /* rows 1, 9; -1, 2 */
    const void *inputs[2] = {data, bad};
    void *outputs[1] = {result};
    for (int graphs = 0; graphs < 2; graphs++) {
        dfg_session *s = session_with_graphs(p, graphs);
        inputs[1] = bad;
        assert_int_not_equal(dfg_session_run(s, inputs, outputs), DFG_OK);
        assert_non_null(strstr(dfg_last_error(), "out of range"));
        inputs[1] = good;
        if (dfg_session_run(s, inputs, outputs) != DFG_OK)
            fail_msg("graphs %d, after the error: %s", graphs,
                     dfg_last_error());
        dfg_session_destroy(s);
    }
    dfg_program_destroy(p);
}

#ifdef DFG_HAVE_CUDA
static void test_pending_error_not_ours(void **state)
{
    (void)state;
    dfg_program *p = shifted_gather();
    dfg_session *s = session_with_graphs(p, 0);
    /* Another caller's failed allocation leaves cudaErrorMemoryAllocation
     * pending on this thread. */
    void *huge = NULL;
    assert_int_not_equal(cudaMalloc(&huge, (size_t)1 << 62), cudaSuccess);
    float data[12] = {0}, result[6];
    int64_t idx[2] = {-9, -8};
    const void *inputs[2] = {data, idx};
    void *outputs[1] = {result};
    if (dfg_session_run(s, inputs, outputs) != DFG_OK)
        fail_msg("a pending error was taken for the run's: %s",
                 dfg_last_error());
    dfg_session_destroy(s);
    dfg_program_destroy(p);
}

static void test_other_thread_device(void **state)
{
    (void)state;
    int count = 0;
    assert_int_equal(cudaGetDeviceCount(&count), cudaSuccess);
    if (count < 2)
        skip(); /* needs two devices */
    dfg_program *p = shifted_gather();
    assert_int_equal(cudaSetDevice(1), cudaSuccess);
    dfg_session *s = session_with_graphs(p, 1);
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
    float data[12] = {0}, result[6];
    int64_t idx[2] = {-9, -8};
    const void *inputs[2] = {data, idx};
    void *outputs[1] = {result};
    if (dfg_session_run(s, inputs, outputs) != DFG_OK)
        fail_msg("run from device 0: %s", dfg_last_error());
    int current = -1;
    assert_int_equal(cudaGetDevice(&current), cudaSuccess);
    assert_int_equal(current, 0); /* the caller's device given back */
    dfg_session_destroy(s);
    dfg_program_destroy(p);
}
#endif

int main(void)
{
    int ready = cuda_test_device_ready();
    if (ready != 0)
        return ready;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inference_bitwise),
        cmocka_unit_test(test_training_bitwise),
        cmocka_unit_test(test_warm_up_status_cleared),
        cmocka_unit_test(test_index_out_of_range),
#ifdef DFG_HAVE_CUDA
        cmocka_unit_test(test_pending_error_not_ours),
        cmocka_unit_test(test_other_thread_device),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
