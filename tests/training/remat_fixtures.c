/* Graphs of hand-named recomputations (remat_fixtures.h). */
#include "tests/training/remat_fixtures.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "dfg/dfg.h"

dfg_graph *remat_graph(int64_t rows, int64_t cols, int32_t *x)
{
    dfg_graph *g;
    dfg_value in;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 2,
                                     (int64_t[]){rows, cols}, &in), DFG_OK);
    *x = dfg_graph_index(g, in);
    return g;
}

int32_t remat_weight(dfg_graph *g, const char *name, int64_t rows,
                     int64_t cols)
{
    static const float zeros[REMAT_FIXTURE_MAX_WEIGHT];
    assert_true(rows * cols <= REMAT_FIXTURE_MAX_WEIGHT);
    dfg_value w;
    assert_int_equal(dfg_graph_weight(g, name, DFG_F32, 2,
                                      (int64_t[]){rows, cols}, zeros, &w),
                     DFG_OK);
    return dfg_graph_index(g, w);
}

int32_t remat_node(dfg_graph *g, dfg_op op, const char *name, int32_t a,
                   int32_t b, int32_t *at)
{
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    int32_t in[2] = {a, b}, out;
    *at = g->n_nodes;
    assert_int_equal(dfg_graph_add_node(g, op, name, in, b < 0 ? 1 : 2,
                                        &attrs, 1, &out),
                     DFG_OK);
    return out;
}
