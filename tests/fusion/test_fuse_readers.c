/* The readers the fusion passes keep as they rewrite
 * (passes/fusion/fuse_rewrite.h): after every change the kept counts and
 * first two readers equal a count over the whole graph, for random
 * rewirings of many nodes at once (dfg_fuse_readers_change), random
 * chains rewritten into their last node (dfg_fuse_rewrite), and a pass
 * fusing a residual add and an activation into each of many matmuls
 * sharing one weight (dfg_fuse_post_ops). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "dfg/dfg.h"
#include "ir/graph.h"
#include "passes/fusion/fuse_rewrite.h"
#include "tests/support/pass_check.h"

#define NODES 300
#define SHARED 6 /* values most inputs read: many readers each */

/* r equals the readers counted afresh. */
static void assert_counted(const dfg_graph *g, const dfg_fuse_readers *r)
{
    dfg_fuse_readers fresh;
    OK(dfg_fuse_readers_make(g, &fresh));
    for (int32_t v = 0; v < g->n_values; v++) {
        assert_int_equal(r->count[v], fresh.count[v]);
        assert_int_equal(r->first[v], fresh.first[v]);
        assert_int_equal(r->second[v], fresh.second[v]);
    }
    dfg_fuse_readers_free(g, &fresh);
}

/* A value for an input: one of the first SHARED mostly, any other
 * sometimes, now and then none (-1). */
static int32_t some_value(const dfg_graph *g)
{
    int32_t pick = rng_below(16);
    return pick == 0 ? -1
           : pick < 4 ? rng_below(g->n_values)
                      : rng_below(SHARED);
}

/* NODES adds of [4] values drawn from seed: of any value before and of
 * one of the first SHARED; their readers into r. */
static dfg_graph *adds(uint64_t seed, dfg_fuse_readers *r)
{
    rng_state = seed;
    dfg_graph *g = NULL;
    OK(dfg_graph_create(NULL, &g));
    input(g, "x", 1, DIMS(4));
    for (int32_t n = 0; n < NODES; n++) {
        int32_t k = g->n_values;
        dfg_value out;
        OK(dfg_add(g, dfg_graph_handle(g, rng_below(k)),
                   dfg_graph_handle(g, rng_below(k < SHARED ? k : SHARED)),
                   &out));
    }
    OK(dfg_fuse_readers_make(g, r));
    return g;
}

/* 1 to most distinct live nodes at random into nodes: how many. */
static int32_t live_nodes(const dfg_graph *g, int32_t most, int32_t *nodes)
{
    int32_t n = 0;
    for (int32_t k = 1 + rng_below(most); n < k;) {
        int32_t node = rng_below(g->n_nodes), fresh = !g->nodes[node].dead;
        for (int32_t i = 0; i < n; i++)
            fresh &= nodes[i] != node;
        if (fresh)
            nodes[n++] = node;
    }
    return n;
}

/* Up to three live nodes at once rewired or killed. */
static void test_change(void **state)
{
    (void)state;
    dfg_fuse_readers r;
    dfg_graph *g = adds(1, &r);
    int32_t live = NODES;
    for (int step = 0; step < 2000; step++) {
        dfg_fuse_reading was[3];
        int32_t nodes[3], old[3][2], n = live_nodes(g, 3, nodes);
        for (int32_t i = 0; i < n; i++) {
            dfg_ir_node *node = &g->nodes[nodes[i]];
            memcpy(old[i], node->inputs, sizeof old[i]);
            was[i] = (dfg_fuse_reading){nodes[i], old[i], 2};
            if (rng_below(8) == 0 && live > NODES / 4) {
                node->dead = 1;
                live--;
            } else {
                node->inputs[0] = some_value(g);
                node->inputs[1] = some_value(g);
            }
        }
        dfg_fuse_readers_change(g, &r, was, n);
        assert_counted(g, &r);
    }
    dfg_fuse_readers_free(g, &r);
    dfg_graph_destroy(g);
}

/* Chains of up to four live nodes rewritten into their last, an add of
 * some values, until few nodes live. */
static void test_rewrite(void **state)
{
    (void)state;
    dfg_fuse_readers r;
    dfg_graph *g = adds(2, &r);
    int32_t live = NODES;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    while (live > 8) {
        int32_t chain[4], n = live_nodes(g, 4, chain);
        int32_t inputs[2] = {rng_below(SHARED), rng_below(g->n_values)};
        assert_int_equal(dfg_fuse_rewrite(g, &r, chain, n, DFG_OP_ADD,
                                          &attrs, inputs, 2),
                         0);
        live -= n - 1;
        assert_counted(g, &r);
    }
    dfg_fuse_readers_free(g, &r);
    dfg_graph_destroy(g);
}

/* dfg_fuse_post_ops at each matmul, r checked after each node. */
static int fuse_checked(dfg_graph *g, dfg_fuse_readers *r, int32_t n)
{
    int fused = dfg_fuse_op(g, n) == DFG_OP_MATMUL
                    ? dfg_fuse_post_ops(g, r, n)
                    : 0;
    assert_counted(g, r);
    return fused;
}

/* h = act(h @ w + h) a hundred times, one weight w, act a relu or a
 * HardSigmoid (x * 0.2 + 0.5 clipped to [0, 1]) by turns: two fusions
 * each. */
static void test_post_ops(void **state)
{
    (void)state;
    rng_state = 3;
    dfg_graph *g = NULL;
    OK(dfg_graph_create(NULL, &g));
    dfg_value h = input(g, "x", 2, DIMS(4, 8));
    dfg_value w = random_leaf(g, "w", 0, 2, DIMS(8, 8)), a, b;
    const float a_value = 0.2f, b_value = 0.5f;
    OK(dfg_graph_constant(g, "a", DFG_F32, 0, NULL, &a_value, &a));
    OK(dfg_graph_constant(g, "b", DFG_F32, 0, NULL, &b_value, &b));
    for (int i = 0; i < 100; i++) {
        dfg_value y, sum;
        OK(dfg_matmul(g, h, w, &y));
        OK(dfg_add(g, y, h, &sum));
        if (i % 2) {
            OK(dfg_relu(g, sum, &h));
        } else {
            OK(dfg_mul(g, sum, a, &y));
            OK(dfg_add(g, y, b, &y));
            OK(dfg_clip(g, y, 0.0f, 1.0f, &h));
        }
    }
    OK(dfg_graph_output(g, h, "out"));
    dfg_pass_report report;
    OK(dfg_fuse_pass(g, "checked", fuse_checked, &report));
    assert_int_equal(report.nodes_fused, 200);
    dfg_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_change),
        cmocka_unit_test(test_rewrite),
        cmocka_unit_test(test_post_ops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
