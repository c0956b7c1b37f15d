/* The pad-into-pool pass (passes/pool_first.c, dfg_pass_pad_into_pool):
 * a pad of zeros on the rows and columns whose output only an unpadded
 * average pool reads becomes the pool's counted padding, so no pad step
 * runs, and the output matches pad then pool written out in double,
 * compiled with and without blocked layouts. Near misses keep their pad
 * step and the unfused program's output: a pad of another value, a pad
 * of the channels, a pad as wide as the window, a padded value that is
 * also a graph output. */
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
#define H 9
#define W 7
#define K 3
#define X_ELEMS (N * C * H * W)

typedef struct pad_case {
    const char *what;
    int64_t pads[8]; /* ONNX order: begins of n, c, h, w, then ends */
    float value;
    int pad_output; /* the padded value is a graph output too */
    int folded;     /* the pass makes the pad the pool's */
} pad_case;

static float x[X_ELEMS];

static dfg_graph *build(const pad_case *k)
{
    dfg_graph *g = NULL;
    OK(dfg_graph_create(NULL, &g));
    dfg_value xv = input(g, "x", 4, DIMS(N, C, H, W)), padded, out;
    OK(dfg_pad(g, xv, k->pads, k->value, &padded));
    const dfg_pool_params pool = {{K, K}, {1, 1}, {0}, {0}, 0, 0};
    OK(dfg_average_pool(g, padded, &pool, &out));
    OK(dfg_graph_output(g, out, "out"));
    if (k->pad_output)
        OK(dfg_graph_output(g, padded, "padded"));
    return g;
}

static int has_step(const dfg_program *p, dfg_op op)
{
    for (int32_t i = 0; i < p->n_steps; i++)
        if (p->steps[i].op == op)
            return 1;
    return 0;
}

/* x padded with zeros by k's row and column pads, then KxK windows at
 * stride 1 averaged over all K*K taps, in double. */
static void reference(const pad_case *k, double *out, int64_t oh,
                      int64_t ow)
{
    int64_t top = k->pads[2], left = k->pads[3];
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    double sum = 0.0;
                    for (int64_t u = 0; u < K; u++)
                        for (int64_t v = 0; v < K; v++) {
                            int64_t h = i + u - top, w = j + v - left;
                            if (h >= 0 && h < H && w >= 0 && w < W)
                                sum += x[((n * C + c) * H + h) * W + w];
                        }
                    out[((n * C + c) * oh + i) * ow + j] = sum / (K * K);
                }
}

static void check(const pad_case *k)
{
    rng_state = 11;
    fill_random(x, X_ELEMS);
    dfg_graph *g = build(k);
    const void *inputs[1] = {x};
    float *want[2] = {NULL, NULL};
    dfg_program *unfused = compile_fusing(g, 0, 0);
    assert_true(has_step(unfused, DFG_OP_PAD));
    run_program(unfused, inputs, want);
    const dfg_program_tensor *t =
        &unfused->tensors[tensor_named(unfused, "out")];
    int64_t out_elems;
    double *ref = values_as_reference(unfused, "out", want[0], &out_elems);
    if (k->folded) {
        reference(k, ref, t->type.shape[2], t->type.shape[3]);
        assert_true(relative_error(want[0], ref, out_elems) < 1e-6);
    }
    for (int layouts = 0; layouts < 2; layouts++) {
        dfg_program *p = compile_fusing(g, 1, layouts);
        if (has_step(p, DFG_OP_PAD) == k->folded)
            fail_msg("%s (layouts %d): the pad step %s", k->what, layouts,
                     k->folded ? "stayed" : "went");
        check_first_output(p, inputs, ref, out_elems, k->what, layouts);
        dfg_program_destroy(p);
    }
    free(ref);
    free(want[0]);
    free(want[1]);
    dfg_program_destroy(unfused);
    dfg_graph_destroy(g);
}

static void test_pad_into_pool(void **state)
{
    (void)state;
    const pad_case cases[] = {
        {"one all round", {0, 0, 1, 1, 0, 0, 1, 1}, 0.0f, 0, 1},
        {"uneven", {0, 0, 0, 2, 0, 0, 2, 1}, 0.0f, 0, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check(&cases[i]);
}

static void test_left_alone(void **state)
{
    (void)state;
    const pad_case cases[] = {
        {"a pad of ones", {0, 0, 1, 1, 0, 0, 1, 1}, 1.0f, 0, 0},
        {"a pad of the channels", {0, 1, 1, 1, 0, 0, 1, 1}, 0.0f, 0, 0},
        {"a pad as wide as the window", {0, 0, K, 1, 0, 0, 1, 1}, 0.0f, 0,
         0},
        {"a padded graph output", {0, 0, 1, 1, 0, 0, 1, 1}, 0.0f, 1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check(&cases[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pad_into_pool),
        cmocka_unit_test(test_left_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
