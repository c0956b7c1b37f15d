/* Channels-last (nhwc) activations for the CUDA target's 16-bit
 * convolutions (dfg_target.conv_layout, passes/layout_assign.c,
 * docs/precision.md), on the host:
 *   - the rule: which convs want nhwc (16-bit, one group, channels
 *     multiples of 8) and which keep NCHW (f32, tf32, a stem of 1 channel);
 *   - the compile-time choice on the bundled cnn and on a small CNN with
 *     pools and a channel concat: which tensors are nhwc (every conv of a
 *     chain, its batch norms, pools, adds, ReLUs and channel concats),
 *     the filters permuted to KRSC, reorders only at the chain's
 *     boundaries (after a plain producer, before a global pool), the plan
 *     verified, none at all for f32, tf32 or without layouts;
 *   - the program keeps its layouts through a save and load, and the
 *     validator refuses nhwc in an f32 program;
 *   - the CUDA reorder step both ways, blocked layouts refused by name;
 *   - every nhwc conv taken by cuDNN's mapping ("cuDNN nhwc");
 *   - both programs run on the emulated CUDA backend (nhwc convs as cuDNN
 *     computes them, on NCHW copies) give the plain program's outputs, and
 *     the CPU's f32 ones within 16-bit tolerances. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dfg/compile.h"
#include "dfg/models.h"
#include "dfg/program.h"
#include "dfg/session.h"
#include "program/program.h"
#include "program/program_format.h"
#include "runtime/cuda/plan/dnn_mapping.h"
#include "runtime/cuda/plan/layout_plan.h"
#include "runtime/cuda/plan/target.h"
#include "tests/cuda/cuda_emulator.h"
#include "tests/cuda/cuda_op_check.h"
#include "util/error.h"

/* One node of op on inputs, its one output returned. */
static dfg_value node(dfg_graph *g, const char *op, const dfg_value *in,
                      int32_t n_in, const dfg_attrs *attrs)
{
    dfg_value out;
    if (dfg_graph_node(g, op, NULL, in, n_in, attrs, &out, 1) != DFG_OK)
        fail_msg("%s: %s", op, dfg_last_error());
    return out;
}

/* n values in [-scale, scale], the same at every call. */
static float *filled(int64_t n, float scale)
{
    float *v = malloc((size_t)n * sizeof *v);
    assert_non_null(v);
    for (int64_t i = 0; i < n; i++)
        v[i] = scale * sinf(0.7f * (float)i + scale);
    return v;
}

/* A small CNN, NCHW [2, 8, 12, 12] in: conv 8->16 + bias, ReLU, max pool
 * 2x2, conv 16->16, average pool 3x3 (stride 1, pad 1), residual add, a
 * channel concat with the pooled value, global average pool, flatten. */
static dfg_graph *small_cnn(void)
{
    dfg_graph *g = NULL;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    const int64_t xs[4] = {2, 8, 12, 12}, w1s[4] = {16, 8, 3, 3},
                  w2s[4] = {16, 16, 3, 3}, bs[1] = {16};
    /* Fixed weights: every compile of the model holds the same. */
    float *w1 = filled(16 * 8 * 9, 0.3f), *w2 = filled(16 * 16 * 9, 0.2f),
          *b = filled(16, 0.5f);
    dfg_value x, v[3];
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 4, xs, &x), DFG_OK);
    assert_int_equal(dfg_graph_weight(g, "w1", DFG_F32, 4, w1s, w1, &v[1]),
                     DFG_OK);
    assert_int_equal(dfg_graph_weight(g, "b", DFG_F32, 1, bs, b, &v[2]),
                     DFG_OK);
    dfg_attrs same, two, three, axis1;
    dfg_attrs_init(&same);
    same.pads[0] = same.pads[1] = same.pads[2] = same.pads[3] = 1;
    dfg_attrs_init(&two);
    two.kernel[0] = two.kernel[1] = two.strides[0] = two.strides[1] = 2;
    three = same;
    three.kernel[0] = three.kernel[1] = 3;
    dfg_attrs_init(&axis1);
    axis1.axis = 1;
    v[0] = x;
    dfg_value y = node(g, "conv2d", v, 3, &same);
    dfg_value p = node(g, "max_pool", (dfg_value[]){node(g, "relu", &y, 1,
                                                         NULL)}, 1, &two);
    assert_int_equal(dfg_graph_weight(g, "w2", DFG_F32, 4, w2s, w2, &v[1]),
                     DFG_OK);
    v[0] = p;
    dfg_value z = node(g, "conv2d", v, 2, &same);
    dfg_value a = node(g, "average_pool", &z, 1, &three);
    dfg_value s = node(g, "add", (dfg_value[]){a, p}, 2, NULL);
    dfg_value c = node(g, "concat", (dfg_value[]){s, p}, 2, &axis1);
    dfg_value gp = node(g, "global_average_pool", &c, 1, NULL);
    dfg_value f = node(g, "flatten", &gp, 1, &axis1);
    assert_int_equal(dfg_graph_output(g, f, "out"), DFG_OK);
    free(w1);
    free(w2);
    free(b);
    return g;
}

static dfg_graph *model(const char *name)
{
    if (strcmp(name, "small") == 0)
        return small_cnn();
    dfg_graph *g = NULL;
    assert_int_equal(dfg_model_build(name, NULL, &g), DFG_OK);
    return g;
}

/* name compiled for target (NULL: the CPU's defaults) at precision. */
static dfg_program *compiled(const char *name, const dfg_target *target,
                             dfg_dtype precision, int tf32, int layouts)
{
    dfg_graph *g = model(name);
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    o.precision = precision;
    o.allow_tf32 = tf32;
    if (target)
        assert_int_equal(dfg_compile_options_for(&o, target), DFG_OK);
    o.assign_layouts = layouts;
    dfg_program *p = NULL;
    if (dfg_compile(g, &o, &p) != DFG_OK)
        fail_msg("%s: %s", name, dfg_last_error());
    dfg_graph_destroy(g);
    assert_int_equal(dfg_program_verify(p), DFG_OK);
    return p;
}

static int32_t count_layout(const dfg_program *p, int32_t layout)
{
    int32_t n = 0;
    for (int32_t i = 0; i < p->n_tensors; i++)
        n += p->tensors[i].type.layout == layout;
    return n;
}

static int32_t count_op(const dfg_program *p, dfg_op op)
{
    int32_t n = 0;
    for (int32_t i = 0; i < p->n_steps; i++)
        n += p->steps[i].op == op;
    return n;
}

static int32_t layout_of(const dfg_program *p, int32_t tensor)
{
    return tensor >= 0 ? p->tensors[tensor].type.layout : -1;
}

/* The step that writes tensor t, or -1 (a weight, an input). */
static int32_t writer(const dfg_program *p, int32_t t)
{
    for (int32_t i = 0; i < p->n_steps; i++)
        for (int32_t k = 0; k < p->steps[i].n_outputs; k++)
            if (p->steps[i].outputs[k] == t)
                return i;
    return -1;
}

/* Every conv's x, filter and y share a layout; the nhwc ones are the
 * rule's; every op of `ops` has its x in nhwc; each reorder sits on a
 * boundary: plain -> nhwc reads what a step that takes no nhwc wrote,
 * nhwc -> plain feeds only steps that take none. Returns the nhwc convs. */
static int32_t check_chain(const dfg_program *p, const dfg_op *ops,
                           int32_t n_ops)
{
    int32_t convs = 0;
    for (int32_t i = 0; i < p->n_steps; i++) {
        const dfg_program_step *s = &p->steps[i];
        int32_t x = layout_of(p, s->inputs[0]);
        if (s->op == DFG_OP_CONV2D) {
            assert_int_equal(layout_of(p, s->inputs[1]), x);
            assert_int_equal(layout_of(p, s->outputs[0]), x);
            convs += x == DFG_LAYOUT_NHWC;
        }
        for (int32_t k = 0; k < n_ops; k++)
            if (s->op == ops[k] && x != DFG_LAYOUT_NHWC)
                fail_msg("step %d (%s) is not nhwc", (int)i,
                         dfg_op_get(s->op)->name);
        if (s->op != DFG_OP_REORDER)
            continue;
        int32_t from = writer(p, s->inputs[0]);
        if (x == DFG_LAYOUT_PLAIN) {
            assert_true(from < 0 || (p->steps[from].op != DFG_OP_REORDER &&
                                     count_layout(p, DFG_LAYOUT_NHWC) > 0));
            for (int32_t k = 0; from >= 0 && k < p->steps[from].n_inputs; k++)
                assert_int_not_equal(layout_of(p, p->steps[from].inputs[k]),
                                     DFG_LAYOUT_NHWC);
            continue;
        }
        for (int32_t j = i + 1; j < p->n_steps; j++)
            for (int32_t k = 0; k < p->steps[j].n_inputs; k++)
                if (p->steps[j].inputs[k] == s->outputs[0] &&
                    (p->steps[j].op == DFG_OP_CONV2D ||
                     p->steps[j].op == DFG_OP_RELU ||
                     p->steps[j].op == DFG_OP_MAX_POOL))
                    fail_msg("reorder %d feeds %s, which takes nhwc", (int)i,
                             dfg_op_get(p->steps[j].op)->name);
    }
    return convs;
}

static void test_conv_rule(void **state)
{
    (void)state;
    dfg_attrs a = defaults();
    a.pads[0] = a.pads[1] = a.pads[2] = a.pads[3] = 1;
    for (dfg_dtype d = DFG_F32; d <= DFG_BF16; d++) {
        dfg_type in[3] = {type_of(d, 4, 2, 16, 8, 8),
                          type_of(d, 4, 32, 16, 3, 3), type_of(d, 1, 32)};
        dfg_type out = type_of(d, 4, 2, 32, 8, 8);
        assert_int_equal(dfg_cuda_conv_layout(&a, in, 3, &out),
                         d == DFG_F32 ? DFG_LAYOUT_PLAIN : DFG_LAYOUT_NHWC);
        in[0].shape[1] = in[1].shape[1] = 4; /* channels not a multiple of 8 */
        assert_int_equal(dfg_cuda_conv_layout(&a, in, 3, &out),
                         DFG_LAYOUT_PLAIN);
    }
    assert_ptr_equal(dfg_cuda_target.conv_layout, dfg_cuda_conv_layout);
}

static void test_bundled_cnn(void **state)
{
    (void)state;
    const dfg_op ops[] = {DFG_OP_BATCH_NORM, DFG_OP_RELU, DFG_OP_ADD};
    for (dfg_dtype d = DFG_F16; d <= DFG_BF16; d++) {
        dfg_program *p = compiled("cnn", &dfg_cuda_target, d, 0, 1);
        /* The stem (1 channel) stays NCHW; the 7 convs after it and the
         * ops between them are nhwc, entered and left once. */
        assert_int_equal(check_chain(p, ops, 3), 7);
        assert_int_equal(count_op(p, DFG_OP_REORDER), 2);
        assert_true(p->stats.verified);
        dfg_program_destroy(p);
    }
    /* f32 (strict or tf32), no layouts, or the CPU: no nhwc. */
    dfg_program *none[4] = {
        compiled("cnn", &dfg_cuda_target, DFG_F32, 0, 1),
        compiled("cnn", &dfg_cuda_target, DFG_F32, 1, 1),
        compiled("cnn", &dfg_cuda_target, DFG_F16, 0, 0),
        compiled("cnn", NULL, DFG_F32, 0, 1)};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(count_layout(none[i], DFG_LAYOUT_NHWC), 0);
        if (i < 3)
            assert_int_equal(count_op(none[i], DFG_OP_REORDER), 0);
        dfg_program_destroy(none[i]);
    }
}

static void test_small_cnn(void **state)
{
    (void)state;
    const dfg_op ops[] = {DFG_OP_MAX_POOL, DFG_OP_AVERAGE_POOL, DFG_OP_ADD,
                          DFG_OP_CONCAT};
    dfg_program *p = compiled("small", &dfg_cuda_target, DFG_F16, 0, 1);
    assert_int_equal(check_chain(p, ops, 4), 2);
    /* Into the first conv, out to the global pool: the concat's parts
     * are nhwc (copied per pixel). */
    assert_int_equal(count_op(p, DFG_OP_REORDER), 2);
    dfg_program_destroy(p);
}

/* The filter of an nhwc conv, KRSC, against the plain program's KCRS. */
static void test_filters_permuted(void **state)
{
    (void)state;
    dfg_program *p = compiled("small", &dfg_cuda_target, DFG_F16, 0, 1);
    dfg_program *q = compiled("small", &dfg_cuda_target, DFG_F16, 0, 0);
    int32_t checked = 0;
    for (int32_t i = 0; i < p->n_tensors; i++) {
        const dfg_program_tensor *t = &p->tensors[i];
        if (t->type.layout != DFG_LAYOUT_NHWC ||
            t->region != DFG_REGION_WEIGHTS || !t->data)
            continue;
        int32_t j = 0;
        while (j < q->n_tensors && strcmp(q->tensors[j].name, t->name) != 0)
            j++;
        if (j == q->n_tensors || !q->tensors[j].data)
            continue;
        const uint8_t *krsc = t->data, *kcrs = q->tensors[j].data;
        int64_t k = t->type.shape[0], c = t->type.shape[1],
                rs = t->type.shape[2] * t->type.shape[3];
        for (int64_t e = 0; e < k * c * rs; e++)
            assert_memory_equal(
                krsc + ((e / (c * rs) * rs + e % rs) * c + e / rs % c) * 2,
                kcrs + e * 2, 2);
        checked++;
    }
    assert_int_equal(checked, 2);
    dfg_program_destroy(p);
    dfg_program_destroy(q);
}

static void test_saved_and_validated(void **state)
{
    (void)state;
    dfg_program *p = compiled("cnn", &dfg_cuda_target, DFG_F16, 0, 1);
    const char *path = "test_cuda_nhwc.dfgp";
    assert_int_equal(dfg_program_save(p, path), DFG_OK);
    dfg_program *back = NULL;
    assert_int_equal(dfg_program_load(path, NULL, &back), DFG_OK);
    assert_int_equal(count_layout(back, DFG_LAYOUT_NHWC),
                     count_layout(p, DFG_LAYOUT_NHWC));
    dfg_program_destroy(back);
    remove(path);
    p->half_products = DFG_F32;
    assert_int_not_equal(dfg_program_validate(p), DFG_OK);
    if (!strstr(dfg_last_error(), "only a 16-bit program"))
        fail_msg("%s", dfg_last_error());
    dfg_program_destroy(p);
}

static void test_reorder_step(void **state)
{
    (void)state;
    dfg_type plain = type_of(DFG_F16, 4, 2, 24, 5, 7), nhwc = plain;
    nhwc.layout = DFG_LAYOUT_NHWC;
    uint16_t *x = random_tensor(&plain, -1, 1);
    size_t bytes = (size_t)dfg_type_bytes(&plain);
    uint16_t *y = malloc(bytes), *back = malloc(bytes);
    dfg_attrs a = defaults();
    for (int way = 0; way < 2; way++) {
        a.layout = way ? DFG_LAYOUT_PLAIN : DFG_LAYOUT_NHWC;
        const void *in[1] = {way ? y : x};
        void *out[1] = {way ? back : y};
        dfg_step_args s = {.op = DFG_OP_REORDER, .attrs = &a, .n_inputs = 1,
                           .in_types = way ? &nhwc : &plain, .in = in,
                           .n_outputs = 1,
                           .out_types = way ? &plain : &nhwc, .out = out};
        dfg_cuda_step_plan plan;
        unsigned int status = 0;
        assert_int_equal(dfg_cuda_step_plan_make(&s, 0, &plan), DFG_OK);
        assert_int_equal(cuda_emulate_step(&plan, &status), DFG_OK);
    }
    for (int64_t n = 0; n < 2; n++)
        for (int64_t c = 0; c < 24; c++)
            for (int64_t h = 0; h < 5; h++)
                for (int64_t w = 0; w < 7; w++)
                    assert_int_equal(y[((n * 5 + h) * 7 + w) * 24 + c],
                                     x[((n * 24 + c) * 5 + h) * 7 + w]);
    assert_memory_equal(back, x, bytes);
    dfg_type blocked = type_of(DFG_F32, 4, 1, 16, 2, 2);
    blocked.layout = DFG_LAYOUT_NCHW16C;
    dfg_type flat = blocked;
    flat.layout = DFG_LAYOUT_PLAIN;
    dfg_cuda_strided_copy copy;
    assert_int_equal(dfg_cuda_reorder_plan(&flat, &blocked, &copy),
                     DFG_ERR_UNSUPPORTED);
    assert_non_null(strstr(dfg_last_error(), "between plain and nhwc only"));
    free(x);
    free(y);
    free(back);
}

/* Runs p on backend with inputs; outputs calloc'd into out[]. */
static void run(const dfg_program *p, const dfg_backend *backend,
                void *const *inputs, void **out, dfg_type *out_types)
{
    dfg_session *s = NULL;
    if (dfg_session_create(p, backend, NULL, &s) != DFG_OK)
        fail_msg("%s", dfg_last_error());
    for (int32_t i = 0; i < dfg_program_num_outputs(p); i++) {
        dfg_tensor_info info;
        assert_int_equal(dfg_program_output_info(p, i, &info), DFG_OK);
        out_types[i] = type_of(info.dtype, 0);
        out_types[i].rank = info.rank;
        memcpy(out_types[i].shape, info.shape,
               sizeof info.shape[0] * (size_t)info.rank);
        out[i] = calloc(1, (size_t)dfg_type_bytes(&out_types[i]) + 1);
    }
    if (dfg_session_run(s, (const void *const *)inputs, out) != DFG_OK)
        fail_msg("%s", dfg_last_error());
    /* cuDNN's mapping takes every nhwc conv, with nhwc descriptors. */
    for (int32_t i = 0; backend == &cuda_emulator_backend && i < p->n_steps;
         i++) {
        const char *library = NULL;
        int nhwc = p->steps[i].op == DFG_OP_CONV2D &&
                   layout_of(p, p->steps[i].inputs[0]) == DFG_LAYOUT_NHWC;
        assert_int_equal(dfg_session_step_library(s, i, &library), DFG_OK);
        assert_int_equal(library && strcmp(library, "cuDNN nhwc") == 0, nhwc);
    }
    dfg_session_destroy(s);
}

static void test_outputs_agree(void **state)
{
    (void)state;
    const dfg_backend *cpu = NULL;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    const char *const names[] = {"cnn", "small"};
    for (int m = 0; m < 2; m++)
        for (dfg_dtype d = DFG_F16; d <= DFG_BF16; d++) {
            dfg_program *nhwc = compiled(names[m], &dfg_cuda_target, d, 0, 1);
            dfg_program *plain = compiled(names[m], &dfg_cuda_target, d, 0, 0);
            dfg_program *wide = compiled(names[m], NULL, DFG_F32, 0, 1);
            dfg_tensor_info info;
            assert_int_equal(dfg_program_input_info(nhwc, 0, &info), DFG_OK);
            dfg_type t = type_of(info.dtype, 0);
            t.rank = info.rank;
            memcpy(t.shape, info.shape, sizeof t.shape[0] * (size_t)t.rank);
            void *inputs[1] = {random_tensor(&t, -1, 1)};
            void *a[1], *b[1], *c[1];
            dfg_type types[1];
            run(nhwc, &cuda_emulator_backend, inputs, a, types);
            run(plain, &cuda_emulator_backend, inputs, b, types);
            run(wide, cpu, inputs, c, types);
            /* The same roundings in another order of bytes. */
            double same = relative_error(&types[0], b[0], a[0]);
            double err = relative_error(&types[0], c[0], a[0]);
            if (!(same < 1e-6) || !(err < (d == DFG_F16 ? 2e-3 : 1.5e-2)))
                fail_msg("%s at %s: %g from plain, %g from the CPU's f32",
                         names[m], dfg_dtype_name(d), same, err);
            free(inputs[0]);
            free(a[0]);
            free(b[0]);
            free(c[0]);
            dfg_program_destroy(nhwc);
            dfg_program_destroy(plain);
            dfg_program_destroy(wide);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_rule),
        cmocka_unit_test(test_bundled_cnn),
        cmocka_unit_test(test_small_cnn),
        cmocka_unit_test(test_filters_permuted),
        cmocka_unit_test(test_saved_and_validated),
        cmocka_unit_test(test_reorder_step),
        cmocka_unit_test(test_outputs_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
