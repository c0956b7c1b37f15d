/* The predicted process peak (include/dfg/memory_predict.h) and compiling
 * under a limit (include/dfg/memory_limit.h): invariants, not one CPU's
 * figures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "dfg/dfg.h"

static void test_parse_bytes(void **state)
{
    (void)state;
    uint64_t b = 0;
    assert_int_equal(dfg_parse_bytes("123", &b), 0);
    assert_int_equal(b, 123);
    assert_int_equal(dfg_parse_bytes("130MiB", &b), 0);
    assert_int_equal(b, (uint64_t)130 << 20);
    assert_int_equal(dfg_parse_bytes("2GiB", &b), 0);
    assert_int_equal(b, (uint64_t)2 << 30);
    assert_int_equal(dfg_parse_bytes("4KiB", &b), 0);
    assert_int_equal(b, 4096);
    const char *bad[] = {"", "0", "0MiB", "12MB", "-1", "MiB", "1.5GiB",
                         "99999999999999GiB", "7 MiB", NULL};
    for (int i = 0; bad[i]; i++)
        assert_int_equal(dfg_parse_bytes(bad[i], &b), -1);
    assert_int_equal(dfg_parse_bytes(NULL, &b), -1);
}

static dfg_graph *cnn(void)
{
    dfg_graph *g = NULL;
    assert_int_equal(dfg_model_build("cnn", NULL, &g), DFG_OK);
    return g;
}

static dfg_program *compiled(const dfg_graph *g)
{
    dfg_program *p = NULL;
    assert_int_equal(dfg_compile(g, NULL, &p), DFG_OK);
    return p;
}

static const dfg_backend *cpu_backend(void)
{
    const dfg_backend *cpu = NULL;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    return cpu;
}

/* The peak is the sum of its parts, and the parts hold what the plan
 * and the program say. */
static void test_prediction_parts(void **state)
{
    (void)state;
    dfg_graph *g = cnn();
    dfg_program *p = compiled(g);
    const dfg_backend *cpu = cpu_backend();
    dfg_memory_prediction m;
    assert_int_equal(dfg_memory_predict(p, cpu, &m), DFG_OK);
    dfg_plan_stats st;
    dfg_program_stats(p, &st);
    assert_int_equal(m.arena_bytes, st.arena_bytes);
    assert_true(m.process_bytes > 0);
    assert_true(m.runtime_code_bytes > 0);
    assert_true(m.weights_bytes + m.replaced_plain_bytes >=
                st.weights_bytes);
    assert_true(m.io_bytes > 0);
    uint64_t larger = m.arena_bytes > m.creation_bytes ? m.arena_bytes
                                                       : m.creation_bytes;
    assert_int_equal(m.peak_bytes,
                     m.process_bytes + m.runtime_code_bytes + m.thread_bytes +
                         m.runtime_heap_bytes + m.held_heap_bytes +
                         m.freed_heap_bytes +
                         m.weights_bytes + larger + m.io_bytes +
                         m.caller_bytes);
    char line[512];
    assert_non_null(strstr(dfg_memory_prediction_format(&m, line, sizeof line),
                           "MiB = process"));
    /* The probe session is gone: its copies are released. */
    dfg_session *s = NULL;
    assert_int_equal(dfg_session_create(p, cpu, NULL, &s), DFG_OK);
    dfg_memory_prediction live;
    assert_int_equal(dfg_session_memory_predict(s, 1, &live), DFG_OK);
    assert_int_equal(live.arena_bytes, m.arena_bytes);
    assert_int_equal(live.weight_copy_bytes, m.weight_copy_bytes);
    /* This process's peak so far bounds its peak from below; a process
     * of its own (dfg_memory_predict) has reached nothing yet. */
    assert_int_equal(m.reached_bytes, 0);
    assert_true(live.reached_bytes > 0);
    assert_true(live.reached_bytes <= dfg_process_peak_resident_bytes());
    assert_true(live.peak_bytes >= live.reached_bytes);
    /* Its creation's peak is measured in what it reached: the sum takes
     * the arena alone. */
    uint64_t steady = live.process_bytes + live.runtime_code_bytes +
                      live.thread_bytes + live.runtime_heap_bytes +
                      live.held_heap_bytes + live.freed_heap_bytes +
                      live.weights_bytes + live.io_bytes +
                      live.caller_bytes + live.arena_bytes;
    assert_int_equal(live.peak_bytes, steady > live.reached_bytes
                                          ? steady
                                          : live.reached_bytes);
    live.reached_bytes = live.peak_bytes + ((uint64_t)1 << 30);
    dfg_memory_prediction_total(&live);
    assert_int_equal(live.peak_bytes, live.reached_bytes);
    assert_non_null(strstr(dfg_memory_prediction_format(&live, line,
                                                        sizeof line),
                           "reached"));
    dfg_session_destroy(s);
    assert_int_equal(dfg_memory_predict(NULL, cpu, &m),
                     DFG_ERR_INVALID_ARGUMENT);
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
}

/* A limit no plan meets fails before running, naming the excess; one
 * every plan meets keeps the plan as given. */
static void test_compile_within(void **state)
{
    (void)state;
    dfg_graph *g = cnn();
    const dfg_backend *cpu = cpu_backend();
    dfg_program *p = NULL;
    dfg_memory_prediction m;
    assert_int_equal(dfg_compile_within(g, NULL, cpu, 1 << 20, &p, &m),
                     DFG_ERR_PLAN);
    assert_null(p);
    assert_non_null(strstr(dfg_last_error(), "memory limit 1.0 MiB"));
    assert_non_null(strstr(dfg_last_error(), "MiB over"));
    uint64_t generous = (uint64_t)64 << 30;
    assert_int_equal(dfg_compile_within(g, NULL, cpu, generous, &p, &m),
                     DFG_OK);
    assert_non_null(p);
    assert_true(m.peak_bytes <= generous);
    dfg_program_destroy(p);
    assert_int_equal(dfg_compile_within(NULL, NULL, cpu, 1, &p, &m),
                     DFG_ERR_INVALID_ARGUMENT);
    dfg_graph_destroy(g);
}

/* What the caller holds on the heap when the session is made is in the
 * prediction (held heap): 8 MiB more in small blocks the caller wrote
 * raise it by at least that much. glibc's heap counts it: not under
 * AddressSanitizer (DFG_TEST_SANITIZED, tests/meson.build). */
static void test_held_heap(void **state)
{
    (void)state;
#ifdef DFG_TEST_SANITIZED
    skip(); /* the sanitizer's allocator keeps no counts glibc reports */
#endif
    dfg_graph *g = cnn();
    dfg_program *p = compiled(g);
    const dfg_backend *cpu = cpu_backend();
    dfg_memory_prediction without, with;
    assert_int_equal(dfg_memory_predict(p, cpu, &without), DFG_OK);
    assert_true(without.held_heap_bytes > 0); /* the program, the graph */
    enum { BLOCKS = 4096, BLOCK = 2048 };
    char **held = calloc(BLOCKS, sizeof *held);
    assert_non_null(held);
    for (int i = 0; i < BLOCKS; i++) {
        held[i] = malloc(BLOCK);
        assert_non_null(held[i]);
        memset(held[i], i & 0xff, BLOCK);
    }
    assert_int_equal(dfg_memory_predict(p, cpu, &with), DFG_OK);
    assert_true(with.held_heap_bytes >=
                without.held_heap_bytes + (uint64_t)BLOCKS * BLOCK);
    assert_true(with.peak_bytes >= without.peak_bytes +
                                       (uint64_t)BLOCKS * BLOCK -
                                       without.freed_heap_bytes);
    for (int i = 0; i < BLOCKS; i++)
        free(held[i]);
    free(held);
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
}

/* What a product step's kernel takes on its first call (OpenBLAS's
 * packing buffers for dfg's own products, oneDNN's generated gemm
 * kernels) is taken when an inference session is made, where the
 * prediction measures it, not in its first run: the step has run once
 * when the creation returns, and the arena pages that run wrote are the
 * arena's, not the runtime heap's. A gemm of 4096x64 by a zero 64x1024
 * plus ones on dfg's kernels (no backend rule: nothing on oneDNN): once
 * it has run, its 16 MiB output is 1 (NaN where the arena's unwritten
 * input held an infinity or NaN), where an unrun arena holds zeros or
 * the allocator's fill. */
static void test_first_products_at_creation(void **state)
{
    (void)state;
    enum { M = 4096, K = 64, N = 1024 };
    dfg_graph *g = NULL;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    float *w = calloc((size_t)K * N, sizeof *w), one = 1.0f;
    assert_non_null(w);
    int64_t x_shape[2] = {M, K}, w_shape[2] = {K, N}, c_shape[1] = {1};
    dfg_value x, wv, c, y;
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 2, x_shape, &x),
                     DFG_OK);
    assert_int_equal(dfg_graph_weight(g, "w", DFG_F32, 2, w_shape, w, &wv),
                     DFG_OK);
    assert_int_equal(dfg_graph_weight(g, "c", DFG_F32, 1, c_shape, &one, &c),
                     DFG_OK);
    free(w);
    assert_int_equal(dfg_gemm(g, x, wv, c, NULL, &y), DFG_OK);
    assert_int_equal(dfg_graph_output(g, y, "y"), DFG_OK);
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    o.backend_workspace = NULL;
    dfg_program *p = NULL;
    assert_int_equal(dfg_compile(g, &o, &p), DFG_OK);
    dfg_session *s = NULL;
    assert_int_equal(dfg_session_create(p, cpu_backend(), NULL, &s), DFG_OK);
    const float *out = NULL;
    assert_int_equal(dfg_session_output_buffer(s, 0, (void **)&out), DFG_OK);
    for (size_t i = 0; i < (size_t)M * N; i++)
        if (!(out[i] == 1.0f || isnan(out[i])))
            fail_msg("y[%zu] = %g: the product did not run at creation", i,
                     (double)out[i]);
    dfg_memory_prediction m;
    assert_int_equal(dfg_session_memory_predict(s, 0, &m), DFG_OK);
    assert_true(m.runtime_heap_bytes < (uint64_t)M * N * sizeof(float) / 2);
    dfg_session_destroy(s);
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_products_at_creation),
        cmocka_unit_test(test_parse_bytes),
        cmocka_unit_test(test_prediction_parts),
        cmocka_unit_test(test_held_heap),
        cmocka_unit_test(test_compile_within),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
