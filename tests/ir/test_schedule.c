/* Memory-aware scheduling and concatenation without copies: the chosen
 * order's lower bound is never above the recorded order's, concats whose
 * inputs can be slices of their output run no step (and fall back to a
 * copy when they cannot), and the programs verify and compute the same
 * numbers as a double-precision reference. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dfg/compile.h"
#include "dfg/report.h"
#include "dfg/builder.h"
#include "dfg/session.h"
#include "ir/graph.h"
#include "passes/pass.h"
#include "program/program.h"

#define OK(x) assert_int_equal((x), DFG_OK)
#define DIMS(...) ((const int64_t[]){__VA_ARGS__})

static dfg_program *compile(const dfg_graph *g)
{
    dfg_program *p = NULL;
    OK(dfg_compile(g, NULL, &p));
    OK(dfg_program_verify(p));
    assert_true(p->stats.verified);
    return p;
}

static int32_t tensor_named(const dfg_program *p, const char *name)
{
    for (int32_t i = 0; i < p->n_tensors; i++)
        if (strcmp(p->tensors[i].name, name) == 0)
            return i;
    fail_msg("no tensor '%s'", name);
    return -1;
}

static const char *value_name(const dfg_graph *g, dfg_value v)
{
    dfg_tensor_info info;
    OK(dfg_graph_value_info(g, v, &info));
    return info.name;
}

static int count_steps(const dfg_program *p, dfg_op op)
{
    int count = 0;
    for (int32_t s = 0; s < p->n_steps; s++)
        count += p->steps[s].op == op;
    return count;
}

static void run_cpu(const dfg_program *p, const float *x, float *y)
{
    dfg_session *session;
    const dfg_backend *cpu;
    OK(dfg_backend_find("cpu", &cpu));
    OK(dfg_session_create(p, cpu, NULL, &session));
    const void *inputs[] = {x};
    void *outputs[] = {y};
    OK(dfg_session_run(session, inputs, outputs));
    dfg_session_destroy(session);
}

/* y = sigmoid(concat(exp(x), neg(x), tanh(x)) along channels), batch 1:
 * the three parts are written straight into the concat's output. */
static void test_concat_parts_are_views(void **state)
{
    (void)state;
    dfg_graph *g;
    OK(dfg_graph_create(NULL, &g));
    dfg_value x, parts[3], c, y;
    OK(dfg_graph_input(g, "x", DFG_F32, 3, DIMS(1, 5, 7), &x));
    OK(dfg_exp(g, x, &parts[0]));
    OK(dfg_neg(g, x, &parts[1]));
    OK(dfg_tanh(g, x, &parts[2]));
    OK(dfg_concat(g, 3, parts, 1, &c));
    OK(dfg_sigmoid(g, c, &y));
    OK(dfg_graph_output(g, y, "y"));
    dfg_program *p = compile(g);
    assert_int_equal(count_steps(p, DFG_OP_CONCAT), 0);
    assert_int_equal(p->n_steps, 4);
    int32_t whole = -1;
    for (int32_t i = 0; i < p->n_tensors && whole < 0; i++)
        if (p->tensors[i].type.rank == 3 && p->tensors[i].type.shape[1] == 15)
            whole = i; /* the concat's output (y comes after it) */
    assert_true(whole >= 0);
    const dfg_program_tensor *w = &p->tensors[whole];
    assert_int_equal(w->alias_of, -1);
    const dfg_op part_ops[] = {DFG_OP_EXP, DFG_OP_NEG, DFG_OP_TANH};
    for (int32_t step = 0; step < p->n_steps; step++) {
        int k = 0;
        while (k < 3 && p->steps[step].op != part_ops[k])
            k++;
        if (k == 3)
            continue;
        const dfg_program_tensor *t = &p->tensors[p->steps[step].outputs[0]];
        assert_int_equal(t->alias_of, whole);
        assert_int_equal(t->offset, w->offset + k * 35 * 4);
        assert_int_equal(t->kind, DFG_TENSOR_VIEW);
    }
    /* The output is whole after the last part (step 2); each part holds
     * its slot from its own step to the output's last reader. */
    assert_int_equal(w->first_step, 2);
    for (int32_t step = 0; step < 3; step++) {
        const dfg_program_tensor *t = &p->tensors[p->steps[step].outputs[0]];
        assert_int_equal(t->first_step, step);
        assert_int_equal(t->last_step, w->last_step);
    }
    /* The verifier checks that a part lies inside the concat's output,
     * and holds its bytes until the output is whole. */
    dfg_program_tensor *first_part = &p->tensors[p->steps[0].outputs[0]];
    int32_t part_last = first_part->last_step;
    first_part->last_step = 0;
    assert_int_equal(dfg_program_verify(p), DFG_ERR_PLAN);
    assert_non_null(strstr(dfg_last_error(), "lets its bytes go"));
    first_part->last_step = part_last;
    /* The summary counts the output and the parts written into it. */
    char *text = NULL;
    size_t length = 0;
    FILE *summary = open_memstream(&text, &length);
    assert_non_null(summary);
    OK(dfg_report_summary(p, summary));
    fclose(summary);
    assert_non_null(strstr(text, "concats   1 outputs without a copy step, "
                                 "3 tensors written straight into them"));
    free(text);
    dfg_program_tensor *part = &p->tensors[p->steps[0].outputs[0]];
    int64_t offset = part->offset;
    part->offset = w->offset + w->bytes;
    assert_int_equal(dfg_program_verify(p), DFG_ERR_PLAN);
    part->offset = offset;
    OK(dfg_program_verify(p));
    float x_data[35], out[105];
    for (int i = 0; i < 35; i++)
        x_data[i] = (float)(i % 11) / 5.0f - 1.0f;
    run_cpu(p, x_data, out);
    double err = 0, norm = 0;
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 35; i++) {
            double v = x_data[i];
            double part = k == 0 ? exp(v) : k == 1 ? -v : tanh(v);
            double want = 1 / (1 + exp(-part));
            err += (out[k * 35 + i] - want) * (out[k * 35 + i] - want);
            norm += want * want;
        }
    assert_true(sqrt(err / norm) < 1e-6);
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
}

/* A graph input, a part given twice, a view, and a concat along a
 * non-outer axis all keep the copy. */
static void test_concat_falls_back_to_a_copy(void **state)
{
    (void)state;
    dfg_graph *g;
    OK(dfg_graph_create(NULL, &g));
    dfg_value x, a, r, c1, c2, c3, c4, s1, s2, s3, s4;
    OK(dfg_graph_input(g, "x", DFG_F32, 2, DIMS(1, 8), &x));
    OK(dfg_exp(g, x, &a));
    OK(dfg_reshape(g, a, 2, DIMS(1, 8), &r));
    OK(dfg_concat(g, 2, (dfg_value[]){x, a}, 1, &c1));       /* graph input */
    OK(dfg_concat(g, 2, (dfg_value[]){a, a}, 1, &c2));       /* twice */
    OK(dfg_concat(g, 2, (dfg_value[]){r, r}, 0, &c3));       /* views */
    dfg_value b, b2;
    OK(dfg_neg(g, x, &b));
    OK(dfg_abs(g, x, &b2));
    OK(dfg_concat(g, 2, (dfg_value[]){b, b2}, 0, &c4));      /* [2,8] outer */
    OK(dfg_relu(g, c1, &s1));
    OK(dfg_relu(g, c2, &s2));
    OK(dfg_relu(g, c3, &s3));
    OK(dfg_transpose(g, c4, 0, NULL, &s4));
    OK(dfg_graph_output(g, s1, "s1"));
    OK(dfg_graph_output(g, s2, "s2"));
    OK(dfg_graph_output(g, s3, "s3"));
    OK(dfg_graph_output(g, s4, "s4"));
    dfg_program *p = compile(g);
    /* Only c4 (fresh parts along the outermost axis) runs no step. */
    assert_int_equal(count_steps(p, DFG_OP_CONCAT), 3);
    assert_int_equal(p->tensors[tensor_named(p, value_name(g, b))].alias_of,
                     tensor_named(p, value_name(g, c4)));
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
}

/* Dense blocks at batch 1: layer k reads c_k = concat(x0..x{k-1}),
 * squashes it (sigmoid), with a bottleneck narrows it to BOTTLENECK
 * channels (a 1x1 convolution, as DenseNet's), and adds
 * x_k = reduce_sum over channels + (0.25, -0.5) [1,2,h,w]; the block ends
 * with concat(x0..x3). */
enum { LAYERS = 3, GROWTH = 2, BOTTLENECK = 6 };

typedef struct dense_block {
    dfg_value features[LAYERS + 1], concats[LAYERS + 1];
} dense_block;

static const float block_bias[GROWTH] = {0.25f, -0.5f};

static float bottleneck_weight(int o, int c)
{
    return (float)((o * 7 + c * 3) % 11 - 5) / 20.0f;
}

static void build_dense_block(dfg_graph *g, dfg_value x0, int64_t channels,
                              int bottleneck, dense_block *d)
{
    char name[32];
    dfg_value b;
    snprintf(name, sizeof name, "b%lld", (long long)channels);
    OK(dfg_graph_constant(g, name, DFG_F32, 4, DIMS(1, GROWTH, 1, 1),
                          block_bias, &b));
    d->features[0] = x0;
    for (int k = 1; k <= LAYERS; k++, channels += GROWTH) {
        dfg_value squashed, narrowed, summed;
        OK(dfg_concat(g, k, d->features, 1, &d->concats[k - 1]));
        OK(dfg_sigmoid(g, d->concats[k - 1], &squashed));
        narrowed = squashed;
        if (bottleneck) {
            float w[BOTTLENECK * 16];
            dfg_value weight;
            assert_true(channels <= 16);
            for (int o = 0; o < BOTTLENECK; o++)
                for (int c = 0; c < channels; c++)
                    w[o * channels + c] = bottleneck_weight(o, c);
            snprintf(name, sizeof name, "w%lld", (long long)channels);
            OK(dfg_graph_weight(g, name, DFG_F32, 4,
                                DIMS(BOTTLENECK, channels, 1, 1), w, &weight));
            OK(dfg_conv2d(g, squashed, weight, DFG_NO_VALUE, NULL, &narrowed));
        }
        OK(dfg_reduce_sum(g, narrowed, 1, DIMS(1), 1, &summed));
        OK(dfg_add(g, summed, b, &d->features[k]));
    }
    OK(dfg_concat(g, LAYERS + 1, d->features, 1, &d->concats[LAYERS]));
}

/* The block in double precision: features holds x0 (channels x hw) and
 * receives the block's last concat. */
static void dense_block_reference(double *features, int channels, int hw,
                                  int bottleneck)
{
    for (int k = 1; k <= LAYERS; k++, channels += GROWTH)
        for (int i = 0; i < hw; i++) {
            double sum = 0;
            for (int o = 0; o < (bottleneck ? BOTTLENECK : 1); o++)
                for (int c = 0; c < channels; c++) {
                    double s = 1 / (1 + exp(-features[c * hw + i]));
                    sum += bottleneck ? bottleneck_weight(o, c) * s : s;
                }
            for (int j = 0; j < GROWTH; j++)
                features[(channels + j) * hw + i] = sum + block_bias[j];
        }
}

static void assert_close(const float *got, const double *want, int n)
{
    double err = 0, norm = 0;
    for (int i = 0; i < n; i++) {
        err += (got[i] - want[i]) * (got[i] - want[i]);
        norm += want[i] * want[i];
    }
    assert_true(sqrt(err / norm) < 1e-6);
}

/* got is close to -want (n values); then p and g are destroyed. */
static void assert_negated_and_free(const float *got, double *want, int n,
                                    dfg_program *p, dfg_graph *g)
{
    for (int i = 0; i < n; i++)
        want[i] = -want[i];
    assert_close(got, want, n);
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
}

/* The first `features` features of block d are parts of `holder`'s output
 * at their offsets, and the concats shorter than it views of its start. */
static void assert_block_views(const dfg_program *p, const dfg_graph *g,
                               const dense_block *d, dfg_value holder,
                               int features)
{
    int32_t whole = tensor_named(p, value_name(g, holder));
    const dfg_program_tensor *w = &p->tensors[whole];
    assert_int_equal(w->alias_of, -1);
    int64_t feature_offset = 0;
    for (int k = 0; k < features; k++) {
        const dfg_program_tensor *f =
            &p->tensors[tensor_named(p, value_name(g, d->features[k]))];
        assert_int_equal(f->alias_of, whole);
        assert_int_equal(f->offset, w->offset + feature_offset);
        feature_offset += f->bytes;
    }
    for (int k = 0; k < features - 1; k++) {
        const dfg_program_tensor *c =
            &p->tensors[tensor_named(p, value_name(g, d->concats[k]))];
        assert_int_equal(c->alias_of, whole);
        assert_int_equal(c->kind, DFG_TENSOR_VIEW);
        assert_int_equal(c->offset, w->offset);
    }
}

/* y = neg(block(exp(x))), x [1, 4, 8, 8], the block without a bottleneck
 * in *d. */
static dfg_graph *negated_dense_block(dense_block *d)
{
    dfg_graph *g;
    dfg_value x, x0, y;
    OK(dfg_graph_create(NULL, &g));
    OK(dfg_graph_input(g, "x", DFG_F32, 4, DIMS(1, 4, 8, 8), &x));
    OK(dfg_exp(g, x, &x0));
    build_dense_block(g, x0, 4, 0, d);
    OK(dfg_neg(g, d->concats[LAYERS], &y));
    OK(dfg_graph_output(g, y, "y"));
    return g;
}

/* y = neg(block(exp(x))) without a bottleneck: every concat of the block
 * runs no step, and the verifier checks each view. */
static void test_dense_block_concats_are_views(void **state)
{
    (void)state;
    enum { HW = 64, OUT = (4 + LAYERS * GROWTH) * HW };
    dense_block d;
    dfg_graph *g = negated_dense_block(&d);
    dfg_program *p = compile(g);
    assert_int_equal(count_steps(p, DFG_OP_CONCAT), 0);
    assert_block_views(p, g, &d, d.concats[LAYERS], LAYERS + 1);
    /* A prefix that outlives, or reaches past, the longest concat's bytes
     * is refused. */
    const dfg_program_tensor *w =
        &p->tensors[tensor_named(p, value_name(g, d.concats[LAYERS]))];
    dfg_program_tensor *prefix =
        &p->tensors[tensor_named(p, value_name(g, d.concats[LAYERS - 1]))];
    int32_t last = prefix->last_step;
    prefix->last_step = w->last_step + 1;
    assert_int_equal(dfg_program_verify(p), DFG_ERR_PLAN);
    prefix->last_step = last;
    prefix->offset = w->offset + w->bytes - prefix->bytes + 256;
    assert_int_equal(dfg_program_verify(p), DFG_ERR_PLAN);
    prefix->offset = w->offset;
    OK(dfg_program_verify(p));
    /* So is a prefix read before the features it holds are written. */
    int32_t first = prefix->first_step;
    prefix->first_step = 0;
    assert_int_equal(dfg_program_verify(p), DFG_ERR_PLAN);
    assert_non_null(strstr(dfg_last_error(), "read before its bytes"));
    prefix->first_step = first;
    OK(dfg_program_verify(p));
    float x_data[4 * HW], out[OUT];
    double want[OUT];
    for (int i = 0; i < 4 * HW; i++) {
        x_data[i] = (float)((i * 29) % 53) / 26.0f - 1.0f;
        want[i] = exp(x_data[i]);
    }
    run_cpu(p, x_data, out);
    dense_block_reference(want, 4, HW, 0);
    assert_negated_and_free(out, want, OUT, p, g);
}

/* Two blocks with bottlenecks, the second on half the rows of the first's
 * output. Keeping block 1 whole as one tensor would reserve its last
 * feature's slot during its last bottleneck, at the peak; planned slot by
 * slot (passes/concat_cells.c) that slot is empty until its feature is
 * written, so both blocks stay whole: no concat copies. */
static void test_dense_blocks_whole_slot_by_slot(void **state)
{
    (void)state;
    enum { C2 = 4 + LAYERS * GROWTH, OUT = (C2 + LAYERS * GROWTH) * 32 };
    dfg_graph *g;
    dense_block d1, d2;
    dfg_value x, x0, rows, x2, y;
    OK(dfg_graph_create(NULL, &g));
    OK(dfg_graph_input(g, "x", DFG_F32, 4, DIMS(1, 4, 8, 8), &x));
    OK(dfg_exp(g, x, &x0));
    build_dense_block(g, x0, 4, 1, &d1);
    OK(dfg_slice(g, d1.concats[LAYERS], 1, DIMS(2), DIMS(0), DIMS(4), NULL,
                 &rows));
    OK(dfg_exp(g, rows, &x2));
    build_dense_block(g, x2, C2, 1, &d2);
    OK(dfg_neg(g, d2.concats[LAYERS], &y));
    OK(dfg_graph_output(g, y, "y"));
    dfg_program *p = compile(g);
    assert_int_equal(count_steps(p, DFG_OP_CONCAT), 0);
    assert_block_views(p, g, &d1, d1.concats[LAYERS], LAYERS + 1);
    assert_block_views(p, g, &d2, d2.concats[LAYERS], LAYERS + 1);
    float x_data[4 * 64], out[OUT];
    double block1[C2 * 64], want[OUT];
    for (int i = 0; i < 4 * 64; i++) {
        x_data[i] = (float)((i * 31) % 47) / 23.0f - 1.0f;
        block1[i] = exp(x_data[i]);
    }
    run_cpu(p, x_data, out);
    dense_block_reference(block1, 4, 64, 1);
    for (int c = 0; c < C2; c++)
        for (int i = 0; i < 32; i++)
            want[c * 32 + i] = exp(block1[c * 64 + i]);
    dense_block_reference(want, C2, 32, 1);
    assert_negated_and_free(out, want, OUT, p, g);
}

/* The policies on one block: LAST_READER and ONE_FAMILY both elide all
 * four concats, the features parts of the longest. */
static void test_dense_block_policies(void **state)
{
    (void)state;
    dense_block d;
    dfg_graph *g = negated_dense_block(&d);
    for (int policy = 0; policy < DFG_CONCAT_POLICIES; policy++) {
        dfg_concat_views views;
        OK(dfg_pass_concat_views(g, (dfg_concat_policy)policy, NULL, &views));
        assert_int_equal(views.n_elided, 4);
        int32_t holder = dfg_graph_index(g, d.concats[LAYERS]);
        for (int k = 0; k < LAYERS; k++)
            assert_int_equal(views.part_of[dfg_graph_index(g, d.features[k])],
                             holder);
        dfg_concat_views_free(&views, NULL);
    }
    dfg_graph_destroy(g);
}

/* Eight large intermediates recorded first and reduced afterwards: the
 * recorded order keeps them all alive, a memory-aware order one at a
 * time. */
static void test_schedule_lowers_the_bound(void **state)
{
    (void)state;
    dfg_graph *g;
    OK(dfg_graph_create(NULL, &g));
    dfg_value x, big[8], small[8], sum;
    OK(dfg_graph_input(g, "x", DFG_F32, 2, DIMS(1, 1024), &x));
    for (int i = 0; i < 8; i++) {
        dfg_value scaled;
        OK(i % 2 ? dfg_exp(g, x, &scaled) : dfg_tanh(g, x, &scaled));
        OK(dfg_add(g, scaled, x, &big[i]));
    }
    for (int i = 0; i < 8; i++)
        OK(dfg_reduce_sum(g, big[i], 0, NULL, 1, &small[i]));
    sum = small[0];
    for (int i = 1; i < 8; i++)
        OK(dfg_add(g, sum, small[i], &sum));
    OK(dfg_graph_output(g, sum, "sum"));
    dfg_program *p = compile(g);
    dfg_plan_stats s;
    dfg_program_stats(p, &s);
    assert_true(s.lower_bound_bytes <= s.recorded_lower_bound_bytes);
    assert_true(s.lower_bound_bytes * 3 < s.recorded_lower_bound_bytes);
    assert_true(s.arena_bytes * 100 <= s.lower_bound_bytes * 102);
    float x_data[1024], out[1];
    double want = 0;
    for (int i = 0; i < 1024; i++) {
        x_data[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
        for (int k = 0; k < 8; k++)
            want += (k % 2 ? exp(x_data[i]) : tanh(x_data[i])) + x_data[i];
    }
    run_cpu(p, x_data, out);
    assert_true(fabs(out[0] - want) <= 1e-4 * fabs(want) + 1e-3);
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concat_parts_are_views),
        cmocka_unit_test(test_concat_falls_back_to_a_copy),
        cmocka_unit_test(test_dense_block_concats_are_views),
        cmocka_unit_test(test_dense_blocks_whole_slot_by_slot),
        cmocka_unit_test(test_dense_block_policies),
        cmocka_unit_test(test_schedule_lowers_the_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
