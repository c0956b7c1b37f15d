/* The compiler passes that rewrite a graph and place its tensors: constant
 * folding, dead code, views, in-place reuse and per-step workspace, on
 * small graphs checked by hand. Helpers: pass_check.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "dfg/builder.h"
#include "dfg/compile.h"
#include "dfg/session.h"
#include "ir/graph.h"
#include "passes/pass.h"
#include "program/program.h"
#include "tests/support/pass_check.h"

/* ---- the graph's own bookkeeping ----------------------------------------- */

/* Every value and node of g is found by its name at its index. */
static void expect_names_indexed(const dfg_graph *g)
{
    for (int32_t v = 0; v < g->n_values; v++)
        assert_int_equal(dfg_name_table_find(&g->value_names,
                                             g->values[v].name), v);
    for (int32_t n = 0; n < g->n_nodes; n++)
        assert_int_equal(dfg_name_table_find(&g->node_names,
                                             g->nodes[n].name), n);
}

/* A clone finds every name where the original does, in its own strings;
 * a reorder moves the nodes' indices under their names and their
 * outputs' producers; names added to either graph later stay unique. */
static void test_clone_and_reorder_keep_names(void **state)
{
    (void)state;
    dfg_graph *g;
    OK(dfg_graph_create(NULL, &g));
    dfg_value x = input(g, "x", 1, DIMS(4));
    dfg_value a[40];
    for (int i = 0; i < 40; i++) /* 40 branches: tables that grew */
        OK(i % 2 ? dfg_relu(g, x, &a[i]) : dfg_neg(g, x, &a[i]));
    OK(dfg_graph_output(g, a[39], "y"));
    dfg_graph *copy;
    OK(dfg_graph_clone(g, NULL, &copy));
    expect_names_indexed(copy);
    for (int32_t v = 0; v < g->n_values; v++) {
        assert_string_equal(copy->values[v].name, g->values[v].name);
        assert_ptr_not_equal(copy->values[v].name, g->values[v].name);
    }
    dfg_graph_destroy(g); /* the copy's keys are its own strings */
    expect_names_indexed(copy);
    /* The branches in reverse: every node moves. */
    int32_t order[64];
    assert_true(copy->n_nodes <= 64);
    for (int32_t i = 0; i < copy->n_nodes; i++)
        order[i] = copy->n_nodes - 1 - i;
    const char *first = copy->nodes[0].name;
    OK(dfg_graph_reorder_nodes(copy, order));
    expect_names_indexed(copy);
    assert_ptr_equal(copy->nodes[copy->n_nodes - 1].name, first);
    for (int32_t n = 0; n < copy->n_nodes; n++)
        assert_int_equal(copy->values[copy->nodes[n].outputs[0]].producer, n);
    dfg_value more;
    OK(dfg_relu(copy, x, &more));
    expect_names_indexed(copy);
    dfg_graph_destroy(copy);
}

/* ---- folding and dead code -------------------------------------------- */

static void test_fold_constant_subgraph(void **state)
{
    (void)state;
    rng_state = 11;
    dfg_graph *g;
    OK(dfg_graph_create(NULL, &g));
    dfg_value x = input(g, "x", 1, DIMS(16));
    float c1[16], c2[16], xs[16];
    fill_random(c1, 16);
    fill_random(c2, 16);
    fill_random(xs, 16);
    dfg_value a, b, t, u, y;
    OK(dfg_graph_constant(g, "c1", DFG_F32, 1, DIMS(16), c1, &a));
    OK(dfg_graph_constant(g, "c2", DFG_F32, 1, DIMS(16), c2, &b));
    OK(dfg_add(g, a, b, &t));
    OK(dfg_exp(g, t, &u));
    OK(dfg_mul(g, x, u, &y));
    OK(dfg_graph_output(g, y, "y"));

    dfg_program *folded = compile(g, DFG_PLANNER_GREEDY_SIZE, 1, 1, 1);
    check_program(folded);
    assert_int_equal(folded->n_steps, 1);
    assert_int_equal(folded->steps[0].op, DFG_OP_MUL);
    /* c1, c2 and their sum are gone; exp(c1 + c2) is a constant. */
    assert_int_equal(tensor_named(folded, "c1"), -1);
    assert_int_equal(tensor_named(folded, "c2"), -1);
    assert_int_equal(tensor_named(folded, value_name(g, t)), -1);
    const dfg_program_tensor *k = tensor_of(folded, g, u);
    assert_int_equal(k->kind, DFG_TENSOR_CONSTANT);
    assert_int_equal(k->region, DFG_REGION_WEIGHTS);
    double ref[16], yref[16];
    for (int i = 0; i < 16; i++) {
        ref[i] = exp((double)c1[i] + (double)c2[i]);
        yref[i] = xs[i] * ref[i];
    }
    assert_true(relative_error((const float *)k->data, ref, 16) < 1e-6);

    float *out[1];
    const void *in[1] = {xs};
    run_program(folded, in, out);
    assert_true(relative_error(out[0], yref, 16) < 1e-6);
    free(out[0]);

    dfg_program *unfolded = compile(g, DFG_PLANNER_GREEDY_SIZE, 0, 1, 1);
    check_program(unfolded);
    assert_int_equal(unfolded->n_steps, 3);
    run_program(unfolded, in, out);
    assert_true(relative_error(out[0], yref, 16) < 1e-6);
    free(out[0]);
    dfg_program_destroy(folded);
    dfg_program_destroy(unfolded);
    dfg_graph_destroy(g);
}

static void test_fold_report_and_limits(void **state)
{
    (void)state;
    rng_state = 12;
    dfg_graph *g;
    OK(dfg_graph_create(NULL, &g));
    dfg_value c = random_leaf(g, "c", 1, 1, DIMS(8));
    dfg_value w = random_leaf(g, "w", 0, 1, DIMS(8));
    dfg_value a, b, big, r, y, z;
    OK(dfg_neg(g, c, &a));      /* folds */
    OK(dfg_add(g, a, w, &b));   /* reads a weight: stays */
    OK(dfg_expand(g, c, 2, DIMS(1 << 22, 8), &big)); /* 128 MiB: stays */
    OK(dfg_reduce_sum(g, big, 0, NULL, 0, &r));
    OK(dfg_relu(g, a, &y));     /* a graph output: stays */
    OK(dfg_add(g, b, r, &z));
    OK(dfg_graph_output(g, y, "y"));
    OK(dfg_graph_output(g, z, "z"));
    dfg_graph *copy;
    OK(dfg_graph_clone(g, NULL, &copy));
    dfg_pass_report report;
    OK(dfg_pass_fold(copy, &report));
    assert_string_equal(report.pass, "fold");
    assert_int_equal(report.nodes_folded, 1);
    assert_int_equal(copy->nodes[0].dead, 1);
    for (int32_t n = 1; n < copy->n_nodes; n++)
        assert_int_equal(copy->nodes[n].dead, 0);
    OK(dfg_pass_verify(copy, &report));
    dfg_graph_destroy(copy);
    dfg_graph_destroy(g);
}

/* A constant node the CPU backend rejects (an index out of range) is not
 * folded: compiling succeeds and the error waits for run time. */
static void test_fold_leaves_failing_nodes_to_run_time(void **state)
{
    (void)state;
    rng_state = 19;
    dfg_graph *g;
    OK(dfg_graph_create(NULL, &g));
    dfg_value x = input(g, "x", 1, DIMS(1));
    dfg_value data = random_leaf(g, "data", 1, 1, DIMS(4));
    int64_t bad_index = 7;
    dfg_value idx, gathered, y;
    OK(dfg_graph_constant(g, "idx", DFG_I64, 1, DIMS(1), &bad_index, &idx));
    OK(dfg_gather(g, data, idx, 0, &gathered));
    OK(dfg_add(g, x, gathered, &y));
    OK(dfg_graph_output(g, y, "y"));
    dfg_program *p = compile(g, DFG_PLANNER_GREEDY_SIZE, 1, 1, 1);
    check_program(p);
    assert_int_equal(p->n_steps, 2);
    assert_int_equal(p->steps[0].op, DFG_OP_GATHER);
    const dfg_backend *cpu;
    dfg_session *s;
    OK(dfg_backend_find("cpu", &cpu));
    OK(dfg_session_create(p, cpu, NULL, &s));
    float xs[1] = {1.0f}, out[1];
    const void *in[1] = {xs};
    void *outs[1] = {out};
    assert_int_not_equal(dfg_session_run(s, in, outs), DFG_OK);
    assert_non_null(strstr(dfg_last_error(), "out of range"));
    dfg_session_destroy(s);
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
}

static void test_dce_removes_unused_branch(void **state)
{
    (void)state;
    rng_state = 13;
    dfg_graph *g;
    OK(dfg_graph_create(NULL, &g));
    dfg_value x = input(g, "x", 2, DIMS(4, 4));
    dfg_value w = random_leaf(g, "unused_w", 0, 2, DIMS(4, 4));
    dfg_value a, b, c, d;
    OK(dfg_relu(g, x, &a));
    OK(dfg_exp(g, x, &b));
    OK(dfg_matmul(g, b, w, &c));
    OK(dfg_exp(g, c, &d)); /* no post-op: the matmul stays a step */
    OK(dfg_graph_output(g, a, "a"));

    dfg_graph *copy;
    OK(dfg_graph_clone(g, NULL, &copy));
    dfg_pass_report report;
    OK(dfg_pass_dce(copy, &report));
    assert_int_equal(report.nodes_removed, 3);
    assert_int_equal(report.values_removed, 1);
    dfg_graph_destroy(copy);

    dfg_program *p = compile(g, DFG_PLANNER_GREEDY_SIZE, 1, 1, 1);
    check_program(p);
    assert_int_equal(p->n_steps, 1);
    assert_int_equal(tensor_named(p, "unused_w"), -1);
    assert_int_equal(p->region_bytes[DFG_REGION_WEIGHTS], 0);
    dfg_program_destroy(p);
    p = compile(g, DFG_PLANNER_GREEDY_SIZE, 1, 0, 1);
    check_program(p);
    assert_int_equal(p->n_steps, 4);
    assert_true(tensor_named(p, "unused_w") >= 0);
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
}

/* ---- views and in place ----------------------------------------------- */

static void test_views_extend_source_lifetime(void **state)
{
    (void)state;
    dfg_graph *g;
    OK(dfg_graph_create(NULL, &g));
    dfg_value x = input(g, "x", 2, DIMS(4, 6));
    dfg_value a, v, s_rows, s_cols, b, c, d, e, y;
    OK(dfg_relu(g, x, &a));                                   /* step 0 */
    OK(dfg_reshape(g, a, 2, DIMS(6, 4), &v));                 /* step 1 */
    OK(dfg_slice(g, a, 1, DIMS(0), DIMS(1), DIMS(3), NULL, &s_rows)); /* 2 */
    OK(dfg_slice(g, a, 1, DIMS(1), DIMS(1), DIMS(5), NULL, &s_cols)); /* 3 */
    OK(dfg_sigmoid(g, x, &b));                                /* step 4 */
    OK(dfg_reshape(g, b, 2, DIMS(6, 4), &c));                 /* step 5 */
    OK(dfg_add(g, v, c, &d));                                 /* step 6 */
    OK(dfg_reduce_sum(g, s_rows, 0, NULL, 0, &e));        /* step 7 */
    OK(dfg_add(g, e, s_cols, &y));                            /* step 8 */
    OK(dfg_graph_output(g, d, "d"));
    OK(dfg_graph_output(g, y, "y"));
    dfg_program *p = compile(g, DFG_PLANNER_GREEDY_SIZE, 1, 1, 0);
    check_program(p);
    const dfg_program_tensor *ta = tensor_of(p, g, a), *tv = tensor_of(p, g, v);
    const dfg_program_tensor *tr = tensor_of(p, g, s_rows), *tc = tensor_of(p, g, s_cols);
    int32_t ia = (int32_t)(ta - p->tensors);
    assert_int_equal(tv->kind, DFG_TENSOR_VIEW);
    assert_int_equal(tv->alias_of, ia);
    assert_int_equal(tv->offset, ta->offset);
    assert_int_equal(tr->alias_of, ia);
    assert_int_equal(tr->offset, ta->offset + 6 * 4);
    assert_int_equal(tc->alias_of, -1); /* columns: not contiguous */
    /* a lives until its view v is read at step 6 and s_rows at step 7. */
    assert_int_equal(ta->first_step, 0);
    assert_int_equal(ta->last_step, 7);
    assert_int_equal(tv->first_step, 1);
    assert_int_equal(tv->last_step, 6);
    assert_int_equal(p->n_steps, 9); /* view ops stay as steps */

    rng_state = 14;
    float xs[24];
    fill_random(xs, 24);
    double dref[24], yref[16];
    for (int i = 0; i < 24; i++)
        dref[i] = fmax(xs[i], 0.0) + 1.0 / (1.0 + exp(-(double)xs[i]));
    double rows = 0;
    for (int i = 6; i < 18; i++)
        rows += fmax(xs[i], 0.0);
    for (int r = 0; r < 4; r++)
        for (int k = 0; k < 4; k++)
            yref[r * 4 + k] = rows + fmax(xs[r * 6 + 1 + k], 0.0);
    float *out[2];
    const void *in[1] = {xs};
    run_program(p, in, out);
    assert_true(relative_error(out[0], dref, 24) < 1e-6);
    assert_true(relative_error(out[1], yref, 16) < 1e-6);
    free(out[0]);
    free(out[1]);
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
}

static void test_outputs_that_are_views_are_materialised(void **state)
{
    (void)state;
    dfg_graph *g;
    OK(dfg_graph_create(NULL, &g));
    dfg_value x = input(g, "x", 2, DIMS(2, 8));
    dfg_value w = random_leaf(g, "w", 0, 2, DIMS(2, 8));
    dfg_value rx, rw, a, ra, rb;
    OK(dfg_reshape(g, x, 1, DIMS(16), &rx));
    OK(dfg_reshape(g, w, 1, DIMS(16), &rw));
    OK(dfg_relu(g, x, &a));
    OK(dfg_reshape(g, a, 1, DIMS(16), &ra));
    OK(dfg_flatten(g, a, 0, &rb));
    OK(dfg_graph_output(g, rx, "rx"));
    OK(dfg_graph_output(g, rw, "rw"));
    OK(dfg_graph_output(g, ra, "ra"));
    OK(dfg_graph_output(g, rb, "rb"));
    dfg_program *p = compile(g, DFG_PLANNER_GREEDY_SIZE, 1, 1, 1);
    check_program(p);
    /* Views of an input or a weight, and a second view of bytes already
     * holding an output, are copies with arena bytes of their own. */
    assert_int_equal(tensor_of(p, g, rx)->alias_of, -1);
    assert_int_equal(tensor_of(p, g, rw)->alias_of, -1);
    assert_int_equal(tensor_of(p, g, rw)->region, DFG_REGION_ARENA);
    assert_true(tensor_of(p, g, ra)->alias_of >= 0);
    assert_int_equal(tensor_of(p, g, rb)->alias_of, -1);
    for (int32_t i = 0; i < p->n_outputs; i++)
        for (int32_t j = i + 1; j < p->n_outputs; j++) {
            const dfg_program_tensor *a1 = &p->tensors[p->outputs[i]];
            const dfg_program_tensor *a2 = &p->tensors[p->outputs[j]];
            assert_true(a1->offset + a1->bytes <= a2->offset ||
                        a2->offset + a2->bytes <= a1->offset);
        }
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
}

/* A graph output may be a leaf itself: it is lowered as that leaf's tensor
 * (an input's arena bytes, a weight's stored bytes), with no step. */
static void test_leaf_outputs(void **state)
{
    (void)state;
    rng_state = 18;
    dfg_graph *g;
    OK(dfg_graph_create(NULL, &g));
    dfg_value x = input(g, "x", 1, DIMS(32));
    dfg_value w = random_leaf(g, "w", 0, 1, DIMS(32));
    dfg_value a;
    OK(dfg_neg(g, x, &a));
    OK(dfg_graph_output(g, a, "a"));
    OK(dfg_graph_output(g, x, NULL));
    OK(dfg_graph_output(g, w, NULL));
    dfg_program *p = compile(g, DFG_PLANNER_GREEDY_SIZE, 1, 1, 1);
    check_program(p);
    assert_int_equal(p->n_steps, 1);
    assert_int_equal(tensor_of(p, g, a)->alias_of, -1); /* x is an input */
    assert_int_equal(p->tensors[p->outputs[1]].kind, DFG_TENSOR_INPUT);
    assert_int_equal(p->tensors[p->outputs[2]].kind, DFG_TENSOR_WEIGHT);
    float xs[32];
    fill_random(xs, 32);
    double ref[3][32];
    const float *wd = (const float *)tensor_of(p, g, w)->data;
    for (int i = 0; i < 32; i++) {
        ref[0][i] = -(double)xs[i];
        ref[1][i] = xs[i];
        ref[2][i] = wd[i];
    }
    float *out[3];
    const void *in[1] = {xs};
    run_program(p, in, out);
    for (int k = 0; k < 3; k++) {
        assert_true(relative_error(out[k], ref[k], 32) < 1e-7);
        free(out[k]);
    }
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
}

/* x -> a = relu(x) -> b = exp(a); c = neg(a); y = add(b, c). */
static void test_in_place_only_over_dying_activations(void **state)
{
    (void)state;
    dfg_graph *g;
    OK(dfg_graph_create(NULL, &g));
    dfg_value x = input(g, "x", 1, DIMS(64));
    dfg_value a, b, c, y;
    OK(dfg_relu(g, x, &a)); /* x is a graph input: never overwritten */
    OK(dfg_exp(g, a, &b));  /* a is read later: not here */
    OK(dfg_neg(g, a, &c));  /* a dies here: c over a */
    OK(dfg_add(g, b, c, &y)); /* both die: y over b */
    OK(dfg_graph_output(g, y, "y"));
    dfg_program *p = compile(g, DFG_PLANNER_GREEDY_SIZE, 1, 1, 1);
    check_program(p);
    int32_t ia = (int32_t)(tensor_of(p, g, a) - p->tensors);
    int32_t ib = (int32_t)(tensor_of(p, g, b) - p->tensors);
    assert_int_equal(tensor_of(p, g, a)->alias_of, -1);
    assert_int_equal(tensor_of(p, g, b)->alias_of, -1);
    assert_int_equal(tensor_of(p, g, c)->alias_of, ia);
    assert_int_equal(tensor_of(p, g, y)->alias_of, ib);
    assert_int_equal(tensor_of(p, g, y)->kind, DFG_TENSOR_OUTPUT);
    assert_int_equal(tensor_of(p, g, b)->last_step, 3);

    rng_state = 15;
    float xs[64];
    fill_random(xs, 64);
    double ref[64];
    for (int i = 0; i < 64; i++)
        ref[i] = exp(fmax(xs[i], 0.0)) - fmax(xs[i], 0.0);
    float *out[1];
    const void *in[1] = {xs};
    run_program(p, in, out);
    assert_true(relative_error(out[0], ref, 64) < 1e-6);
    free(out[0]);
    dfg_program_destroy(p);

    p = compile(g, DFG_PLANNER_GREEDY_SIZE, 1, 1, 0);
    check_program(p);
    for (int32_t i = 0; i < p->n_tensors; i++)
        assert_int_equal(p->tensors[i].alias_of, -1);
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
}

static void test_no_in_place_over_outputs_or_shared_bytes(void **state)
{
    (void)state;
    dfg_graph *g;
    OK(dfg_graph_create(NULL, &g));
    dfg_value x = input(g, "x", 2, DIMS(4, 4));
    dfg_value a, b, v, c, vc, e;
    OK(dfg_relu(g, x, &a));
    OK(dfg_graph_output(g, a, "a"));
    OK(dfg_neg(g, a, &b));                        /* a is an output */
    OK(dfg_reshape(g, b, 1, DIMS(16), &v));
    OK(dfg_sigmoid(g, b, &c));                    /* b read later via v */
    OK(dfg_reshape(g, c, 1, DIMS(16), &vc));
    OK(dfg_add(g, v, vc, &e));                    /* b's bytes die here */
    OK(dfg_graph_output(g, e, "e"));
    dfg_program *p = compile(g, DFG_PLANNER_GREEDY_SIZE, 1, 1, 1);
    check_program(p);
    int32_t ib = (int32_t)(tensor_of(p, g, b) - p->tensors);
    assert_int_equal(tensor_of(p, g, b)->alias_of, -1);
    assert_int_equal(tensor_of(p, g, c)->alias_of, -1);
    assert_int_equal(tensor_of(p, g, e)->alias_of, ib);
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
}

/* A 3x3 convolution needs im2col scratch: a workspace tensor of its own
 * step, planned in the arena, that must not clobber anything live. */
static void test_workspace_is_planned_per_step(void **state)
{
    (void)state;
    rng_state = 17;
    dfg_graph *g;
    OK(dfg_graph_create(NULL, &g));
    dfg_value x = input(g, "x", 4, DIMS(1, 3, 8, 8));
    dfg_value w = random_leaf(g, "w", 0, 4, DIMS(4, 3, 3, 3));
    dfg_value a, c, y;
    OK(dfg_relu(g, x, &a));
    OK(dfg_conv2d(g, a, w, DFG_NO_VALUE, NULL, &c));
    OK(dfg_tanh(g, c, &y));
    OK(dfg_graph_output(g, y, "y"));
    for (int planner = 0; planner < DFG_PLANNER_COUNT; planner++) {
        dfg_program *p = compile(g, (dfg_planner)planner, 1, 1, 1);
        check_program(p);
        assert_int_equal(p->steps[0].workspace, -1);
        int32_t ws = p->steps[1].workspace;
        assert_true(ws >= 0);
        assert_int_equal(p->tensors[ws].kind, DFG_TENSOR_WORKSPACE);
        assert_int_equal(p->tensors[ws].region, DFG_REGION_ARENA);
        assert_int_equal(p->tensors[ws].first_step, 1);
        assert_int_equal(p->tensors[ws].last_step, 1);
        assert_true(p->tensors[ws].bytes > 0);
        assert_int_equal(p->tensors[ws].alias_of, -1);

        float xs[192];
        fill_random(xs, 192);
        const float *wd = (const float *)tensor_of(p, g, w)->data;
        double ref[4 * 6 * 6];
        for (int m = 0; m < 4; m++)
            for (int i = 0; i < 6; i++)
                for (int j = 0; j < 6; j++) {
                    double sum = 0;
                    for (int ch = 0; ch < 3; ch++)
                        for (int u = 0; u < 3; u++)
                            for (int v = 0; v < 3; v++)
                                sum += fmax(xs[ch * 64 + (i + u) * 8 + j + v], 0.0) *
                                       wd[((m * 3 + ch) * 3 + u) * 3 + v];
                    ref[(m * 6 + i) * 6 + j] = tanh(sum);
                }
        float *out[1];
        const void *in[1] = {xs};
        run_program(p, in, out);
        assert_true(relative_error(out[0], ref, 144) < 1e-5);
        free(out[0]);
        dfg_program_destroy(p);
    }
    dfg_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clone_and_reorder_keep_names),
        cmocka_unit_test(test_fold_constant_subgraph),
        cmocka_unit_test(test_fold_report_and_limits),
        cmocka_unit_test(test_fold_leaves_failing_nodes_to_run_time),
        cmocka_unit_test(test_dce_removes_unused_branch),
        cmocka_unit_test(test_views_extend_source_lifetime),
        cmocka_unit_test(test_outputs_that_are_views_are_materialised),
        cmocka_unit_test(test_leaf_outputs),
        cmocka_unit_test(test_in_place_only_over_dying_activations),
        cmocka_unit_test(test_no_in_place_over_outputs_or_shared_bytes),
        cmocka_unit_test(test_workspace_is_planned_per_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
