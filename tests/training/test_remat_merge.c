/* Recomputed copies merged once a budget is met (passes/remat/remat_merge.c):
 * a value made three times (the forward's and two recomputations) is
 * made once where the plan still fits the budget, and a copy stays where
 * serving its readers from an earlier copy would grow the arena past
 * the budget, unless a saved activation alive at that peak is recomputed
 * to pay for it, for fewer FLOPs than the merge saves. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "dfg/dfg.h"
#include "ir/graph.h"
#include "passes/remat/remat.h"
#include "tests/training/remat_fixtures.h"

#define ROWS 64
#define COLS 256
#define WIDE (8 * COLS)

/* The node indices of y = x w (node "mm") and of its two copies. */
typedef struct made_three_times {
    int32_t y, first_copy, second_copy;
} made_three_times;

/* What the saved activation k, of y's size, is made by. */
typedef enum saved_k {
    NO_K,
    K_RELU,          /* relu(x): 1 FLOP per element */
    K_NARROW_MATMUL, /* x2 w_k, x2 [ROWS, COLS / 8]: an eighth of a copy */
    K_MATMUL,        /* x w_k: as many FLOPs as a copy of y */
} saved_k;

static int32_t saved_k_node(dfg_graph *g, saved_k kind, int32_t xi,
                            int32_t x2)
{
    int32_t at;
    if (kind == K_RELU)
        return remat_node(g, DFG_OP_RELU, "k", xi, -1, &at);
    if (kind == K_MATMUL)
        return remat_node(g, DFG_OP_MATMUL, "k", xi,
                          remat_weight(g, "w_k", COLS, COLS), &at);
    return remat_node(g, DFG_OP_MATMUL, "k", x2,
                      remat_weight(g, "w_k", COLS / 8, COLS), &at);
}

/* y = x w, [k, a saved activation,] t = tanh(y), u = t + copy of y, [u
 * through a product 8 times wider and back], out = u + another copy of
 * y [+ k, a gradient] + x [+ x2 w_2] (x and x2 live to the end, so the
 * copies cannot take their place). */
static dfg_graph *graph_with(int wide_between, saved_k kind,
                             made_three_times *m)
{
    int32_t xi;
    dfg_graph *g = remat_graph(ROWS, COLS, &xi);
    int32_t w = remat_weight(g, "w", COLS, COLS);
    int32_t at, x2 = -1;
    if (kind == K_NARROW_MATMUL) {
        dfg_value v;
        assert_int_equal(dfg_graph_input(g, "x2", DFG_F32, 2,
                                         (int64_t[]){ROWS, COLS / 8}, &v),
                         DFG_OK);
        x2 = dfg_graph_index(g, v);
    }
    int32_t y = remat_node(g, DFG_OP_MATMUL, "mm", xi, w, &m->y);
    int32_t k = kind != NO_K ? saved_k_node(g, kind, xi, x2) : -1;
    if (k >= 0)
        g->values[k].role = DFG_ROLE_SAVED_ACTIVATION;
    int32_t t = remat_node(g, DFG_OP_TANH, "t", y, -1, &at);
    int32_t c1 = remat_node(g, DFG_OP_MATMUL, "mm/recompute_10", xi, w,
                            &m->first_copy);
    int32_t u = remat_node(g, DFG_OP_ADD, "u", t, c1, &at);
    if (wide_between) {
        int32_t b = remat_node(g, DFG_OP_MATMUL, "wide", u,
                               remat_weight(g, "w_wide", COLS, WIDE), &at);
        u = remat_node(g, DFG_OP_MATMUL, "narrow", b,
                       remat_weight(g, "w_narrow", WIDE, COLS), &at);
    }
    int32_t c2 = remat_node(g, DFG_OP_MATMUL, "mm/recompute_20", xi, w,
                            &m->second_copy);
    int32_t sum = remat_node(g, DFG_OP_ADD, "sum", u, c2, &at);
    if (k >= 0) {
        sum = remat_node(g, DFG_OP_ADD, "k_grad", sum, k, &at);
        g->values[sum].role = DFG_ROLE_GRADIENT;
    }
    int32_t out = remat_node(g, DFG_OP_ADD, "out", sum, xi, &at);
    if (x2 >= 0)
        out = remat_node(g, DFG_OP_ADD, "out_x2", out,
                         remat_node(g, DFG_OP_MATMUL, "x2_w2", x2,
                                    remat_weight(g, "w_2", COLS / 8, COLS),
                                    &at),
                         &at);
    assert_int_equal(dfg_graph_output(g, dfg_graph_handle(g, out), "result"),
                     DFG_OK);
    return g;
}

static dfg_graph *graph_of(int wide_between, made_three_times *m)
{
    return graph_with(wide_between, NO_K, m);
}

/* Merges g's copies under budget (0: the arena g plans to now); the
 * extra FLOPs left of the two copies' and the arena. */
static void merge(dfg_graph *g, int64_t budget, int64_t *extra,
                  int64_t *arena)
{
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    dfg_remat_report report = {.budget = budget};
    assert_int_equal(dfg_remat_trial_arena(g, &o, &report.arena), DFG_OK);
    if (budget == 0)
        report.budget = report.arena;
    int64_t copy = 2LL * ROWS * COLS * COLS;
    *extra = 2 * copy;
    assert_int_equal(dfg_remat_merge_copies(g, &o, dfg_remat_total_flops(g),
                                            &report, extra), DFG_OK);
    assert_true(report.arena <= report.budget);
    assert_int_equal(dfg_remat_trial_arena(g, &o, arena), DFG_OK);
    assert_int_equal(*arena, report.arena);
}

static int reads(const dfg_graph *g, int32_t v)
{
    for (int32_t n = 0; n < g->n_nodes; n++)
        if (!g->nodes[n].dead && dfg_remat_reads(&g->nodes[n], v))
            return 1;
    return 0;
}

static void test_copies_merge_into_the_value_where_the_plan_fits(void **state)
{
    (void)state;
    made_three_times m;
    dfg_graph *g = graph_of(0, &m);
    int64_t extra, arena;
    merge(g, (int64_t)1 << 40, &extra, &arena);
    assert_true(g->nodes[m.first_copy].dead);
    assert_true(g->nodes[m.second_copy].dead);
    assert_int_equal(extra, 0);
    assert_false(reads(g, g->nodes[m.first_copy].outputs[0]));
    assert_false(reads(g, g->nodes[m.second_copy].outputs[0]));
    dfg_graph_destroy(g);
}

/* The first copy can be the forward's y at the same arena (y dies where
 * the copy is born); the second would keep y alive across the wide
 * product, past a budget of the arena as it is. */
static void test_a_copy_that_would_grow_the_arena_stays(void **state)
{
    (void)state;
    made_three_times m;
    dfg_graph *g = graph_of(1, &m);
    int64_t extra, arena;
    merge(g, 0, &extra, &arena);
    assert_true(g->nodes[m.first_copy].dead);
    assert_false(g->nodes[m.second_copy].dead);
    assert_int_equal(extra, 2LL * ROWS * COLS * COLS);
    assert_true(reads(g, g->nodes[m.y].outputs[0]));
    dfg_graph_destroy(g);

    g = graph_of(1, &m);
    merge(g, (int64_t)1 << 40, &extra, &arena);
    assert_true(g->nodes[m.second_copy].dead);
    assert_int_equal(extra, 0);
    dfg_graph_destroy(g);
}

/* The live recomputations of op in g. */
static int32_t recomputations(const dfg_graph *g, dfg_op op)
{
    int32_t copies = 0;
    for (int32_t n = 0; n < g->n_nodes; n++)
        copies += !g->nodes[n].dead && g->nodes[n].op == op &&
                  dfg_remat_is_recomputation(&g->nodes[n]);
    return copies;
}

/* With k alive across the wide product too, keeping y there misses the
 * budget by k's bytes: k, a relu of x (kept anyway), is recomputed just
 * before its reader, and the second copy goes. */
static void test_a_cheap_recomputation_pays_for_a_merge(void **state)
{
    (void)state;
    made_three_times m;
    dfg_graph *g = graph_with(1, K_RELU, &m);
    int64_t extra, arena;
    merge(g, 0, &extra, &arena);
    assert_true(g->nodes[m.first_copy].dead);
    assert_true(g->nodes[m.second_copy].dead);
    assert_int_equal(extra, ROWS * COLS); /* k's relu, made again */
    assert_int_equal(recomputations(g, DFG_OP_RELU), 1);
    dfg_graph_destroy(g);
}

/* k = x2 w_k costs 16 FLOPs per byte freed, above what remat_cheap.c
 * takes, but an eighth of the copy's product: made again, it pays. */
static void test_a_dearer_recomputation_pays_below_the_saving(void **state)
{
    (void)state;
    made_three_times m;
    dfg_graph *g = graph_with(1, K_NARROW_MATMUL, &m);
    int64_t extra, arena;
    merge(g, 0, &extra, &arena);
    assert_true(g->nodes[m.second_copy].dead);
    assert_int_equal(extra, 2LL * ROWS * (COLS / 8) * COLS);
    assert_int_equal(recomputations(g, DFG_OP_MATMUL), 1); /* k's */
    dfg_graph_destroy(g);
}

/* k = x w_k costs what the merge saves: the copy stays and k is kept. */
static void test_no_payment_costs_the_saving(void **state)
{
    (void)state;
    made_three_times m;
    dfg_graph *g = graph_with(1, K_MATMUL, &m);
    int64_t extra, arena;
    merge(g, 0, &extra, &arena);
    assert_false(g->nodes[m.second_copy].dead);
    assert_int_equal(extra, 2LL * ROWS * COLS * COLS);
    assert_int_equal(recomputations(g, DFG_OP_MATMUL), 1); /* y's */
    dfg_graph_destroy(g);
}

/* A second output b = xb w_b, xb [rows, COLS], of 2 * rows * COLS * WIDE
 * FLOPs, so that a copy's product is a smaller part of the step. */
static void add_ballast(dfg_graph *g, int64_t rows)
{
    dfg_value xb;
    assert_int_equal(dfg_graph_input(g, "xb", DFG_F32, 2,
                                     (int64_t[]){rows, COLS}, &xb), DFG_OK);
    int32_t at;
    int32_t b = remat_node(g, DFG_OP_MATMUL, "ballast",
                           dfg_graph_index(g, xb),
                           remat_weight(g, "w_b", COLS, WIDE), &at);
    assert_int_equal(dfg_graph_output(g, dfg_graph_handle(g, b), "b"),
                     DFG_OK);
}

/* A merge must save 0.5% of the step's FLOPs: each copy is 0.75% of it
 * beside a ballast of 1040 rows (both merged; not under a 1% floor) and
 * 0.40% beside one of 1984 (both stay). */
static void test_a_merge_must_save_half_a_percent(void **state)
{
    (void)state;
    made_three_times m;
    int64_t extra, arena;
    dfg_graph *g = graph_of(0, &m);
    add_ballast(g, 1040);
    merge(g, (int64_t)1 << 40, &extra, &arena);
    assert_true(g->nodes[m.first_copy].dead);
    assert_true(g->nodes[m.second_copy].dead);
    assert_int_equal(extra, 0);
    dfg_graph_destroy(g);

    g = graph_of(0, &m);
    add_ballast(g, 1984);
    merge(g, (int64_t)1 << 40, &extra, &arena);
    assert_false(g->nodes[m.first_copy].dead);
    assert_false(g->nodes[m.second_copy].dead);
    assert_int_equal(extra, 4LL * ROWS * COLS * COLS);
    dfg_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copies_merge_into_the_value_where_the_plan_fits),
        cmocka_unit_test(test_a_copy_that_would_grow_the_arena_stays),
        cmocka_unit_test(test_a_cheap_recomputation_pays_for_a_merge),
        cmocka_unit_test(test_a_dearer_recomputation_pays_below_the_saving),
        cmocka_unit_test(test_no_payment_costs_the_saving),
        cmocka_unit_test(test_a_merge_must_save_half_a_percent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
