/* The pad-into-conv pass (passes/fusion/pad_into_conv.c): a pad of zeros
 * on the rows and columns that only a conv2d reads, directly or through
 * a 1-D conv's unsqueeze, becomes the conv's padding, so no pad step runs,
 * and the output is the unfused program's (pad, then conv), compiled with
 * and without blocked layouts. Near misses keep their pad step: a pad of
 * another value, of the batch, wider than the dilated kernel reaches,
 * and a padded value that is also a graph output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "dfg/dfg.h"
#include "tests/support/pass_check.h"

#define N 2
#define C 16
#define H 9
#define W 11
#define X_ELEMS (N * C * H * W)

typedef struct pad_case {
    const char *what;
    int one_d;       /* x [N, C, W] through an unsqueeze, kernel 1x3 */
    int64_t pads[8]; /* begins of every axis, then ends */
    float value;
    int pad_output;  /* the padded value is a graph output too */
    int folded;      /* the pass makes the pad the conv's */
} pad_case;

static float x[X_ELEMS];

static dfg_graph *build(const pad_case *k)
{
    dfg_graph *g = NULL;
    OK(dfg_graph_create(NULL, &g));
    int64_t pads[8];
    memcpy(pads, k->pads, sizeof pads);
    dfg_value xv = k->one_d ? input(g, "x", 3, DIMS(N, C, W))
                            : input(g, "x", 4, DIMS(N, C, H, W));
    dfg_value padded, in, out;
    OK(dfg_pad(g, xv, pads, k->value, &padded));
    in = padded;
    if (k->one_d)
        OK(dfg_unsqueeze(g, padded, 1, (const int64_t[]){2}, &in));
    dfg_value w = random_leaf(g, "w", 0, 4,
                              k->one_d ? DIMS(C, C, 1, 3) : DIMS(C, C, 3, 3));
    dfg_value b = random_leaf(g, "b", 0, 1, DIMS(C));
    const dfg_conv2d_params conv = {{1, 1}, {1, 2}, {0, 0, 0, 0}, 1};
    OK(dfg_conv2d(g, in, w, b, &conv, &out));
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

static void check(const pad_case *k)
{
    rng_state = 5;
    fill_random(x, X_ELEMS);
    dfg_graph *g = build(k);
    const void *inputs[1] = {x};
    float *want[2] = {NULL, NULL};
    dfg_program *unfused = compile_fusing(g, 0, 0);
    assert_true(has_step(unfused, DFG_OP_PAD));
    run_program(unfused, inputs, want);
    int64_t out_elems;
    double *ref = values_as_reference(unfused, "out", want[0], &out_elems);
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

static void test_pad_into_conv(void **state)
{
    (void)state;
    const pad_case cases[] = {
        {"one all round", 0, {0, 0, 1, 1, 0, 0, 1, 1}, 0.0f, 0, 1},
        {"uneven", 0, {0, 0, 0, 4, 0, 0, 2, 1}, 0.0f, 0, 1},
        {"a causal 1-D conv's left pad", 1, {0, 0, 4, 0, 0, 0}, 0.0f, 0, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check(&cases[i]);
}

static void test_left_alone(void **state)
{
    (void)state;
    const pad_case cases[] = {
        {"a pad of ones", 0, {0, 0, 1, 1, 0, 0, 1, 1}, 1.0f, 0, 0},
        {"a pad of the batch", 0, {1, 0, 1, 1, 0, 0, 1, 1}, 0.0f, 0, 0},
        {"a pad past the dilated kernel", 0, {0, 0, 1, 5, 0, 0, 1, 1}, 0.0f,
         0, 0},
        {"a padded graph output", 0, {0, 0, 1, 1, 0, 0, 1, 1}, 0.0f, 1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check(&cases[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pad_into_conv),
        cmocka_unit_test(test_left_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
