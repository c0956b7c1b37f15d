/* The attention fusion (passes/fusion/fuse_attention.c) and the attention op's
 * CPU kernel (runtime/cpu/linalg/attention.c): the BERT-like pattern and
 * its variants (attention_graph.h) compiled for a target that takes the
 * fused op become one attention step, whose output on the CPU matches a
 * double-precision reference and the unfused program within 1e-5 on
 * random data; the near misses keep their steps; the CPU's own target
 * and fuse_attention = 0 keep them too; the op's shape rule refuses
 * operands that do not fit, naming them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dfg/dfg.h"
#include "tests/support/attention_graph.h"
#include "tests/support/random_data.h"

static const dfg_backend *cpu(void)
{
    const dfg_backend *b = NULL;
    assert_int_equal(dfg_backend_find("cpu", &b), DFG_OK);
    return b;
}

/* The CPU's target as one that takes the fused op, when fuse. */
static dfg_program *compiled(attention_variant v, int fuse)
{
    dfg_graph *g = attention_graph(v, DFG_F32);
    if (!g)
        fail_msg("%s", dfg_last_error());
    dfg_target target = *dfg_backend_target(cpu());
    target.fused_attention = fuse;
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    assert_int_equal(dfg_compile_options_for(&o, &target), DFG_OK);
    dfg_program *p = NULL;
    if (dfg_compile(g, &o, &p) != DFG_OK)
        fail_msg("%s", dfg_last_error());
    dfg_graph_destroy(g);
    return p;
}

/* Random inputs of variant v (q, k or kt, v, mask), mask entries in
 * [-4, 0] as an additive mask's. */
static float **inputs(attention_variant v, int *n)
{
    *n = attention_has_mask(v) ? 4 : 3;
    float **in = calloc(4, sizeof *in);
    for (int i = 0; i < *n; i++) {
        int64_t count = i == 3 ? ATTENTION_MASK : ATTENTION_QKV;
        in[i] = malloc((size_t)count * sizeof(float));
        for (int64_t j = 0; j < count; j++)
            in[i][j] = i == 3 ? 2.0f * random_uniform() - 2.0f : 2.0f * random_uniform();
    }
    return in;
}

/* The first output of p run on the CPU. */
static float *run(const dfg_program *p, float **in)
{
    dfg_session *s = NULL;
    if (dfg_session_create(p, cpu(), NULL, &s) != DFG_OK)
        fail_msg("%s", dfg_last_error());
    float *out = calloc(ATTENTION_OUT * 2, sizeof *out);
    void *outs[2] = {out, out + ATTENTION_OUT};
    if (dfg_session_run(s, (const void *const *)in, outs) != DFG_OK)
        fail_msg("%s", dfg_last_error());
    dfg_session_destroy(s);
    return out;
}

static double distance(const float *a, const double *b)
{
    double diff = 0.0, norm = 0.0;
    for (int i = 0; i < ATTENTION_OUT; i++) {
        diff += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        norm += b[i] * b[i];
    }
    return sqrt(diff / norm);
}

static void check_fused(attention_variant v)
{
    dfg_program *fused = compiled(v, 1), *plain = compiled(v, 0);
    dfg_plan_stats fs, ps;
    dfg_program_stats(fused, &fs);
    dfg_program_stats(plain, &ps);
    assert_int_equal(attention_steps(fused), 1);
    assert_int_equal(attention_steps(plain), 0);
    assert_true(fs.n_steps < ps.n_steps);
    int n;
    float **in = inputs(v, &n);
    double want[ATTENTION_OUT], unfused[ATTENTION_OUT];
    attention_reference(v, (const float *const *)in, want);
    float *got = run(fused, in), *base = run(plain, in);
    for (int i = 0; i < ATTENTION_OUT; i++)
        unfused[i] = base[i];
    if (!(distance(got, want) < 1e-5) || !(distance(got, unfused) < 1e-5))
        fail_msg("variant %d: fused vs reference %g, vs unfused %g", (int)v,
                 distance(got, want), distance(got, unfused));
    for (int i = 0; i < n; i++)
        free(in[i]);
    free(in), free(got), free(base);
    dfg_program_destroy(fused);
    dfg_program_destroy(plain);
}

static void test_bert_pattern(void **state)
{
    (void)state;
    check_fused(ATTENTION_BERT);
}

static void test_variants(void **state)
{
    (void)state;
    check_fused(ATTENTION_MUL_SCALE);
    check_fused(ATTENTION_NO_MASK);
    check_fused(ATTENTION_NO_SCALE);
    check_fused(ATTENTION_KT_INPUT);
}

static void test_near_misses(void **state)
{
    (void)state;
    for (int v = MISS_SOFTMAX_AXIS; v < ATTENTION_VARIANTS; v++) {
        dfg_program *p = compiled((attention_variant)v, 1);
        if (attention_steps(p) != 0)
            fail_msg("near miss %d was fused", v);
        dfg_program_destroy(p);
    }
}

/* The CPU's own target keeps the steps (its products and softmax), and
 * fuse_attention = 0 keeps them on a target that takes the op. */
static void test_gates(void **state)
{
    (void)state;
    dfg_graph *g = attention_graph(ATTENTION_BERT, DFG_F32);
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    assert_int_equal(dfg_compile_options_for(&o, dfg_backend_target(cpu())),
                     DFG_OK);
    dfg_program *p = NULL;
    assert_int_equal(dfg_compile(g, &o, &p), DFG_OK);
    assert_int_equal(attention_steps(p), 0);
    dfg_program_destroy(p);
    dfg_target target = *dfg_backend_target(cpu());
    target.fused_attention = 1;
    dfg_compile_options_init(&o);
    o.fuse_attention = 0;
    assert_int_equal(dfg_compile_options_for(&o, &target), DFG_OK);
    assert_int_equal(dfg_compile(g, &o, &p), DFG_OK);
    assert_int_equal(attention_steps(p), 0);
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
}

/* A first product that reads k transposed (matmul's trans_b, as the
 * CUDA target's folded transposes write it) fuses reading k's rows. */
static void test_product_reading_k_transposed(void **state)
{
    (void)state;
    dfg_graph *g = NULL;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    const int64_t shape[4] = {2, 3, 6, 8};
    dfg_value q, k, v, s, p, y;
    assert_int_equal(dfg_graph_input(g, "q", DFG_F32, 4, shape, &q), DFG_OK);
    assert_int_equal(dfg_graph_input(g, "k", DFG_F32, 4, shape, &k), DFG_OK);
    assert_int_equal(dfg_graph_input(g, "v", DFG_F32, 4, shape, &v), DFG_OK);
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.trans_b = 1;
    const dfg_value qk[2] = {q, k};
    assert_int_equal(dfg_graph_node(g, "matmul", NULL, qk, 2, &attrs, &s, 1), DFG_OK);
    assert_int_equal(dfg_softmax(g, s, -1, &p), DFG_OK);
    assert_int_equal(dfg_matmul(g, p, v, &y), DFG_OK);
    assert_int_equal(dfg_graph_output(g, y, "y"), DFG_OK);
    dfg_program *programs[2];
    for (int fuse = 0; fuse < 2; fuse++) {
        dfg_target target = *dfg_backend_target(cpu());
        target.fused_attention = fuse;
        dfg_compile_options o;
        dfg_compile_options_init(&o);
        assert_int_equal(dfg_compile_options_for(&o, &target), DFG_OK);
        assert_int_equal(dfg_compile(g, &o, &programs[fuse]), DFG_OK);
        assert_int_equal(attention_steps(programs[fuse]), fuse);
    }
    int n;
    float **in = inputs(ATTENTION_NO_MASK, &n);
    float *plain = run(programs[0], in), *fused = run(programs[1], in);
    double want[ATTENTION_OUT];
    for (int i = 0; i < ATTENTION_OUT; i++)
        want[i] = plain[i];
    if (!(distance(fused, want) < 1e-5))
        fail_msg("fused vs unfused: %g", distance(fused, want));
    for (int i = 0; i < n; i++)
        free(in[i]);
    free(in), free(plain), free(fused);
    dfg_program_destroy(programs[0]);
    dfg_program_destroy(programs[1]);
    dfg_graph_destroy(g);
}

/* attention(q, k, v[, mask]) recorded directly: the shape rule's
 * answers. */
static dfg_status record(const int64_t *k_shape, const int64_t *mask_shape,
                         int32_t trans_b)
{
    dfg_graph *g = NULL;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    const int64_t q_shape[3] = {3, 5, 8}, v_shape[3] = {3, 7, 4};
    dfg_value in[4], y;
    assert_int_equal(dfg_graph_input(g, "q", DFG_F32, 3, q_shape, &in[0]), DFG_OK);
    assert_int_equal(dfg_graph_input(g, "k", DFG_F32, 3, k_shape, &in[1]), DFG_OK);
    assert_int_equal(dfg_graph_input(g, "v", DFG_F32, 3, v_shape, &in[2]), DFG_OK);
    if (mask_shape)
        assert_int_equal(dfg_graph_input(g, "mask", DFG_F32, 2, mask_shape,
                                          &in[3]), DFG_OK);
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.trans_b = trans_b;
    dfg_status st = dfg_graph_node(g, "attention", NULL, in,
                                   mask_shape ? 4 : 3, &attrs, &y, 1);
    dfg_tensor_info info;
    if (st == DFG_OK) {
        assert_int_equal(dfg_graph_value_info(g, y, &info), DFG_OK);
        assert_int_equal(info.rank, 3);
        assert_int_equal(info.shape[1], 5);
        assert_int_equal(info.shape[2], 4);
    }
    dfg_graph_destroy(g);
    return st;
}

static void test_shape_rule(void **state)
{
    (void)state;
    assert_int_equal(record((const int64_t[]){3, 8, 7}, NULL, 0), DFG_OK);
    assert_int_equal(record((const int64_t[]){3, 7, 8},
                            (const int64_t[]){1, 7}, 1), DFG_OK);
    assert_int_equal(record((const int64_t[]){3, 7, 8}, NULL, 0),
                     DFG_ERR_SHAPE);
    assert_non_null(strstr(dfg_last_error(), "do not fit"));
    assert_int_equal(record((const int64_t[]){3, 8, 7},
                            (const int64_t[]){5, 6}, 0), DFG_ERR_SHAPE);
    assert_non_null(strstr(dfg_last_error(), "does not broadcast"));
    assert_int_equal(record((const int64_t[]){2, 8, 7}, NULL, 0),
                     DFG_ERR_SHAPE);
    assert_non_null(strstr(dfg_last_error(), "batch dims"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bert_pattern),
        cmocka_unit_test(test_variants),
        cmocka_unit_test(test_near_misses),
        cmocka_unit_test(test_gates),
        cmocka_unit_test(test_product_reading_k_transposed),
        cmocka_unit_test(test_shape_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
