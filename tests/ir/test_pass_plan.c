/* dfg_compile's plan as a whole: liveness checked by hand, the contract
 * (caller's graph unchanged, bad options and graphs refused) and the plan's
 * invariants on thousands of seeded random graphs, whose results must not
 * depend on reuse or aliasing. Helpers: pass_check.h. */
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
    OK(dfg_pass_alias(g, &s, NULL, 0, NULL, al, &alias, &report));
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
    assert_int_equal(dfg_plan_lower_bound(l.buffers, l.n_buffers, 256, NULL), 4 * 512);
    dfg_liveness_free(&l, al);
    dfg_alias_plan_free(&alias, al);

    /* In place: c may take b's bytes (they die at step 5, read through
     * the view b2). */
    OK(dfg_pass_alias(g, &s, NULL, 1, NULL, al, &alias, &report));
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
    dfg_type t = {info.dtype, info.rank, {0}, 0};
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
        cmocka_unit_test(test_liveness_hand_checked),
        cmocka_unit_test(test_callers_graph_unchanged),
        cmocka_unit_test(test_bad_options_and_graphs),
        cmocka_unit_test(test_random_graphs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
