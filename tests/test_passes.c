/* The compiler passes and dfg_compile: folding, dead code, views, in-place
 * reuse, liveness, lowering and the plan's invariants, on small graphs
 * checked by hand and on thousands of seeded random graphs. */
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
#include "graph.h"
#include "pass.h"
#include "program.h"

#define OK(call) assert_int_equal((call), DFG_OK)
#define DIMS(...) (const int64_t[]){__VA_ARGS__}

/* ---- helpers ---------------------------------------------------------- */

static uint64_t rng_state;
static uint32_t rng_next(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}
static int32_t rng_below(int32_t n) { return (int32_t)(rng_next() % (uint32_t)n); }
static float rng_float(void) { return (float)rng_below(2000001) / 1e6f - 1.0f; }

static void fill_random(float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = rng_float();
}

static dfg_value input(dfg_graph *g, const char *name, int32_t rank,
                       const int64_t *shape)
{
    dfg_value v;
    OK(dfg_graph_input(g, name, DFG_F32, rank, shape, &v));
    return v;
}

static dfg_value random_leaf(dfg_graph *g, const char *name, int constant,
                             int32_t rank, const int64_t *shape)
{
    dfg_type t = {DFG_F32, rank, {0}};
    memcpy(t.shape, shape, (size_t)rank * sizeof *shape);
    int64_t n = dfg_type_numel(&t);
    float *data = malloc((size_t)n * sizeof *data + 1);
    fill_random(data, n);
    dfg_value v;
    if (constant)
        OK(dfg_graph_constant(g, name, DFG_F32, rank, shape, data, &v));
    else
        OK(dfg_graph_weight(g, name, DFG_F32, rank, shape, data, &v));
    free(data);
    return v;
}

static dfg_program *compile(const dfg_graph *g, dfg_planner planner,
                            int fold, int dce, int in_place)
{
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    o.planner = planner;
    o.fold_constants = fold;
    o.eliminate_dead_code = dce;
    o.reuse_inputs_in_place = in_place;
    dfg_program *p = NULL;
    dfg_status st = dfg_compile(g, &o, &p);
    if (st != DFG_OK)
        fail_msg("dfg_compile: %s", dfg_last_error());
    return p;
}

static int32_t tensor_named(const dfg_program *p, const char *name)
{
    for (int32_t i = 0; i < p->n_tensors; i++)
        if (strcmp(p->tensors[i].name, name) == 0)
            return i;
    return -1;
}

static const char *value_name(const dfg_graph *g, dfg_value v)
{
    dfg_tensor_info info;
    OK(dfg_graph_value_info(g, v, &info));
    return info.name;
}

static const dfg_program_tensor *tensor_of(const dfg_program *p,
                                           const dfg_graph *g, dfg_value v)
{
    int32_t t = tensor_named(p, value_name(g, v));
    assert_true(t >= 0);
    return &p->tensors[t];
}

static int intervals_overlap(const dfg_program_tensor *a,
                             const dfg_program_tensor *b)
{
    return a->first_step <= b->last_step && b->first_step <= a->last_step;
}

/* Every invariant of a compiled program, checked here independently of
 * dfg_program_verify as well as through it. */
static void check_program(const dfg_program *p)
{
    OK(dfg_program_verify(p));
    assert_int_equal(p->stats.verified, 1);
    assert_true(p->stats.lower_bound_bytes <= p->stats.arena_bytes);
    assert_true(p->stats.arena_bytes <= p->stats.no_reuse_bytes);
    assert_int_equal(p->stats.n_steps, p->n_steps);
    assert_int_equal(p->stats.n_tensors, p->n_tensors);
    assert_int_equal((int64_t)p->stats.arena_bytes, p->region_bytes[DFG_REGION_ARENA]);
    int64_t alignment = (int64_t)p->stats.alignment;
    for (int32_t i = 0; i < p->n_tensors; i++) {
        const dfg_program_tensor *t = &p->tensors[i];
        assert_true(t->offset >= 0 && t->offset + t->bytes <= p->region_bytes[t->region]);
        assert_true(t->first_step <= t->last_step || p->n_steps == 0);
        if (t->alias_of < 0) {
            assert_int_equal(t->offset % alignment, 0);
            continue;
        }
        const dfg_program_tensor *o = &p->tensors[t->alias_of];
        assert_int_equal(o->alias_of, -1);
        assert_int_equal(o->region, t->region);
        assert_true(o->offset <= t->offset && t->offset + t->bytes <= o->offset + o->bytes);
        assert_true(o->first_step <= t->first_step && t->last_step <= o->last_step);
    }
    /* Byte owners in the arena live at the same step never share bytes,
     * and the lower bound is the most bytes they hold at one step. */
    uint64_t bound = 0;
    for (int32_t s = 0; s < p->n_steps; s++) {
        uint64_t live = 0;
        for (int32_t i = 0; i < p->n_tensors; i++) {
            const dfg_program_tensor *t = &p->tensors[i];
            if (t->alias_of < 0 && t->region == DFG_REGION_ARENA &&
                t->first_step <= s && s <= t->last_step)
                live += (uint64_t)dfg_align_up(t->bytes, alignment);
        }
        bound = live > bound ? live : bound;
    }
    if (p->n_steps > 0)
        assert_int_equal(bound, p->stats.lower_bound_bytes);
    for (int32_t i = 0; i < p->n_tensors; i++) {
        const dfg_program_tensor *a = &p->tensors[i];
        if (a->alias_of >= 0 || a->region != DFG_REGION_ARENA)
            continue;
        for (int32_t j = i + 1; j < p->n_tensors; j++) {
            const dfg_program_tensor *b = &p->tensors[j];
            if (b->alias_of >= 0 || b->region != DFG_REGION_ARENA ||
                !intervals_overlap(a, b) || a->bytes == 0 || b->bytes == 0)
                continue;
            assert_true(a->offset + a->bytes <= b->offset ||
                        b->offset + b->bytes <= a->offset);
        }
    }
    /* Every step reads live tensors and writes tensors born there. */
    for (int32_t s = 0; s < p->n_steps; s++) {
        const dfg_program_step *st = &p->steps[s];
        for (int32_t i = 0; i < st->n_inputs; i++) {
            if (st->inputs[i] < 0)
                continue;
            const dfg_program_tensor *t = &p->tensors[st->inputs[i]];
            assert_true(t->first_step <= s && s <= t->last_step);
        }
        for (int32_t i = 0; i < st->n_outputs; i++)
            assert_int_equal(p->tensors[st->outputs[i]].first_step, s);
    }
}

/* Runs p on the CPU backend; outputs[i] receives malloc'd copies. */
static void run_program(const dfg_program *p, const void *const *inputs,
                        float **outputs)
{
    const dfg_backend *cpu;
    OK(dfg_backend_find("cpu", &cpu));
    dfg_session *s;
    dfg_status st = dfg_session_create(p, cpu, NULL, &s);
    if (st != DFG_OK)
        fail_msg("session: %s", dfg_last_error());
    for (int32_t i = 0; i < p->n_outputs; i++)
        outputs[i] = malloc((size_t)p->tensors[p->outputs[i]].bytes + 1);
    st = dfg_session_run(s, inputs, (void *const *)outputs);
    if (st != DFG_OK)
        fail_msg("run: %s", dfg_last_error());
    dfg_session_destroy(s);
}

static double relative_error(const float *x, const double *ref, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        num += ((double)x[i] - ref[i]) * ((double)x[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    return sqrt(num) / (sqrt(den) + 1e-300);
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
    OK(dfg_tanh(g, c, &d));
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

/* ---- liveness --------------------------------------------------------- */

static void test_liveness_hand_checked(void **state)
{
    (void)state;
    dfg_graph *g;
    OK(dfg_graph_create(NULL, &g));
    dfg_value x = input(g, "x", 1, DIMS(100));       /* 400 bytes */
    dfg_value a, b, v, b2, c, dead;
    OK(dfg_relu(g, x, &a));                          /* step 0 */
    OK(dfg_sigmoid(g, a, &b));                       /* step 1 */
    OK(dfg_reshape(g, a, 2, DIMS(10, 10), &v));      /* step 2 */
    OK(dfg_exp(g, x, &dead));                        /* step 3, unread */
    OK(dfg_reshape(g, b, 2, DIMS(10, 10), &b2));     /* step 4 */
    OK(dfg_add(g, b2, v, &c));                       /* step 5 */
    OK(dfg_graph_output(g, c, "c"));
    const dfg_allocator *al = NULL;
    dfg_schedule s;
    dfg_alias_plan alias;
    dfg_liveness l;
    dfg_pass_report report;
    dfg_node_costs costs;
    OK(dfg_node_costs_build(g, 0, NULL, al, &costs));
    OK(dfg_pass_schedule(g, NULL, NULL, al, &s));
    assert_int_equal(s.n_steps, 6);
    OK(dfg_pass_alias(g, &s, NULL, 0, al, &alias, &report));
    assert_int_equal(report.views, 2);
    assert_int_equal(report.in_place, 0);
    OK(dfg_pass_liveness(g, &s, &alias, &costs, al, &l));
    /* Byte owners x, a, b, dead, c in value order. */
    struct { int64_t size; int32_t first, last; } want[] = {
        {400, 0, 3}, {400, 0, 5}, {400, 1, 5}, {400, 3, 3}, {400, 5, 5},
    };
    assert_int_equal(l.n_buffers, 5);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(l.buffers[i].size, want[i].size);
        assert_int_equal(l.buffers[i].first_step, want[i].first);
        assert_int_equal(l.buffers[i].last_step, want[i].last);
    }
    /* Step 3 holds x, a, b and dead (400 bytes, 512 aligned): the most. */
    assert_int_equal(dfg_plan_lower_bound(l.buffers, l.n_buffers, 256), 4 * 512);
    dfg_liveness_free(&l, al);
    dfg_alias_plan_free(&alias, al);

    /* In place: c may take b's bytes (they die at step 5, read through
     * the view b2). */
    OK(dfg_pass_alias(g, &s, NULL, 1, al, &alias, &report));
    assert_int_equal(report.in_place, 1);
    int32_t ic = dfg_graph_index(g, c), ib = dfg_graph_index(g, b);
    assert_int_equal(alias.how[ic], DFG_ALIAS_INPLACE);
    assert_int_equal(alias.root[ic], alias.root[ib]);
    OK(dfg_pass_liveness(g, &s, &alias, &costs, al, &l));
    assert_int_equal(l.n_buffers, 4);
    dfg_liveness_free(&l, al);
    dfg_alias_plan_free(&alias, al);
    dfg_schedule_free(&s, al);
    dfg_node_costs_free(&costs, al);
    dfg_graph_destroy(g);
}

/* ---- dfg_compile's contract ------------------------------------------- */

static void test_callers_graph_unchanged(void **state)
{
    (void)state;
    rng_state = 16;
    dfg_graph *g;
    OK(dfg_graph_create(NULL, &g));
    dfg_value x = input(g, "x", 1, DIMS(8));
    dfg_value c = random_leaf(g, "c", 1, 1, DIMS(8));
    dfg_value a, b, y, unused;
    OK(dfg_exp(g, c, &a));
    OK(dfg_add(g, x, a, &b));
    OK(dfg_neg(g, b, &y));
    OK(dfg_tanh(g, x, &unused));
    OK(dfg_graph_output(g, y, NULL));
    dfg_program *p1 = compile(g, DFG_PLANNER_GREEDY_SIZE, 1, 1, 1);
    for (int32_t n = 0; n < g->n_nodes; n++)
        assert_int_equal(g->nodes[n].dead, 0);
    for (int32_t v = 0; v < g->n_values; v++)
        if (g->values[v].producer >= 0)
            assert_int_equal(g->values[v].kind, DFG_VALUE_NODE_OUTPUT);
    assert_null(g->values[dfg_graph_index(g, a)].data);
    dfg_program *p2 = compile(g, DFG_PLANNER_GREEDY_SIZE, 1, 1, 1);
    assert_int_equal(p1->n_steps, 2);
    assert_int_equal(p2->n_steps, p1->n_steps);
    assert_int_equal(p2->stats.arena_bytes, p1->stats.arena_bytes);
    size_t bytes = (size_t)p1->region_bytes[DFG_REGION_WEIGHTS];
    assert_int_equal(bytes, p2->region_bytes[DFG_REGION_WEIGHTS]);
    uint8_t *w1 = malloc(bytes + 1), *w2 = malloc(bytes + 1);
    assert_non_null(w1);
    assert_non_null(w2);
    dfg_program_gather_weights(p1, w1);
    dfg_program_gather_weights(p2, w2);
    assert_memory_equal(w1, w2, bytes);
    free(w1);
    free(w2);
    dfg_program_destroy(p1);
    dfg_program_destroy(p2);
    dfg_graph_destroy(g);
}

static void test_bad_options_and_graphs(void **state)
{
    (void)state;
    dfg_graph *g;
    OK(dfg_graph_create(NULL, &g));
    dfg_value x = input(g, "x", 1, DIMS(8)), y;
    OK(dfg_relu(g, x, &y));
    dfg_program *p = (dfg_program *)&p;
    /* No outputs yet. */
    assert_int_equal(dfg_compile(g, NULL, &p), DFG_ERR_INVALID_ARGUMENT);
    assert_null(p);
    assert_non_null(strstr(dfg_last_error(), "no outputs"));
    OK(dfg_graph_output(g, y, NULL));
    dfg_compile_options o;
    uint64_t bad_alignments[] = {0, 3, 96, (uint64_t)1 << 21};
    for (size_t i = 0; i < sizeof bad_alignments / sizeof *bad_alignments; i++) {
        dfg_compile_options_init(&o);
        o.alignment = bad_alignments[i];
        assert_int_equal(dfg_compile(g, &o, &p), DFG_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(dfg_last_error(), "alignment"));
    }
    dfg_compile_options_init(&o);
    o.planner = DFG_PLANNER_COUNT;
    assert_int_equal(dfg_compile(g, &o, &p), DFG_ERR_INVALID_ARGUMENT);
    o.planner = (dfg_planner)-1;
    assert_int_equal(dfg_compile(g, &o, &p), DFG_ERR_INVALID_ARGUMENT);
    assert_int_equal(dfg_compile(NULL, NULL, &p), DFG_ERR_INVALID_ARGUMENT);
    assert_int_equal(dfg_compile(g, NULL, NULL), DFG_ERR_INVALID_ARGUMENT);
    dfg_compile_options_init(&o);
    o.alignment = 1;
    OK(dfg_compile(g, &o, &p));
    check_program(p);
    dfg_program_destroy(p);

    dfg_planner planner;
    assert_int_equal(dfg_planner_from_name("greedy_breadth", &planner), 0);
    assert_int_equal(planner, DFG_PLANNER_GREEDY_BREADTH);
    assert_int_equal(dfg_planner_from_name("best", &planner), -1);
    assert_string_equal(dfg_planner_name(DFG_PLANNER_NO_REUSE), "no_reuse");
    assert_null(dfg_planner_name(DFG_PLANNER_COUNT));

    /* A graph broken behind the builder's back is caught by verify. */
    dfg_graph *broken;
    OK(dfg_graph_clone(g, NULL, &broken));
    broken->values[broken->nodes[0].outputs[0]].type.shape[0] = 9;
    assert_int_equal(dfg_compile(broken, NULL, &p), DFG_ERR_SHAPE);
    assert_non_null(strstr(dfg_last_error(), "relu"));
    broken->values[broken->nodes[0].outputs[0]].type.shape[0] = 8;
    broken->nodes[0].inputs[0] = broken->nodes[0].outputs[0];
    assert_int_equal(dfg_compile(broken, NULL, &p), DFG_ERR_INVALID_ARGUMENT);
    dfg_graph_destroy(broken);
    dfg_graph_destroy(g);
}

/* ---- random graphs ---------------------------------------------------- */

#define POOL 64

typedef struct random_graph {
    dfg_graph *graph;
    int32_t n;
    dfg_value values[POOL];
    int32_t n_inputs;
    int64_t input_numel[4];
} random_graph;

static dfg_type type_of(const random_graph *r, dfg_value v)
{
    dfg_tensor_info info;
    OK(dfg_graph_value_info(r->graph, v, &info));
    dfg_type t = {info.dtype, info.rank, {0}};
    memcpy(t.shape, info.shape, sizeof t.shape);
    return t;
}

static void keep(random_graph *r, dfg_value v)
{
    if (r->n < POOL)
        r->values[r->n++] = v;
    else
        r->values[rng_below(POOL)] = v;
}

/* A random value of the pool, preferably of the same type as `like`. */
static dfg_value partner(const random_graph *r, dfg_value like)
{
    dfg_type want = type_of(r, like);
    for (int tries = 0; tries < 8; tries++) {
        dfg_value v = r->values[rng_below(r->n)];
        dfg_type t = type_of(r, v);
        if (dfg_type_equal(&t, &want))
            return v;
    }
    return like;
}

static void add_random_op(random_graph *r, int32_t index)
{
    dfg_graph *g = r->graph;
    dfg_value x = r->values[rng_below(r->n)], out[4];
    dfg_type t = type_of(r, x);
    int64_t numel = dfg_type_numel(&t);
    switch (rng_below(9)) {
    case 0: OK(dfg_relu(g, x, &out[0])); break;
    case 1: OK(dfg_tanh(g, x, &out[0])); break;
    case 2: OK(dfg_add(g, x, partner(r, x), &out[0])); break;
    case 3: OK(dfg_max(g, partner(r, x), x, &out[0])); break;
    case 4: { /* x as [m, k] times a weight [k, n] */
        int64_t k = t.rank ? t.shape[t.rank - 1] : 1, n = 1 + rng_below(8);
        dfg_value m = x, w;
        if (t.rank != 2)
            OK(dfg_reshape(g, x, 2, DIMS(numel / k, k), &m));
        char name[32];
        snprintf(name, sizeof name, "w%d", (int)index);
        w = random_leaf(g, name, rng_below(4) == 0, 2, DIMS(k, n));
        OK(dfg_matmul(g, m, w, &out[0]));
        break;
    }
    case 5: OK(dfg_reshape(g, x, 1, DIMS(numel), &out[0])); break;
    case 6: {
        dfg_value pair[2] = {x, partner(r, x)};
        OK(dfg_concat(g, 2, pair, 0, &out[0]));
        break;
    }
    case 7:
        if (t.rank >= 1 && t.shape[0] % 2 == 0 && t.shape[0] > 0) {
            OK(dfg_split(g, x, 0, 2, NULL, out));
            keep(r, out[1]);
        } else {
            OK(dfg_identity(g, x, &out[0]));
        }
        break;
    default:
        if (t.rank >= 1 && t.shape[0] > 1)
            OK(dfg_slice(g, x, 1, DIMS(0), DIMS(1), DIMS(t.shape[0]), NULL, &out[0]));
        else
            OK(dfg_neg(g, x, &out[0]));
        break;
    }
    keep(r, out[0]);
}

static void build_random_graph(random_graph *r, int32_t n_ops)
{
    memset(r, 0, sizeof *r);
    OK(dfg_graph_create(NULL, &r->graph));
    r->n_inputs = 1 + rng_below(2);
    for (int32_t i = 0; i < r->n_inputs; i++) {
        int64_t d0 = 1 + rng_below(6), d1 = 1 + rng_below(6);
        char name[16];
        snprintf(name, sizeof name, "in%d", (int)i);
        keep(r, input(r->graph, name, 2, DIMS(d0, d1)));
        r->input_numel[i] = d0 * d1;
    }
    if (rng_below(2))
        keep(r, random_leaf(r->graph, "k", 1, 2, DIMS(2, 3)));
    for (int32_t i = 0; i < n_ops; i++)
        add_random_op(r, i);
    /* The last value and a few others are outputs (each at most once). */
    int32_t n_out = 1 + rng_below(3);
    for (int32_t i = 0; i < n_out; i++) {
        dfg_value v = i == 0 ? r->values[r->n - 1] : r->values[rng_below(r->n)];
        (void)dfg_graph_output(r->graph, v, NULL);
    }
}

static void compare_outputs(const dfg_program *p, const dfg_program *ref,
                            const random_graph *r)
{
    float *ins[4];
    for (int32_t i = 0; i < r->n_inputs; i++) {
        ins[i] = malloc((size_t)r->input_numel[i] * sizeof(float));
        fill_random(ins[i], r->input_numel[i]);
    }
    float *got[8], *want[8];
    run_program(p, (const void *const *)ins, got);
    run_program(ref, (const void *const *)ins, want);
    for (int32_t i = 0; i < p->n_outputs; i++) {
        int64_t n = p->tensors[p->outputs[i]].bytes / 4;
        double *wd = malloc((size_t)n * sizeof *wd + 1);
        for (int64_t k = 0; k < n; k++)
            wd[k] = want[i][k];
        assert_true(relative_error(got[i], wd, n) < 1e-6);
        free(wd);
        free(got[i]);
        free(want[i]);
    }
    for (int32_t i = 0; i < r->n_inputs; i++)
        free(ins[i]);
}

static void test_random_graphs(void **state)
{
    (void)state;
    int graphs = 2000, runs = 0, views = 0, shared = 0;
    uint64_t arena = 0, lower = 0, no_reuse = 0;
    for (int seed = 1; seed <= graphs; seed++) {
        rng_state = 0x9E3779B97F4A7C15ull * (uint64_t)seed;
        random_graph r;
        build_random_graph(&r, 4 + rng_below(24));
        dfg_program *ref = NULL;
        for (int planner = 0; planner < DFG_PLANNER_COUNT; planner++) {
            int in_place = (seed + planner) % 4 != 0;
            dfg_program *p = compile(r.graph, (dfg_planner)planner,
                                     seed % 3 != 0, 1, in_place);
            check_program(p);
            if (planner == DFG_PLANNER_GREEDY_SIZE) {
                arena += p->stats.arena_bytes;
                lower += p->stats.lower_bound_bytes;
                no_reuse += p->stats.no_reuse_bytes;
                for (int32_t t = 0; t < p->n_tensors; t++) {
                    views += p->tensors[t].kind == DFG_TENSOR_VIEW;
                    shared += p->tensors[t].alias_of >= 0 &&
                                p->tensors[t].kind != DFG_TENSOR_VIEW;
                }
            }
            /* Reuse and aliasing must not change a single result. */
            if (seed % 10 == 0) {
                if (!ref)
                    ref = compile(r.graph, DFG_PLANNER_NO_REUSE, 0, 0, 0);
                compare_outputs(p, ref, &r);
                runs++;
            }
            dfg_program_destroy(p);
        }
        dfg_program_destroy(ref);
        dfg_graph_destroy(r.graph);
    }
    printf("random graphs: %d x %d planners, %d runs compared; greedy_size: "
           "%d views, %d other aliases (in place, output views), arena/lower "
           "bound %.3f, no_reuse/arena %.3f\n", graphs, DFG_PLANNER_COUNT,
           runs, views, shared, (double)arena / (double)lower,
           (double)no_reuse / (double)arena);
    assert_true(views > 0 && shared > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
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
        cmocka_unit_test(test_liveness_hand_checked),
        cmocka_unit_test(test_callers_graph_unchanged),
        cmocka_unit_test(test_bad_options_and_graphs),
        cmocka_unit_test(test_random_graphs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
