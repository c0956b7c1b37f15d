/* Tiled execution through squeeze-excite blocks
 * (passes/tiling/tile_squeeze.h): a small CNN whose stem feeds both a
 * block (expand, strided depthwise conv, squeeze-excite, project) and a
 * strided projection added to it (as RegNetY's first block), x also
 * read before its pool by a 1x1 conv added to the block's output, then a
 * second block and a heavy tail, gives the untiled program's outputs
 * when its regions cross one or both blocks, recomputed or carried, at
 * every cut past them and 2 or 3 bands. The compiler crosses a block
 * memory first, with a smaller verified arena than without tiling and
 * at most 10% more FLOPs. A band of x pooled with a wrong share of the
 * rows changes the logits; a crossing code of no mode, or a crossing
 * where the region meets no block, is refused by name. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dfg/builder.h"
#include "dfg/compile.h"
#include "dfg/graph.h"
#include "ir/graph.h"
#include "passes/tiling/tile_spatial.h"
#include "passes/tiling/tile_squeeze.h"
#include "program/program.h"
#include "tests/support/cnn_fixture.h"
#include "tests/support/random_data.h"

#define H 50 /* x has 25 rows: bands of unequal shares */
#define INPUT_NUMEL (3 * H * H)
#define CLASSES 10

/* x scaled channel by channel by a gate computed from its mean. */
static dfg_value squeeze_excite(dfg_graph *g, dfg_value x, const char *name,
                                int64_t c, int64_t squeezed)
{
    char a[64], b[64];
    snprintf(a, sizeof a, "%s.fc1", name);
    snprintf(b, sizeof b, "%s.fc2", name);
    dfg_value p, gate, y, ten;
    float scale = 10.0f; /* a gate that the mean moves */
    char k[64];
    snprintf(k, sizeof k, "%s.scale", name);
    assert_int_equal(dfg_graph_constant(g, k, DFG_F32, 0, NULL, &scale, &ten),
                     DFG_OK);
    assert_int_equal(dfg_global_average_pool(g, x, &p), DFG_OK);
    assert_int_equal(dfg_mul(g, p, ten, &p), DFG_OK);
    assert_int_equal(dfg_relu(g, cnn_conv(g, p, a, c, squeezed, 1, 1, 1), &p),
                     DFG_OK);
    assert_int_equal(dfg_sigmoid(g, cnn_conv(g, p, b, squeezed, c, 1, 1, 1),
                                 &gate), DFG_OK);
    assert_int_equal(dfg_mul(g, x, gate, &y), DFG_OK);
    return y;
}

static dfg_value relu(dfg_graph *g, dfg_value x)
{
    assert_int_equal(dfg_relu(g, x, &x), DFG_OK);
    return x;
}

static dfg_graph *se_cnn(void)
{
    random_seed(4242u);
    dfg_graph *g;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    dfg_value x, t, u;
    assert_int_equal(dfg_graph_input(g, "image", DFG_F32, 4,
                                     (int64_t[]){1, 3, H, H}, &x), DFG_OK);
    dfg_value stem = relu(g, cnn_conv(g, x, "stem", 3, 8, 3, 1, 1));
    t = relu(g, cnn_conv(g, stem, "a", 8, 16, 1, 1, 1));
    t = relu(g, cnn_conv(g, t, "b", 16, 16, 3, 2, 16));
    /* x read before its pool too: a carried x's readers follow its join */
    dfg_value skip = cnn_conv(g, t, "skip", 16, 16, 1, 1, 1);
    t = cnn_conv(g, squeeze_excite(g, t, "se1", 16, 4), "c", 16, 16, 1, 1, 1);
    u = cnn_conv(g, stem, "proj", 8, 16, 1, 2, 1);
    assert_int_equal(dfg_add(g, t, u, &t), DFG_OK);
    assert_int_equal(dfg_add(g, t, skip, &t), DFG_OK);
    t = relu(g, cnn_conv(g, relu(g, t), "e", 16, 32, 3, 2, 1));
    t = cnn_conv(g, squeeze_excite(g, t, "se2", 32, 8), "f", 32, 64, 1, 1, 1);
    t = relu(g, cnn_conv(g, relu(g, t), "tail1", 64, 64, 3, 1, 1));
    t = relu(g, cnn_conv(g, t, "tail2", 64, 64, 3, 1, 1));
    assert_int_equal(dfg_global_average_pool(g, t, &t), DFG_OK);
    assert_int_equal(dfg_flatten(g, t, 1, &t), DFG_OK);
    dfg_value w = cnn_weight(g, "fc.w", 2, (int64_t[]){CLASSES, 64});
    assert_int_equal(dfg_gemm(g, t, w, DFG_NO_VALUE,
                              &(dfg_gemm_params){1.0f, 1.0f, 0, 1}, &t),
                     DFG_OK);
    assert_int_equal(dfg_graph_output(g, t, "logits"), DFG_OK);
    return g;
}

/* The crossings tried: each block recomputed or carried, one or two. */
static const int32_t codes[] = {
    DFG_TILE_RECOMPUTE, DFG_TILE_CARRY,
    DFG_TILE_RECOMPUTE + 3 * DFG_TILE_RECOMPUTE,
    DFG_TILE_RECOMPUTE + 3 * DFG_TILE_CARRY,
    DFG_TILE_CARRY + 3 * DFG_TILE_RECOMPUTE,
    DFG_TILE_CARRY + 3 * DFG_TILE_CARRY,
};
#define N_CODES ((int)(sizeof codes / sizeof codes[0]))

/* The live put_rows nodes of g. */
static int puts_in(const dfg_graph *g)
{
    int n = 0;
    for (int32_t i = 0; i < g->n_nodes; i++)
        n += !g->nodes[i].dead && g->nodes[i].op == DFG_OP_PUT_ROWS;
    return n;
}

/* Every crossing in 2 and 3 bands, at every cut its region offers (past
 * the blocks or not), joined by one concat or band by band (put_rows,
 * there only when asked) in turn, computes the untiled logits; a
 * recomputed block costs FLOPs, a carried one keeps x whole. */
static void test_every_crossing(void **state)
{
    (void)state;
    dfg_graph *g = se_cnn();
    float *x = random_floats(INPUT_NUMEL, 1.0f);
    float want[CLASSES], got[CLASSES];
    dfg_program_destroy(cnn_untiled(g, x, want));
    int64_t peak, flops, crossed_flops;
    assert_int_equal(dfg_tile_estimate(g, -1, -1, 0, 0, &peak, &flops),
                     DFG_OK);
    int runs = 0;
    for (int c = 0; c < N_CODES; c++)
        for (int32_t tiles = 2; tiles <= 3; tiles++) {
            dfg_graph *crossed;
            int32_t n = 0, cuts[256], n_cuts = 0;
            assert_int_equal(dfg_graph_clone(g, NULL, &crossed), DFG_OK);
            if (dfg_tile_cross_squeezes(crossed, -1, tiles, codes[c], &n) !=
                DFG_OK)
                fail_msg("crossing %d: %s", (int)codes[c], dfg_last_error());
            assert_int_equal(n, dfg_tile_squeezes_asked(codes[c]));
            assert_int_equal(dfg_tile_estimate(crossed, -1, -1, 0, 0, &peak,
                                               &crossed_flops), DFG_OK);
            assert_true(crossed_flops > flops);
            dfg_program_destroy(cnn_untiled(crossed, x, got));
            cnn_assert_close(got, want, CLASSES);
            assert_int_equal(dfg_tile_region(crossed, -1, NULL, NULL, cuts,
                                             256, &n_cuts), DFG_OK);
            for (int32_t i = 0; i < n_cuts; i++) {
                dfg_tile_plan plan = {1, {cuts[i], 0}, {tiles, 0}, 0, 0,
                                      {codes[c], 0}, {(i + tiles) % 2, 0}, {0, 0}};
                dfg_graph *tiled;
                int32_t joined;
                assert_int_equal(dfg_graph_clone(g, NULL, &tiled), DFG_OK);
                if (dfg_tile_apply(tiled, &plan, &joined) != DFG_OK)
                    fail_msg("tiling: %s", dfg_last_error());
                assert_int_equal(puts_in(tiled) > 0, plan.put[0]);
                dfg_program_destroy(cnn_untiled(tiled, x, got));
                cnn_assert_close(got, want, CLASSES);
                dfg_graph_destroy(tiled);
                runs++;
            }
            dfg_graph_destroy(crossed);
        }
    assert_true(runs >= 2 * N_CODES);
    free(x);
    dfg_graph_destroy(g);
}

static int steps_named(const dfg_program *p, const char *part)
{
    int n = 0;
    for (int32_t i = 0; i < p->n_steps; i++)
        n += strstr(p->steps[i].name, part) != NULL;
    return n;
}

/* Memory first's smallest arena (DFG_PREFER_SMALLEST: memory first may
 * keep a program of less work) crosses a block (its pass 1 is in the
 * program): a smaller arena than untiled, and than the tiling that stops at the
 * block (a cut before it), the same logits, at most 10% more FLOPs. */
static void test_compiler_crosses(void **state)
{
    (void)state;
    dfg_graph *g = se_cnn();
    float *x = random_floats(INPUT_NUMEL, 1.0f);
    float tiled[CLASSES], want[CLASSES];
    dfg_program *off, *on;
    cnn_memory_first(g, DFG_PREFER_SMALLEST, x, want, tiled, &off, &on);
    dfg_plan_stats a, b;
    dfg_program_stats(off, &a);
    dfg_program_stats(on, &b);
    assert_true(b.tiles >= 2);
    assert_true(steps_named(on, "squeeze_pass") > 0);
    assert_true(b.arena_bytes < a.arena_bytes);
    int64_t flops = cnn_flops(off);
    assert_true(b.tiling_extra_flops > 0 && b.tiling_extra_flops * 10 <= flops);
    cnn_assert_close(tiled, want, CLASSES);
    /* The candidates' best crosses a block, below every tiling that
     * stops before them. */
    dfg_tile_plan plans[4];
    int32_t n_plans = 0, cuts[64], n_cuts = 0;
    assert_int_equal(dfg_tile_candidates(g, 100, plans, 4, &n_plans), DFG_OK);
    assert_true(n_plans >= 1);
    assert_true(plans[0].squeeze[0] != 0 ||
                (plans[0].n > 1 && plans[0].squeeze[1] != 0));
    assert_int_equal(dfg_tile_region(g, -1, NULL, NULL, cuts, 64, &n_cuts),
                     DFG_OK);
    for (int32_t i = 0; i < n_cuts; i++)
        for (int32_t tiles = 2; tiles <= 16; tiles *= 2)
            for (int put = 0; put <= 1; put++) {
                int64_t peak, f;
                assert_int_equal(dfg_tile_estimate(g, -1, cuts[i], tiles, put,
                                                   &peak, &f), DFG_OK);
                assert_true(plans[0].peak < peak);
            }
    dfg_program_destroy(off);
    dfg_program_destroy(on);
    free(x);
    dfg_graph_destroy(g);
}

/* The comparison sees a wrong share: pass 1's first band pooled with
 * twice its weight gives other logits. */
static void test_wrong_share_seen(void **state)
{
    (void)state;
    dfg_graph *g = se_cnn();
    float *x = random_floats(INPUT_NUMEL, 1.0f);
    float want[CLASSES], got[CLASSES];
    dfg_program_destroy(cnn_untiled(g, x, want));
    dfg_graph *crossed;
    int32_t n = 0, share = -1;
    assert_int_equal(dfg_graph_clone(g, NULL, &crossed), DFG_OK);
    assert_int_equal(dfg_tile_cross_squeezes(crossed, -1, 3,
                                             DFG_TILE_RECOMPUTE, &n), DFG_OK);
    assert_int_equal(n, 1);
    dfg_program_destroy(cnn_untiled(crossed, x, got));
    cnn_assert_close(got, want, CLASSES);
    for (int32_t v = 0; v < crossed->n_values; v++)
        if (strncmp(crossed->values[v].name, "band_share_0/", 13) == 0)
            share = v;
    assert_true(share >= 0);
    float wrong = *(const float *)crossed->values[share].data * 2.0f;
    assert_int_equal(dfg_graph_set_constant(crossed, share, &wrong), DFG_OK);
    dfg_program_destroy(cnn_untiled(crossed, x, got));
    assert_true(cnn_relative_error(got, want, CLASSES) > 1e-4);
    dfg_graph_destroy(crossed);
    free(x);
    dfg_graph_destroy(g);
}

/* A code digit that is no mode is refused by name; a region that meets
 * no block crosses none and leaves the graph as it was; a plan asking a
 * crossing there is refused by name. */
static void test_refusals(void **state)
{
    (void)state;
    dfg_graph *g = se_cnn();
    int32_t n = 7, nodes = g->n_nodes;
    assert_int_equal(dfg_tile_cross_squeezes(g, -1, 2, 3, &n),
                     DFG_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(dfg_last_error(), "no way to cross"));
    assert_int_equal(n, 0);
    assert_int_equal(g->n_nodes, nodes);
    /* From the tail's input on, no block is met. */
    int32_t from = -1, tail = dfg_graph_index(g, DFG_NO_VALUE);
    for (int32_t v = 0; v < g->n_values; v++)
        if (strcmp(g->values[v].name, "tail1.w") == 0)
            tail = v;
    for (int32_t m = 0; m < g->n_nodes; m++)
        if (g->nodes[m].n_inputs > 1 && g->nodes[m].inputs[1] == tail)
            from = g->nodes[m].inputs[0];
    assert_true(from >= 0);
    assert_int_equal(dfg_tile_cross_squeezes(g, from, 2, DFG_TILE_CARRY, &n),
                     DFG_OK);
    assert_int_equal(n, 0);
    assert_int_equal(g->n_nodes, nodes);
    /* Three blocks asked of a region that meets two. */
    dfg_tile_plan plan = {1, {g->outputs[0], 0}, {2, 0}, 0, 0,
                          {DFG_TILE_CARRY * 13, 0}, {0, 0}, {0, 0}};
    int32_t joined;
    assert_int_equal(dfg_tile_apply(g, &plan, &joined),
                     DFG_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(dfg_last_error(), "meets 2 squeeze-excite"));
    dfg_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_crossing),
        cmocka_unit_test(test_compiler_crosses),
        cmocka_unit_test(test_wrong_share_seen),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
