/* Transposes in the fusion passes (passes/transpose_views.c,
 * passes/fusion/sink_transposes.c, fuse_patterns.c's channel shuffle):
 * each graph compiled fused and unfused gives the same bytes out, the
 * fused program with the transpose steps expected. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "dfg/dfg.h"
#include "tests/runtime_cpu/dnnl_check.h"
#include "tests/support/random_data.h"

#define C 16
#define H 10
#define W 10
#define N_ELEMS (C * H * W)
#define ROWS 6
#define HIDDEN 24

/* Attributes whose shape (a reshape's dims, a transpose's permutation)
 * is dims[0..rank). */
static dfg_attrs shape_attrs(int32_t rank, const int64_t *dims)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.n_shape = rank;
    memcpy(a.shape, dims, (size_t)rank * sizeof *dims);
    return a;
}

/* g (`recorded` transposes) compiled unfused and fused gives the same n
 * floats out from inputs x (and r), the fused program with `transposes`
 * transpose steps. */
static void check_transposes(const dfg_graph *g, const float *x,
                             const float *r, size_t n, int32_t recorded,
                             int32_t transposes)
{
    static float want[N_ELEMS], got[N_ELEMS];
    assert_true(n <= N_ELEMS);
    static float scratch[N_ELEMS];
    dfg_program *unfused = compiled_for(g, UNFUSED, 0);
    dfg_program *p = compiled_for(g, FUSED_REFERENCE, 0);
    run_program(unfused, (const void *[]){x, r}, (void *[]){want, scratch});
    run_program(p, (const void *[]){x, r}, (void *[]){got, scratch});
    assert_true(memcmp(got, want, n * sizeof *got) == 0);
    assert_int_equal(steps_of_op(unfused, "transpose"), recorded);
    assert_int_equal(steps_of_op(p, "transpose"), transposes);
    dfg_program_destroy(p);
    dfg_program_destroy(unfused);
}

/* A transpose that only moves dims of size 1 becomes a view (no
 * transpose step) with the same output; one that moves data stays. */
static void test_transpose_views(void **state)
{
    (void)state;
    static const struct {
        int64_t shape[4];
        int64_t perm[4];
        int view;
    } cases[] = {
        {{2, 1, 3, 24}, {0, 2, 1, 3}, 1},
        {{1, 6, 1, 24}, {2, 1, 3, 0}, 1},
        {{2, 3, 1, 24}, {1, 0, 2, 3}, 0},
        {{1, 6, 2, 12}, {0, 2, 1, 3}, 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        dfg_graph *g = NULL;
        assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
        dfg_value x;
        assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 4, cases[k].shape,
                                         &x), DFG_OK);
        dfg_attrs a = shape_attrs(4, cases[k].perm);
        dfg_value t = node1(g, "transpose", node1(g, "neg", x, NULL), &a);
        assert_int_equal(dfg_graph_output(g, node1(g, "relu", t, NULL), "out"),
                         DFG_OK);
        static float input[ROWS * HIDDEN];
        random_fill(input, ROWS * HIDDEN, 2.0f);
        check_transposes(g, input, NULL, ROWS * HIDDEN, 1, cases[k].view ? 0 : 1);
        dfg_graph_destroy(g);
    }
}

/* A transpose moves below the element-wise ops that read it (one input,
 * or two transposed alike), a concat of transposes alike, and a pad that
 * a transpose reads, to meet its inverse: [2,3,4,5] -> transpose
 * (0,2,1,3) -> ops -> the same transpose -> tanh runs no transpose and no
 * view (passes/fusion/sink_transposes.c), the same bytes out; one whose
 * element-wise reader's output is also a graph output stays, with its
 * inverse. */
static void test_transposes_sunk(void **state)
{
    (void)state;
    const int64_t shape[4] = {2, 3, 4, 5}, swap[4] = {0, 2, 1, 3};
    for (int k = 0; k < 4; k++) {
        dfg_graph *g = NULL;
        assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
        dfg_value x, r, mid, y;
        assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 4, shape, &x),
                         DFG_OK);
        assert_int_equal(dfg_graph_input(g, "r", DFG_F32, 4, shape, &r),
                         DFG_OK);
        dfg_attrs perm = shape_attrs(4, swap), pad;
        dfg_attrs_init(&pad);
        pad.pads[1] = 1; /* axis 1 of the transposed: the input's axis 2 */
        pad.pads[4 + 1] = 2;
        pad.pad_value = 0.5f;
        mid = node1(g, "transpose", node1(g, "neg", x, NULL), &perm);
        if (k == 1)
            mid = node2(g, "add", mid,
                        node1(g, "transpose", node1(g, "tanh", r, NULL),
                              &perm));
        if (k == 3) {
            dfg_value parts[2] = {
                mid, node1(g, "transpose", node1(g, "tanh", r, NULL), &perm)};
            dfg_attrs cat;
            dfg_attrs_init(&cat);
            cat.axis = -1;
            assert_int_equal(dfg_graph_node(g, "concat", NULL, parts, 2, &cat,
                                            &mid, 1), DFG_OK);
        }
        mid = node1(g, "relu", mid, NULL);
        if (k == 2)
            assert_int_equal(dfg_graph_output(g, mid, "mid"), DFG_OK);
        else if (k < 2)
            mid = node1(g, "pad", node1(g, "sigmoid", mid, NULL), &pad);
        y = node1(g, "tanh", node1(g, "transpose", mid, &perm), NULL);
        assert_int_equal(dfg_graph_output(g, y, "out"), DFG_OK);
        static float xs[2 * 3 * 4 * 5], rs[2 * 3 * 4 * 5];
        random_fill(xs, 120, 2.0f);
        random_fill(rs, 120, 2.0f);
        check_transposes(g, xs, rs, k == 2 ? 120 : k == 3 ? 240 : 2 * 3 * 7 * 5,
                         k == 1 || k == 3 ? 3 : 2, k == 2 ? 2 : 0);
        /* where they cancel, nothing is left of them, not even a view */
        dfg_program *p = compiled_for(g, FUSED_REFERENCE, 0);
        assert_int_equal(steps_of_op(p, "reshape"), 0);
        dfg_program_destroy(p);
        dfg_graph_destroy(g);
    }
}

/* ShuffleNet's concat and channel shuffle (concat, reshape to [N, 2, K,
 * H, W], transpose of dims 1 and 2, reshape back) becomes one concat
 * along a new axis: no transpose step, the same bytes out. Left alone
 * when the concat's output is also a graph output. */
static void test_channel_shuffle(void **state)
{
    (void)state;
    for (int concat_is_output = 0; concat_is_output < 2; concat_is_output++) {
        dfg_graph *g = NULL;
        assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
        int64_t half[4] = {1, C / 2, H, W};
        dfg_value x1, x2, parts[2], c, shuffled;
        assert_int_equal(dfg_graph_input(g, "x1", DFG_F32, 4, half, &x1),
                         DFG_OK);
        assert_int_equal(dfg_graph_input(g, "x2", DFG_F32, 4, half, &x2),
                         DFG_OK);
        parts[0] = node1(g, "neg", x1, NULL);
        parts[1] = node1(g, "tanh", x2, NULL);
        dfg_attrs a;
        dfg_attrs_init(&a);
        a.axis = 1;
        assert_int_equal(dfg_graph_node(g, "concat", NULL, parts, 2, &a, &c,
                                        1), DFG_OK);
        const int64_t g5[5] = {1, 2, C / 2, H, W}, p5[5] = {0, 2, 1, 3, 4},
                      b4[4] = {1, C, H, W};
        dfg_attrs groups = shape_attrs(5, g5), perm = shape_attrs(5, p5),
                  back = shape_attrs(4, b4);
        shuffled = node1(g, "reshape",
                         node1(g, "transpose",
                               node1(g, "reshape", c, &groups), &perm),
                         &back);
        assert_int_equal(dfg_graph_output(g, node1(g, "relu", shuffled, NULL),
                                          "out"), DFG_OK);
        if (concat_is_output)
            assert_int_equal(dfg_graph_output(g, c, "c"), DFG_OK);
        static float x[N_ELEMS / 2], r[N_ELEMS / 2];
        random_fill(x, N_ELEMS / 2, 2.0f);
        random_fill(r, N_ELEMS / 2, 2.0f);
        check_transposes(g, x, r, N_ELEMS, 1, concat_is_output);
        dfg_graph_destroy(g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transpose_views),
        cmocka_unit_test(test_channel_shuffle),
        cmocka_unit_test(test_transposes_sunk),
    };
    random_seed(99);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
