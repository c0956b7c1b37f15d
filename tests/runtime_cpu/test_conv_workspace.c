/* Conv workspaces smaller than the full im2col chunk (conv_geometry.h,
 * passes/workspace_fit.c):
 *   - the CPU conv2d, conv2d_grad_input and conv2d_grad_weight kernels
 *     give the same result with the least workspace, one in between (an
 *     odd byte count) and the full one, each allocated to the byte (ASan
 *     sees any read past it), and refuse one byte less than the least;
 *   - dfg_compile gives a conv at the arena's peak no more workspace than
 *     fits under it (an mnasnet-like first conv, whose full 1 MiB would
 *     raise the arena by half), and a conv away from the peak its full
 *     one; the program verifies, validates after a save and load, and
 *     runs to the same output as the kernel with its full workspace. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "dfg/compile.h"
#include "dfg/graph.h"
#include "dfg/session.h"
#include "ir/op_table.h"
#include "program/program.h"
#include "tests/runtime_cpu/cpu_kernel_check.h"

#define T(...) check_type(DFG_F32, (int32_t)(sizeof((int64_t[]){__VA_ARGS__}) / \
                          sizeof(int64_t)), (int64_t[]){__VA_ARGS__})

typedef struct conv_shape {
    const char *name;
    int64_t n, c, h, w, m, kh, kw;
    int32_t stride, group;
    int64_t pad;
} conv_shape;

static dfg_attrs conv_attrs(const conv_shape *c)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.strides[0] = a.strides[1] = c->stride;
    for (int i = 0; i < 4; i++)
        a.pads[i] = c->pad;
    a.group = c->group;
    return a;
}

static int64_t out_extent(const conv_shape *c, int64_t in, int64_t k)
{
    return (in + 2 * c->pad - k) / c->stride + 1;
}

/* Runs kernel for op on in with a workspace of exactly `bytes` (NULL when
 * 0) into a fresh tensor of type out_type. */
static check_tensor run_with(dfg_cpu_kernel kernel, dfg_op op,
                             const dfg_attrs *a, int32_t n_in,
                             check_tensor *const *in, dfg_type out_type,
                             int64_t bytes)
{
    check_tensor y = check_empty(out_type);
    check_tensor *out[1] = {&y};
    void *workspace = bytes > 0 ? malloc((size_t)bytes) : NULL;
    dfg_status st = check_run(kernel, op, a, n_in, in, 1, out, workspace,
                              bytes);
    if (st != DFG_OK)
        fail_msg("%s with %lld bytes of workspace: %s", dfg_op_get(op)->name,
                 (long long)bytes, dfg_last_error());
    free(workspace);
    return y;
}

/* ||a - b|| / ||b||. */
static double difference(const check_tensor *a, const check_tensor *b)
{
    double diff = 0.0, norm = 0.0;
    for (int64_t i = 0; i < a->numel; i++) {
        double d = check_get(a, i) - check_get(b, i);
        diff += d * d;
        norm += check_get(b, i) * check_get(b, i);
    }
    return sqrt(diff) / sqrt(norm);
}

/* op on in with the least, a middle and the full workspace: the same
 * output (the summation order over k is that of one product either way;
 * the weight gradient sums its chunks in a different order, hence a
 * float tolerance rather than bitwise equality). */
static void check_any_workspace(dfg_cpu_kernel kernel, dfg_op op,
                                const dfg_attrs *a, int32_t n_in,
                                check_tensor *const *in, dfg_type out_type,
                                const char *name)
{
    dfg_type in_types[3];
    for (int32_t i = 0; i < n_in; i++)
        in_types[i] = in[i]->type;
    int64_t full = dfg_op_get(op)->workspace(a, in_types, n_in, &out_type, 1);
    int64_t least = dfg_op_least_workspace(op, a, in_types, n_in, &out_type, 1);
    if (!(least > 0 && least < full))
        fail_msg("%s %s: least %lld, full %lld", name, dfg_op_get(op)->name,
                 (long long)least, (long long)full);
    check_tensor y = check_empty(out_type);
    check_tensor *out[1] = {&y};
    void *short_one = malloc((size_t)least);
    assert_int_equal(check_run(kernel, op, a, n_in, in, 1, out, short_one,
                               least - 1), DFG_ERR_INVALID_ARGUMENT);
    free(short_one);
    check_tensor_free(&y);

    check_tensor with_full = run_with(kernel, op, a, n_in, in, out_type, full);
    int64_t sizes[2] = {least, (least + full) / 2 | 1};
    for (int i = 0; i < 2; i++) {
        check_tensor got = run_with(kernel, op, a, n_in, in, out_type,
                                    sizes[i]);
        double err = difference(&got, &with_full);
        if (!(err < 1e-6))
            fail_msg("%s %s with %lld of %lld bytes: differs by %g", name,
                     dfg_op_get(op)->name, (long long)sizes[i],
                     (long long)full, err);
        check_tensor_free(&got);
    }
    check_tensor_free(&with_full);
}

static const conv_shape shapes[] = {
    /* one image larger than the full chunk: chunks of output rows */
    {"3x3 s1 over 64x64", 1, 16, 64, 64, 32, 3, 3, 1, 1, 1},
    /* stride 2 with padding, rows of odd length */
    {"3x3 s2 over 33x35", 1, 3, 33, 35, 8, 3, 3, 2, 1, 1},
    /* small images, several per full workspace (slots), groups */
    {"3x3 group 2, batch 3", 3, 8, 9, 7, 6, 3, 3, 1, 2, 1},
    /* 1x1 stride 2 still needs im2col */
    {"1x1 s2", 2, 12, 10, 10, 5, 1, 1, 2, 1, 0},
};

static void test_forward(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        const conv_shape *c = &shapes[i];
        dfg_attrs a = conv_attrs(c);
        check_seed(i + 1);
        check_tensor x = check_random(T(c->n, c->c, c->h, c->w));
        check_tensor w = check_random(T(c->m, c->c / c->group, c->kh, c->kw));
        check_tensor b = check_random(T(c->m));
        check_tensor *in[3] = {&x, &w, &b};
        dfg_type y = T(c->n, c->m, out_extent(c, c->h, c->kh),
                       out_extent(c, c->w, c->kw));
        check_any_workspace(dfg_cpu_conv2d, DFG_OP_CONV2D, &a, 3, in, y,
                            c->name);
        check_tensor_free(&x);
        check_tensor_free(&w);
        check_tensor_free(&b);
    }
}

static void test_gradients(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        const conv_shape *c = &shapes[i];
        dfg_attrs a = conv_attrs(c);
        check_seed(i + 11);
        dfg_type xt = T(c->n, c->c, c->h, c->w);
        dfg_type wt = T(c->m, c->c / c->group, c->kh, c->kw);
        check_tensor x = check_random(xt), w = check_random(wt);
        check_tensor dy = check_random(
            T(c->n, c->m, out_extent(c, c->h, c->kh),
              out_extent(c, c->w, c->kw)));
        a.n_shape = 4;
        memcpy(a.shape, xt.shape, sizeof xt.shape[0] * 4);
        check_tensor *for_input[2] = {&dy, &w};
        check_any_workspace(dfg_cpu_conv2d_grad_input,
                            DFG_OP_CONV2D_GRAD_INPUT, &a, 2, for_input, xt,
                            c->name);
        memcpy(a.shape, wt.shape, sizeof wt.shape[0] * 4);
        check_tensor *for_weight[2] = {&dy, &x};
        check_any_workspace(dfg_cpu_conv2d_grad_weight,
                            DFG_OP_CONV2D_GRAD_WEIGHT, &a, 2, for_weight, wt,
                            c->name);
        check_tensor_free(&x);
        check_tensor_free(&w);
        check_tensor_free(&dy);
    }
}

/* The workspace tensor of the program's step `step` (-1: none). */
static int64_t workspace_of(const dfg_program *p, int32_t step)
{
    int32_t t = p->steps[step].workspace;
    return t >= 0 ? p->tensors[t].bytes : 0;
}

/* The full workspace of a conv of x and w (no bias) with attributes a. */
static int64_t full_workspace(const dfg_attrs *a, dfg_type x, dfg_type w,
                              dfg_type y)
{
    dfg_type in[2] = {x, w};
    return dfg_op_get(DFG_OP_CONV2D)->workspace(a, in, 2, &y, 1);
}

/* x [1,3,224,224] -> conv 3x3 stride 2 -> [1,32,112,112] (the peak: x,
 * y and the workspace) -> max pool 2x2 -> conv 3x3 32->32 -> out, its
 * output and workspace well under the peak. */
static dfg_graph *two_convs(float *w1, float *w2)
{
    dfg_graph *g;
    dfg_value x, k1, k2, y, pooled, out;
    int64_t x_shape[4] = {1, 3, 224, 224}, w1_shape[4] = {32, 3, 3, 3};
    int64_t w2_shape[4] = {32, 32, 3, 3};
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 4, x_shape, &x), DFG_OK);
    assert_int_equal(dfg_graph_weight(g, "w1", DFG_F32, 4, w1_shape, w1, &k1),
                     DFG_OK);
    assert_int_equal(dfg_graph_weight(g, "w2", DFG_F32, 4, w2_shape, w2, &k2),
                     DFG_OK);
    dfg_attrs s2 = conv_attrs(&(conv_shape){.stride = 2, .group = 1,
                                            .pad = 1});
    dfg_attrs s1 = conv_attrs(&(conv_shape){.stride = 1, .group = 1,
                                            .pad = 1});
    dfg_attrs pool;
    dfg_attrs_init(&pool);
    pool.kernel[0] = pool.kernel[1] = 2;
    pool.strides[0] = pool.strides[1] = 2;
    dfg_value in1[2] = {x, k1};
    assert_int_equal(dfg_graph_node(g, "conv2d", "conv1", in1, 2, &s2, &y, 1),
                     DFG_OK);
    assert_int_equal(dfg_graph_node(g, "max_pool", "pool", &y, 1, &pool,
                                    &pooled, 1), DFG_OK);
    dfg_value in3[2] = {pooled, k2};
    assert_int_equal(dfg_graph_node(g, "conv2d", "conv2", in3, 2, &s1, &out,
                                    1), DFG_OK);
    assert_int_equal(dfg_graph_output(g, out, "out"), DFG_OK);
    return g;
}

static void test_planner_keeps_the_peak(void **state)
{
    (void)state;
    check_seed(99);
    check_tensor w1 = check_random(T(32, 3, 3, 3));
    check_tensor w2 = check_random(T(32, 32, 3, 3));
    dfg_graph *g = two_convs(w1.data, w2.data);
    dfg_program *p;
    /* The reference convs' own workspaces: oneDNN's scratch (the default
     * rule) is kept whole, measured worth its memory (docs/BENCHMARKS.md) */
    dfg_compile_options options;
    dfg_compile_options_init(&options);
    options.backend_workspace = NULL;
    options.backend_workspace_for = NULL;
    if (dfg_compile(g, &options, &p) != DFG_OK)
        fail_msg("compile: %s", dfg_last_error());
    assert_int_equal(dfg_program_verify(p), DFG_OK);
    assert_int_equal(p->n_steps, 3);
    assert_string_equal(dfg_op_get(p->steps[0].op)->name, "conv2d");
    assert_string_equal(dfg_op_get(p->steps[2].op)->name, "conv2d");

    /* The first conv's full workspace would add 1 MiB to x and y. */
    dfg_attrs a1 = conv_attrs(&(conv_shape){.stride = 2, .group = 1,
                                            .pad = 1});
    dfg_attrs a2 = conv_attrs(&(conv_shape){.stride = 1, .group = 1,
                                            .pad = 1});
    int64_t x_bytes = 3 * 224 * 224 * 4, y_bytes = 32 * 112 * 112 * 4;
    int64_t full = full_workspace(&a1, T(1, 3, 224, 224), T(32, 3, 3, 3),
                                  T(1, 32, 112, 112));
    int64_t full2 = full_workspace(&a2, T(1, 32, 56, 56), T(32, 32, 3, 3),
                                   T(1, 32, 56, 56));
    assert_true(full > (int64_t)1 << 19);
    int64_t least = 27 * 112 * 4; /* k x one output row */
    dfg_plan_stats stats;
    dfg_program_stats(p, &stats);
    assert_true(workspace_of(p, 0) >= least);
    if ((int64_t)stats.arena_bytes > x_bytes + y_bytes + least + 2 * 256)
        fail_msg("arena %llu: the workspace (%lld of %lld bytes) raised the "
                 "peak of x and y (%lld)", (unsigned long long)stats.arena_bytes,
                 (long long)workspace_of(p, 0), (long long)full,
                 (long long)(x_bytes + y_bytes));
    /* The second conv's full workspace fits under the peak: kept. */
    assert_int_equal(workspace_of(p, 2), full2);

    /* A program file with a shrunk workspace validates on load. */
    char path[] = "/tmp/dfg-test-conv-workspace-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(dfg_program_save(p, path), DFG_OK);
    dfg_program *loaded;
    if (dfg_program_load(path, NULL, &loaded) != DFG_OK)
        fail_msg("load: %s", dfg_last_error());
    unlink(path);

    /* It runs to what the kernels give with their full workspaces. */
    check_tensor x = check_random(T(1, 3, 224, 224));
    check_tensor out = check_empty(T(1, 32, 56, 56));
    const dfg_backend *cpu;
    dfg_session *session;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    assert_int_equal(dfg_session_create(loaded, cpu, NULL, &session), DFG_OK);
    const void *inputs[1] = {x.data};
    void *outputs[1] = {out.data};
    if (dfg_session_run(session, inputs, outputs) != DFG_OK)
        fail_msg("run: %s", dfg_last_error());

    check_tensor *in1[2] = {&x, &w1};
    check_tensor y = run_with(dfg_cpu_conv2d, DFG_OP_CONV2D, &a1, 2, in1,
                              T(1, 32, 112, 112), full);
    check_tensor pooled = check_empty(T(1, 32, 56, 56));
    for (int64_t c = 0; c < 32; c++)
        for (int64_t i = 0; i < 56; i++)
            for (int64_t j = 0; j < 56; j++) {
                const float *at = (const float *)y.data +
                                  (c * 112 + 2 * i) * 112 + 2 * j;
                float m = fmaxf(fmaxf(at[0], at[1]),
                                fmaxf(at[112], at[113]));
                ((float *)pooled.data)[(c * 56 + i) * 56 + j] = m;
            }
    check_tensor *in2[2] = {&pooled, &w2};
    check_tensor want = run_with(dfg_cpu_conv2d, DFG_OP_CONV2D, &a2, 2, in2,
                                 T(1, 32, 56, 56), full2);
    double err = difference(&out, &want);
    if (!(err < 1e-6))
        fail_msg("program output differs from the kernels' by %g", err);

    check_tensor_free(&want);
    check_tensor_free(&pooled);
    check_tensor_free(&y);
    check_tensor_free(&out);
    check_tensor_free(&x);
    dfg_session_destroy(session);
    dfg_program_destroy(loaded);
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
    check_tensor_free(&w1);
    check_tensor_free(&w2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forward),
        cmocka_unit_test(test_gradients),
        cmocka_unit_test(test_planner_keeps_the_peak),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
