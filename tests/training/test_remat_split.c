/* Recomputed copies made a second time with the copies they read
 * (passes/remat/remat_split.c, dfg_remat_split_chains): a block's first conv
 * output c, recomputed from a recomputed copy of the block's input, is
 * read at once by a recomputation and again, by that recomputation's
 * twin and a backward node, after a wide step. Made again (with the
 * input's copy) just before the backward reader, and the twin dropped
 * for the first recomputation, c dies before the wide step and the arena
 * shrinks; made again alone (dfg_remat_split_copies) the input's copy
 * lives across the wide step in c's place, and nothing is done. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "dfg/dfg.h"
#include "ir/graph.h"
#include "passes/remat/remat.h"
#include "tests/training/remat_fixtures.h"

#define ROWS 64
#define COLS 256
#define WIDE (8 * COLS)

/* The node index of the twin recomputation in the test graph. */
typedef struct block_copies {
    int32_t twin;
} block_copies;

/* xc = relu(x), c = xc w, r = tanh(c) (copies), r through a product 8
 * times wider and back to n, r2 = tanh(c) (r's twin), late = ((n + r) +
 * r2) + c, out = late + x (x lives to the end). */
static dfg_graph *block(block_copies *m)
{
    int32_t xi;
    dfg_graph *g = remat_graph(ROWS, COLS, &xi);
    int32_t w = remat_weight(g, "w", COLS, COLS);
    int32_t at;
    int32_t xc = remat_node(g, DFG_OP_RELU, "xr/recompute_1000", xi, -1,
                            &at);
    int32_t c = remat_node(g, DFG_OP_MATMUL, "mm/recompute_1001", xc, w,
                           &at);
    int32_t r = remat_node(g, DFG_OP_TANH, "t/recompute_1002", c, -1, &at);
    int32_t b = remat_node(g, DFG_OP_MATMUL, "wide", r,
                           remat_weight(g, "w_wide", COLS, WIDE), &at);
    int32_t n = remat_node(g, DFG_OP_MATMUL, "narrow", b,
                           remat_weight(g, "w_narrow", WIDE, COLS), &at);
    int32_t r2 = remat_node(g, DFG_OP_TANH, "t/recompute_1003", c, -1,
                            &m->twin);
    int32_t s = remat_node(g, DFG_OP_ADD, "s", n, r, &at);
    s = remat_node(g, DFG_OP_ADD, "s2", s, r2, &at);
    int32_t late = remat_node(g, DFG_OP_ADD, "late", s, c, &at);
    int32_t out = remat_node(g, DFG_OP_ADD, "out", late, xi, &at);
    assert_int_equal(dfg_graph_output(g, dfg_graph_handle(g, out), "out"),
                     DFG_OK);
    return g;
}

typedef dfg_status (*make_again)(dfg_graph *, const dfg_compile_options *,
                                 dfg_remat_report *, int64_t *);

/* Runs split on g with a budget one byte under its arena; the arena
 * before and after, and the extra FLOPs. */
static void split(dfg_graph *g, make_again fn, int64_t *before,
                  int64_t *after, int64_t *extra)
{
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    dfg_remat_report report = {0};
    assert_int_equal(dfg_remat_trial_arena(g, &o, before), DFG_OK);
    report.arena = *before;
    report.budget = *before - 1;
    *extra = 0;
    assert_int_equal(fn(g, &o, &report, extra), DFG_OK);
    assert_int_equal(dfg_remat_trial_arena(g, &o, after), DFG_OK);
    assert_int_equal(*after, report.arena);
}

static int copies_of(const dfg_graph *g, const char *base)
{
    int count = 0;
    for (int32_t n = 0; n < g->n_nodes; n++)
        count += !g->nodes[n].dead && g->nodes[n].name &&
                 strncmp(g->nodes[n].name, base, strlen(base)) == 0;
    return count;
}

static void test_a_copy_is_made_again_with_the_copy_it_reads(void **state)
{
    (void)state;
    block_copies m;
    dfg_graph *g = block(&m);
    int64_t before, after, extra;
    split(g, dfg_remat_split_chains, &before, &after, &extra);
    assert_true(after <= before - (int64_t)ROWS * COLS * 4);
    assert_int_equal(copies_of(g, "mm/recompute_"), 2);
    assert_int_equal(copies_of(g, "xr/recompute_"), 2);
    assert_int_equal(copies_of(g, "t/recompute_"), 1);
    assert_true(g->nodes[m.twin].dead);
    /* a product and a relu more, a tanh fewer (one FLOP an element) */
    assert_int_equal(extra, 2LL * ROWS * COLS * COLS);
    dfg_graph_destroy(g);
}

static void test_a_copy_made_again_alone_does_not_help(void **state)
{
    (void)state;
    block_copies m;
    dfg_graph *g = block(&m);
    int64_t before, after, extra;
    split(g, dfg_remat_split_copies, &before, &after, &extra);
    assert_int_equal(after, before);
    assert_int_equal(extra, 0);
    assert_int_equal(copies_of(g, "mm/recompute_"), 1);
    assert_false(g->nodes[m.twin].dead);
    dfg_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_copy_is_made_again_with_the_copy_it_reads),
        cmocka_unit_test(test_a_copy_made_again_alone_does_not_help),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
