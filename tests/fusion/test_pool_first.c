/* The pool-first pass (passes/pool_first.c): a 1x1 conv (with a bias,
 * grouped or not) whose output only an unpadded average pool reads runs
 * after the pool, on the pooled pixels (its FLOPs shrink with them), and
 * the output matches conv then pool written out in double, compiled with
 * and without blocked layouts. Near misses keep their order: a 3x3 conv,
 * a strided conv, a padded pool, a ceil-mode pool, a pool that does not
 * shrink the plane, a conv output that is also a graph output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "dfg/dfg.h"
#include "tests/support/pass_check.h"

#define N 2
#define C 32
#define M 16
#define H 8
#define W 6
#define X_ELEMS (N * C * H * W)

typedef struct pool_case {
    const char *what;
    int32_t kernel, conv_stride, group; /* the conv's */
    dfg_pool_params pool;
    int conv_output; /* the conv's output is a graph output too */
    int swapped;     /* the pass runs the pool first */
} pool_case;

static float x[X_ELEMS], w[M * C * 9], b[M]; /* w: up to 3x3 */

static dfg_graph *build(const pool_case *k)
{
    dfg_graph *g = NULL;
    OK(dfg_graph_create(NULL, &g));
    dfg_value xv = input(g, "x", 4, DIMS(N, C, H, W)), wv, bv, y, out;
    OK(dfg_graph_weight(g, "w", DFG_F32, 4,
                        DIMS(M, C / k->group, k->kernel, k->kernel), w, &wv));
    OK(dfg_graph_weight(g, "b", DFG_F32, 1, DIMS(M), b, &bv));
    int64_t pad = k->kernel / 2;
    dfg_conv2d_params params = {{k->conv_stride, k->conv_stride},
                                {1, 1},
                                {pad, pad, pad, pad},
                                k->group};
    OK(dfg_conv2d(g, xv, wv, bv, &params, &y));
    OK(dfg_average_pool(g, y, &k->pool, &out));
    OK(dfg_graph_output(g, out, "out"));
    if (k->conv_output)
        OK(dfg_graph_output(g, y, "y"));
    return g;
}

/* The index of p's first step of op, and its FLOPs. */
static int32_t step_of(const dfg_program *p, dfg_op op, int64_t *flops)
{
    for (int32_t i = 0; i < p->n_steps; i++)
        if (p->steps[i].op == op) {
            *flops = p->steps[i].flops;
            return i;
        }
    fail_msg("no %s step", dfg_op_get(op)->name);
    return -1;
}

/* conv 1x1 (stride 1, no padding) then a 2x2 average pool at stride 2,
 * written out in double: out[n][m][i][j]. */
static void reference(int32_t group, double *out)
{
    int64_t per = C / group, per_out = M / group;
    for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++)
            for (int64_t i = 0; i < H / 2; i++)
                for (int64_t j = 0; j < W / 2; j++) {
                    double sum = 0.0;
                    for (int64_t h = 2 * i; h < 2 * i + 2; h++)
                        for (int64_t v = 2 * j; v < 2 * j + 2; v++) {
                            double y = b[m];
                            for (int64_t c = 0; c < per; c++)
                                y += (double)w[m * per + c] *
                                     x[((n * C + m / per_out * per + c) * H +
                                        h) * W + v];
                            sum += y;
                        }
                    out[((n * M + m) * (H / 2) + i) * (W / 2) + j] = sum / 4;
                }
}

static void check(const pool_case *k)
{
    rng_state = 5;
    fill_random(x, X_ELEMS);
    fill_random(w, M * C * 9);
    fill_random(b, M);
    dfg_graph *g = build(k);
    const void *inputs[1] = {x};
    float *want[2] = {NULL, NULL};
    dfg_program *unfused = compile_fusing(g, 0, 0);
    run_program(unfused, inputs, want);
    int64_t conv_flops, pool_flops, unused;
    int32_t conv = step_of(unfused, DFG_OP_CONV2D, &conv_flops);
    assert_true(conv < step_of(unfused, DFG_OP_AVERAGE_POOL, &pool_flops));
    int64_t out_elems;
    double *ref = values_as_reference(unfused, "out", want[0], &out_elems);
    if (k->swapped) {
        reference(k->group, ref);
        assert_true(relative_error(want[0], ref, out_elems) < 1e-6);
    }
    for (int layouts = 0; layouts < 2; layouts++) {
        dfg_program *p = compile_fusing(g, 1, layouts);
        int64_t flops;
        int32_t at = step_of(p, DFG_OP_CONV2D, &flops);
        int pool_first = step_of(p, DFG_OP_AVERAGE_POOL, &unused) < at;
        if (pool_first != k->swapped)
            fail_msg("%s: the pool runs %s the conv", k->what,
                     pool_first ? "before" : "after");
        assert_int_equal(flops, k->swapped ? conv_flops / 4 : conv_flops);
        check_first_output(p, inputs, ref, out_elems, k->what, layouts);
        dfg_program_destroy(p);
    }
    free(ref);
    free(want[0]);
    free(want[1]);
    dfg_program_destroy(unfused);
    dfg_graph_destroy(g);
}

static void test_pool_first(void **state)
{
    (void)state;
    const dfg_pool_params two = {{2, 2}, {2, 2}, {0}, {0}, 0, 0};
    const pool_case cases[] = {
        {"1x1", 1, 1, 1, two, 0, 1},
        {"1x1, two groups", 1, 1, 2, two, 0, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check(&cases[i]);
}

static void test_left_alone(void **state)
{
    (void)state;
    const dfg_pool_params two = {{2, 2}, {2, 2}, {0}, {0}, 0, 0};
    dfg_pool_params padded = two, ceil = two, one = two;
    padded.pads[2] = padded.pads[3] = 1;
    ceil.ceil_mode = 1;
    one.kernel[0] = one.kernel[1] = 1;
    one.strides[0] = one.strides[1] = 1;
    const pool_case cases[] = {
        {"3x3 conv", 3, 1, 1, two, 0, 0},
        {"conv at stride 2", 1, 2, 1, two, 0, 0},
        {"padded pool", 1, 1, 1, padded, 0, 0},
        {"ceil-mode pool", 1, 1, 1, ceil, 0, 0},
        {"a pool that keeps the plane", 1, 1, 1, one, 0, 0},
        {"conv output read twice", 1, 1, 1, two, 1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check(&cases[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_first),
        cmocka_unit_test(test_left_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
