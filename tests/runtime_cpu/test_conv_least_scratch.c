/* Blocked convs planned with the least library scratch under
 * prefer_memory (passes/node_types.c, runtime/cpu/onednn/dnnl_conv.c):
 *   - the CPU rule's least scratch of a conv (dfg_cpu_step_least_workspace:
 *     oneDNN's implementation with the least scratch, no Winograd or
 *     column room) is never above its full one (dfg_cpu_step_workspace),
 *     plain or blocked;
 *   - a program compiled with prefer_memory gives each blocked conv at
 *     least that least, and the conv at the arena's peak no more than
 *     fits under the bound: less than its full workspace wherever the
 *     least is below it (the peak here is a 1x1 stride-2 conv, which
 *     oneDNN's 1x1 kernel runs with a copy of the strided input in its
 *     scratch);
 *   - it runs to what the default program gives, from the file too;
 *   - a plain conv whose oneDNN scratch does not fit under the bound
 *     runs dfg's kernel: its workspace does not mark it for oneDNN,
 *     which would run it on a slower kernel needing no scratch. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <math.h>

#include "dfg/compile.h"
#include "dfg/graph.h"
#include "dfg/session.h"
#include "program/program.h"
#include "runtime/cpu_workspace_rule.h"
#include "tests/runtime_cpu/cpu_kernel_check.h"

#define T(...) check_type(DFG_F32, (int32_t)(sizeof((int64_t[]){__VA_ARGS__}) / \
                          sizeof(int64_t)), (int64_t[]){__VA_ARGS__})

static dfg_attrs conv_attrs(int32_t k, int32_t stride)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.kernel[0] = a.kernel[1] = k;
    a.strides[0] = a.strides[1] = stride;
    for (int i = 0; i < 4; i++)
        a.pads[i] = k / 2;
    a.group = 1;
    return a;
}

static int blocked(const dfg_program *p, int32_t s)
{
    return p->tensors[p->steps[s].outputs[0]].type.layout != DFG_LAYOUT_PLAIN;
}

static int64_t workspace_of(const dfg_program *p, int32_t s)
{
    int32_t t = p->steps[s].workspace;
    return t >= 0 ? p->tensors[t].bytes : 0;
}

static int32_t step_named(const dfg_program *p, const char *name)
{
    for (int32_t s = 0; s < p->n_steps; s++)
        if (strcmp(p->steps[s].name, name) == 0)
            return s;
    fail_msg("no step %s", name);
    return -1;
}

/* The full and least CPU rule of step s of p, on its own types. */
static void rules_of(const dfg_program *p, int32_t s, int64_t *full,
                     int64_t *least)
{
    const dfg_program_step *step = &p->steps[s];
    dfg_type in[4], out[1];
    for (int32_t i = 0; i < step->n_inputs; i++)
        in[i] = step->inputs[i] >= 0 ? p->tensors[step->inputs[i]].type
                                     : (dfg_type){.rank = -1};
    out[0] = p->tensors[step->outputs[0]].type;
    *full = dfg_cpu_step_workspace(step->op, &step->attrs, in, step->n_inputs,
                                   out, 1);
    *least = dfg_cpu_step_least_workspace(step->op, &step->attrs, in,
                                          step->n_inputs, out, 1);
}

static void test_least_is_at_most_full(void **state)
{
    (void)state;
    struct {
        int32_t k, stride;
        int64_t c, m, hw;
    } shapes[] = {{1, 2, 64, 256, 28}, {3, 1, 64, 64, 28},
                  {1, 1, 32, 48, 17}, {3, 2, 16, 24, 15}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        dfg_attrs a = conv_attrs(shapes[i].k, shapes[i].stride);
        int64_t o = (shapes[i].hw + 2 * (shapes[i].k / 2) - shapes[i].k) /
                        shapes[i].stride + 1;
        dfg_type in[2] = {T(1, shapes[i].c, shapes[i].hw, shapes[i].hw),
                          T(shapes[i].m, shapes[i].c, shapes[i].k,
                            shapes[i].k)};
        dfg_type out = T(1, shapes[i].m, o, o);
        int64_t full = dfg_cpu_step_workspace(DFG_OP_CONV2D, &a, in, 2, &out, 1);
        int64_t least =
            dfg_cpu_step_least_workspace(DFG_OP_CONV2D, &a, in, 2, &out, 1);
        if (full >= 0 && !(least >= 0 && least <= full))
            fail_msg("shape %zu: least %lld, full %lld", i, (long long)least,
                     (long long)full);
    }
}

/* x [1,3,112,112] -> conv 3x3 to 64 channels -> relu -> conv 1x1
 * stride 2 to 256 -> conv 1x1 to 64 -> out: a chain oneDNN runs
 * blocked, the first conv reading the image as it is. */
static dfg_graph *chain(const float *w1, const float *w2, const float *w3)
{
    dfg_graph *g;
    dfg_value x, k1, k2, k3, a, r, b, out;
    int64_t xs[4] = {1, 3, 112, 112}, s1[4] = {64, 3, 3, 3};
    int64_t s2[4] = {256, 64, 1, 1}, s3[4] = {64, 256, 1, 1};
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 4, xs, &x), DFG_OK);
    assert_int_equal(dfg_graph_weight(g, "w1", DFG_F32, 4, s1, w1, &k1), DFG_OK);
    assert_int_equal(dfg_graph_weight(g, "w2", DFG_F32, 4, s2, w2, &k2), DFG_OK);
    assert_int_equal(dfg_graph_weight(g, "w3", DFG_F32, 4, s3, w3, &k3), DFG_OK);
    dfg_attrs c3 = conv_attrs(3, 1), down = conv_attrs(1, 2),
              c1 = conv_attrs(1, 1);
    dfg_value in1[2] = {x, k1}, in2[2] = {r, k2}, in3[2] = {b, k3};
    assert_int_equal(dfg_graph_node(g, "conv2d", "a", in1, 2, &c3, &a, 1),
                     DFG_OK);
    assert_int_equal(dfg_graph_node(g, "relu", "r", &a, 1, NULL, &r, 1),
                     DFG_OK);
    in2[0] = r;
    assert_int_equal(dfg_graph_node(g, "conv2d", "down", in2, 2, &down, &b, 1),
                     DFG_OK);
    in3[0] = b;
    assert_int_equal(dfg_graph_node(g, "conv2d", "c", in3, 2, &c1, &out, 1),
                     DFG_OK);
    assert_int_equal(dfg_graph_output(g, out, "out"), DFG_OK);
    return g;
}

static check_tensor run(const dfg_program *p, const check_tensor *x)
{
    const dfg_backend *cpu;
    dfg_session *session;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    if (dfg_session_create(p, cpu, NULL, &session) != DFG_OK)
        fail_msg("session: %s", dfg_last_error());
    check_tensor out = check_empty(T(1, 64, 56, 56));
    const void *inputs[1] = {x->data};
    void *outputs[1] = {out.data};
    if (dfg_session_run(session, inputs, outputs) != DFG_OK)
        fail_msg("run: %s", dfg_last_error());
    dfg_session_destroy(session);
    return out;
}

static void test_peak_conv_takes_the_least(void **state)
{
    (void)state;
    check_seed(7);
    check_tensor w1 = check_random(T(64, 3, 3, 3));
    check_tensor w2 = check_random(T(256, 64, 1, 1));
    check_tensor w3 = check_random(T(64, 256, 1, 1));
    check_tensor x = check_random(T(1, 3, 112, 112));
    dfg_graph *g = chain(w1.data, w2.data, w3.data);
    dfg_compile_options options;
    dfg_compile_options_init(&options);
    dfg_program *fast, *lean;
    if (dfg_compile(g, &options, &fast) != DFG_OK)
        fail_msg("compile: %s", dfg_last_error());
    options.prefer_memory = 1;
    options.tiling = 0;
    if (dfg_compile(g, &options, &lean) != DFG_OK)
        fail_msg("compile, prefer_memory: %s", dfg_last_error());
    assert_int_equal(dfg_program_verify(lean), DFG_OK);

    int32_t convs = 0;
    for (int32_t s = 0; s < lean->n_steps; s++) {
        const dfg_program_step *step = &lean->steps[s];
        if (step->op != DFG_OP_CONV2D)
            continue;
        convs++;
        /* A plain step may run dfg's kernel in its own least instead. */
        if (!blocked(lean, s))
            continue;
        int64_t full, least;
        rules_of(lean, s, &full, &least);
        int64_t bytes = workspace_of(lean, s);
        if (full >= 0 && !(least >= 0 && least <= full && bytes >= least))
            fail_msg("step %d (%s): workspace %lld, least %lld, full %lld", s,
                     step->name, (long long)bytes, (long long)least,
                     (long long)full);
    }
    assert_int_equal(convs, 3);
    /* The peak is the 1x1 stride-2 conv's (its x and y, 3 MiB each, and
     * the full scratch). Where the default program runs it blocked and
     * its full scratch is above its least, the lean one runs it blocked
     * too (as lean as dfg's kernel on plain tensors) with less than the
     * full scratch. */
    int32_t down = step_named(fast, "down");
    int64_t full, least;
    rules_of(fast, down, &full, &least);
    if (blocked(fast, down) && least < full) {
        int32_t lean_down = step_named(lean, "down");
        assert_true(blocked(lean, lean_down));
        assert_true(workspace_of(lean, lean_down) < full);
    } else {
        print_message("the 1x1 stride-2 conv is not blocked or needs no "
                      "more than its least here: its run only is checked\n");
    }

    char path[] = "/tmp/dfg-test-conv-least-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(dfg_program_save(lean, path), DFG_OK);
    dfg_program *loaded;
    if (dfg_program_load(path, NULL, &loaded) != DFG_OK)
        fail_msg("load: %s", dfg_last_error());
    unlink(path);

    check_tensor want = run(fast, &x);
    check_tensor got = run(lean, &x), got_file = run(loaded, &x);
    /* The default program may run a conv as Winograd: within 1e-4 of
     * the output's largest magnitude. */
    const float *w = want.data, *a = got.data, *f = got_file.data;
    float scale = 0.0f;
    for (int64_t i = 0; i < 64 * 56 * 56; i++)
        scale = fmaxf(scale, fabsf(w[i]));
    for (int64_t i = 0; i < 64 * 56 * 56; i++)
        if (!(fabsf(a[i] - w[i]) <= 1e-4f * scale &&
              fabsf(f[i] - w[i]) <= 1e-4f * scale))
            fail_msg("element %lld: %g and %g from the file, want %g",
                     (long long)i, a[i], f[i], w[i]);
    check_tensor_free(&got_file);
    check_tensor_free(&got);
    check_tensor_free(&want);
    dfg_program_destroy(loaded);
    dfg_program_destroy(lean);
    dfg_program_destroy(fast);
    dfg_graph_destroy(g);
    check_tensor_free(&x);
    check_tensor_free(&w3);
    check_tensor_free(&w2);
    check_tensor_free(&w1);
}

/* x [1,32,28,28] -> conv 1x1 to 64, plain, prefer_memory: the conv is
 * the peak, with no room for the blocked copies oneDNN's first kernel
 * wants, so dfg's kernel runs it, in the program as its cost model
 * (the absent workspace) says and in the session. */
static void test_plain_conv_without_its_scratch(void **state)
{
    (void)state;
    check_seed(11);
    check_tensor w = check_random(T(64, 32, 1, 1));
    dfg_graph *g;
    dfg_value x, k, y;
    int64_t xs[4] = {1, 32, 28, 28}, ws[4] = {64, 32, 1, 1};
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 4, xs, &x), DFG_OK);
    assert_int_equal(dfg_graph_weight(g, "w", DFG_F32, 4, ws, w.data, &k),
                     DFG_OK);
    dfg_attrs c1 = conv_attrs(1, 1);
    dfg_value in[2] = {x, k};
    assert_int_equal(dfg_graph_node(g, "conv2d", "c", in, 2, &c1, &y, 1),
                     DFG_OK);
    assert_int_equal(dfg_graph_output(g, y, "y"), DFG_OK);
    dfg_compile_options options;
    dfg_compile_options_init(&options);
    options.prefer_memory = 1;
    options.assign_layouts = 0;
    options.tiling = 0;
    dfg_program *p;
    if (dfg_compile(g, &options, &p) != DFG_OK)
        fail_msg("compile: %s", dfg_last_error());
    int32_t s = step_named(p, "c");
    int64_t full, least;
    rules_of(p, s, &full, &least);
    if (full <= 0) {
        print_message("oneDNN needs no scratch for the plain 1x1 conv here\n");
    } else {
        assert_true(p->steps[s].workspace < 0);
        const dfg_backend *cpu;
        dfg_session *session;
        assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
        assert_int_equal(dfg_session_create(p, cpu, NULL, &session), DFG_OK);
        const char *library = NULL;
        assert_int_equal(dfg_session_step_library(session, s, &library),
                         DFG_OK);
        if (library)
            fail_msg("the plain conv runs on %s", library);
        dfg_session_destroy(session);
    }
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
    check_tensor_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_least_is_at_most_full),
        cmocka_unit_test(test_peak_conv_takes_the_least),
        cmocka_unit_test(test_plain_conv_without_its_scratch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
