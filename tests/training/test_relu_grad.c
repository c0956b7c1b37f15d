/* relu's gradient from its output (passes/remat/relu_grad.c): where(greater(y,
 * 0), dy, 0) becomes relu_grad(y, dy) where that shrinks the arena (no
 * byte mask, dx written over dy), and stays where it does not. */
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

static int32_t scalar(dfg_graph *g, const char *name, float value)
{
    dfg_value c;
    assert_int_equal(dfg_graph_constant(g, name, DFG_F32, 0, NULL, &value, &c),
                     DFG_OK);
    return dfg_graph_index(g, c);
}

/* y = relu(x), dy = tanh(y), dx = where(greater(y, 0), dy, zero) with
 * zero's value given; dx is the output. At the where, the mask, dy and
 * dx are live (y died at the comparison); relu_grad needs y and dy, dx
 * written over dy. *where: the where node. */
static dfg_graph *relu_backward(float zero, int32_t *where)
{
    int32_t x, at;
    dfg_graph *g = remat_graph(ROWS, COLS, &x);
    int32_t y = remat_node(g, DFG_OP_RELU, "relu", x, -1, &at);
    int32_t dy = remat_node(g, DFG_OP_TANH, "dy", y, -1, &at);
    int32_t mask = remat_node(g, DFG_OP_GREATER, "mask", y,
                              scalar(g, "mask_zero", 0.0f), &at);
    dfg_attrs a;
    dfg_attrs_init(&a);
    int32_t in[3] = {mask, dy, scalar(g, "where_zero", zero)}, dx;
    assert_int_equal(dfg_graph_add_node(g, DFG_OP_WHERE, "dx", in, 3, &a, 1,
                                        &dx), DFG_OK);
    *where = g->n_nodes - 1;
    assert_int_equal(dfg_graph_output(g, dfg_graph_handle(g, dx), "dx"),
                     DFG_OK);
    return g;
}

/* relu_backward(zero) after dfg_relu_grads: *n rewritten, the arena
 * *before and *after. */
static dfg_graph *rewritten(float zero, int32_t *where, int32_t *n,
                            int64_t *before, int64_t *after)
{
    dfg_graph *g = relu_backward(zero, where);
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    assert_int_equal(dfg_remat_trial_arena(g, &o, before), DFG_OK);
    *after = *before;
    assert_int_equal(dfg_relu_grads(g, &o, after, n), DFG_OK);
    return g;
}

static void test_the_mask_and_the_second_tensor_go(void **state)
{
    (void)state;
    int32_t where, n;
    int64_t before, after;
    dfg_graph *g = rewritten(0.0f, &where, &n, &before, &after);
    assert_int_equal(n, 1);
    assert_int_equal(g->nodes[where].op, DFG_OP_RELU_GRAD);
    assert_int_equal(g->nodes[where].n_inputs, 2);
    assert_int_equal(g->nodes[where].inputs[0], g->nodes[0].outputs[0]);
    assert_true(g->nodes[2].dead); /* the mask */
    /* y and dy (dx over it), not the mask, dy and dx. */
    int64_t t = (int64_t)ROWS * COLS * 4;
    assert_true(after < before);
    assert_true(after <= 2 * t + 256);
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    int64_t planned;
    assert_int_equal(dfg_remat_trial_arena(g, &o, &planned), DFG_OK);
    assert_int_equal(planned, after);
    dfg_graph_destroy(g);
}

/* where(y > 0, dy, 1) is no relu gradient. */
static void test_another_where_stays(void **state)
{
    (void)state;
    int32_t where, n;
    int64_t arena[2];
    dfg_graph *g = rewritten(1.0f, &where, &n, &arena[0], &arena[1]);
    assert_true(n == 0 && arena[1] == arena[0]);
    assert_int_equal(g->nodes[where].op, DFG_OP_WHERE);
    dfg_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_mask_and_the_second_tensor_go),
        cmocka_unit_test(test_another_where_stays),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
