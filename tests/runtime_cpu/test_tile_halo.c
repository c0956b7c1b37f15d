/* Tiled execution's carried halos (passes/tiling/tile_spatial.h): a CNN of dense
 * convs (a 7x7 stride-2 stem, a max pool, a bottleneck block with its
 * residual add, a 3x3 stride-2 conv) tiled at every cut in 2, 3 and 4
 * bands, joined either way, gives the untiled logits with its halos
 * carried and with them computed again, in verified plans; carrying
 * costs fewer FLOPs at some cut, never more; a chain of depthwise convs
 * on few channels, where copying rows costs more than computing them,
 * carries nothing. Memory first counts each program's steps and copies
 * beside its FLOPs (dfg_program_overhead), and the convs its bands move
 * off Winograd (dfg_program_product_flops). */
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
#include "passes/pass.h"
#include "runtime/cpu_layout_rule.h"
#include "runtime/cpu_workspace_rule.h"
#include "passes/tiling/tile_spatial.h"
#include "program/program.h"
#include "tests/support/cnn_fixture.h"
#include "tests/support/random_data.h"

#define H 96
#define LARGE 224 /* an image on which bands pay their steps */
#define SMALL 32  /* one on which they do not */
#define INPUT_NUMEL (3 * H * H)
#define CLASSES 10

static dfg_value relu(dfg_graph *g, dfg_value x)
{
    dfg_value y;
    assert_int_equal(dfg_relu(g, x, &y), DFG_OK);
    return y;
}

static dfg_value logits(dfg_graph *g, dfg_value t, int64_t channels)
{
    assert_int_equal(dfg_global_average_pool(g, t, &t), DFG_OK);
    assert_int_equal(dfg_flatten(g, t, 1, &t), DFG_OK);
    dfg_value w = cnn_weight(g, "fc.w", 2, (int64_t[]){CLASSES, channels});
    assert_int_equal(dfg_gemm(g, t, w, DFG_NO_VALUE,
                              &(dfg_gemm_params){1.0f, 1.0f, 0, 1}, &t),
                     DFG_OK);
    assert_int_equal(dfg_graph_output(g, t, "logits"), DFG_OK);
    return t;
}

/* A graph of one plain f32 image input [1,3,h,h] in *x, weights drawn
 * from `seed` on. */
static dfg_graph *image_graph(uint64_t seed, int64_t h, dfg_value *x)
{
    random_seed(seed);
    dfg_graph *g;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    assert_int_equal(dfg_graph_input(g, "image", DFG_F32, 4,
                                     (int64_t[]){1, 3, h, h}, x), DFG_OK);
    return g;
}

/* Dense convs, as a ResNet's first layers, on an image of h x h. */
static dfg_graph *dense_cnn(int64_t h)
{
    dfg_value x, t, r;
    dfg_graph *g = image_graph(4242u, h, &x);
    t = relu(g, cnn_conv(g, x, "stem", 3, 32, 7, 2, 1));
    dfg_pool_params mp = {{3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 0, 0};
    assert_int_equal(dfg_max_pool(g, t, &mp, &r), DFG_OK);
    t = relu(g, cnn_conv(g, r, "reduce", 32, 32, 1, 1, 1));
    t = relu(g, cnn_conv(g, t, "middle", 32, 32, 3, 1, 1));
    t = cnn_conv(g, t, "expand", 32, 32, 1, 1, 1);
    assert_int_equal(dfg_add(g, t, r, &t), DFG_OK);
    t = relu(g, t);
    t = relu(g, cnn_conv(g, t, "down", 32, 48, 3, 2, 1));
    logits(g, t, 48);
    return g;
}

/* Depthwise convs on 4 channels. */
static dfg_graph *depthwise_cnn(void)
{
    dfg_value x, t;
    dfg_graph *g = image_graph(777u, H, &x);
    t = relu(g, cnn_conv(g, x, "stem", 3, 4, 1, 1, 1));
    for (int i = 0; i < 4; i++) {
        char name[16];
        snprintf(name, sizeof name, "dw%d", i);
        t = relu(g, cnn_conv(g, t, name, 4, 4, 3, 1, 4));
    }
    logits(g, t, 4);
    return g;
}

/* The halos g carries: its concats along the rows of a slice (band k-1's
 * rows) and the rows band k computes. Each slice is recorded right after
 * the node that makes band k-1's value, so that the value dies at its
 * last reader in band k-1 rather than at band k's start. */
static int carries(const dfg_graph *g)
{
    int n = 0;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const dfg_ir_node *node = &g->nodes[i];
        if (node->dead || node->op != DFG_OP_CONCAT ||
            node->attrs.axis != 2 || node->n_inputs != 2)
            continue;
        int32_t from = g->values[node->inputs[0]].producer;
        if (from < 0 || g->nodes[from].op != DFG_OP_SLICE)
            continue;
        int32_t made = g->values[g->nodes[from].inputs[0]].producer;
        assert_int_equal(made + 1, from);
        n++;
    }
    return n;
}

/* g tiled by plan (a clone), compiled tiling off, verified and run on x
 * into got; its carries in *n_carries; its FLOPs, or -1 when plan is no
 * tiling of g. */
static int64_t run_tiled(const dfg_graph *g, const dfg_tile_plan *plan,
                         const float *x, float *got, int *n_carries)
{
    dfg_graph *copy;
    int32_t joined;
    assert_int_equal(dfg_graph_clone(g, NULL, &copy), DFG_OK);
    dfg_status st = dfg_tile_apply(copy, plan, &joined);
    if (st == DFG_ERR_INVALID_ARGUMENT) {
        dfg_graph_destroy(copy);
        return -1;
    }
    if (st != DFG_OK)
        fail_msg("tiling: %s", dfg_last_error());
    *n_carries = carries(copy);
    dfg_program *p = cnn_untiled(copy, x, got);
    int64_t flops = cnn_flops(p);
    dfg_program_destroy(p);
    dfg_graph_destroy(copy);
    return flops;
}

/* Every cut of dense_cnn in 2, 3 and 4 bands, joined either way, carried
 * and recomputed: the untiled logits; carried, never more FLOPs, and
 * fewer at some cuts, where it carries. */
static void test_carried_halos(void **state)
{
    (void)state;
    dfg_graph *g = dense_cnn(H);
    float *x = random_floats(INPUT_NUMEL, 1.0f);
    float want[CLASSES], got[CLASSES];
    dfg_program_destroy(cnn_untiled(g, x, want));
    int tiled = 0, cheaper = 0;
    for (int32_t v = 0; v < g->n_values; v++)
        for (int32_t t = 2; t <= 4; t++)
            for (int32_t put = 0; put < 2; put++) {
                dfg_tile_plan plan = {1, {v, 0}, {t, 0}, 0, 0, {0, 0},
                                      {put, 0}, {1, 0}};
                int n_again = 0, n_carried = 0;
                int64_t again = run_tiled(g, &plan, x, got, &n_again);
                if (again < 0)
                    continue;
                cnn_assert_close(got, want, CLASSES);
                assert_int_equal(n_again, 0);
                plan.recompute[0] = 0;
                int64_t carried = run_tiled(g, &plan, x, got, &n_carried);
                cnn_assert_close(got, want, CLASSES);
                assert_true(carried <= again);
                if (carried < again) {
                    assert_true(n_carried > 0);
                    cheaper++;
                }
                tiled++;
            }
    assert_true(tiled >= 12 && cheaper >= 4);
    free(x);
    dfg_graph_destroy(g);
}

/* Where the rows a halo copies cost more than computing them again
 * (depthwise convs on 4 channels), no band carries: every cut in 2 and 4
 * bands gives the FLOPs of the tiling that recomputes. */
static void test_no_carry_where_copies_cost_more(void **state)
{
    (void)state;
    dfg_graph *g = depthwise_cnn();
    float *x = random_floats(INPUT_NUMEL, 1.0f);
    float want[CLASSES], got[CLASSES];
    dfg_program_destroy(cnn_untiled(g, x, want));
    int tiled = 0;
    for (int32_t v = 0; v < g->n_values; v++)
        for (int32_t t = 2; t <= 4; t += 2) {
            dfg_tile_plan plan = {1, {v, 0}, {t, 0}, 0, 0, {0, 0}, {0, 0},
                                  {0, 0}};
            int n_carried = -1, n_again = -1;
            int64_t carried = run_tiled(g, &plan, x, got, &n_carried);
            if (carried < 0)
                continue;
            cnn_assert_close(got, want, CLASSES);
            plan.recompute[0] = 1;
            assert_int_equal(run_tiled(g, &plan, x, got, &n_again), carried);
            assert_int_equal(n_carried, 0);
            tiled++;
        }
    assert_true(tiled >= 4);
    free(x);
    dfg_graph_destroy(g);
}

/* A program's overhead: DFG_STEP_FLOPS per step, DFG_WEIGHT_BYTE_FLOPS
 * per byte of the weight a product step reads, and DFG_MOVED_BYTE_FLOPS
 * per byte written by a step of no FLOPs, once per thread; more for a tiled program (its
 * slices and joins, its filters read once per band) than for the
 * untiled one. */
static void test_overhead(void **state)
{
    (void)state;
    dfg_graph *g = dense_cnn(H);
    float *x = random_floats(INPUT_NUMEL, 1.0f);
    float want[CLASSES], got[CLASSES];
    dfg_program *p = cnn_untiled(g, x, want);
    uint64_t moved = 0, filters = 0;
    int library = 0;
    for (int32_t i = 0; i < p->n_steps; i++) {
        const dfg_program_step *s = &p->steps[i];
        library += dfg_program_step_on_library(p, i);
        if (s->op == DFG_OP_CONV2D || s->op == DFG_OP_GEMM)
            filters += p->tensors[s->inputs[1]].bytes;
        for (int32_t j = 0; s->flops <= 0 && j < s->n_outputs; j++)
            moved += p->tensors[s->outputs[j]].bytes;
    }
    assert_true(moved > 0 && filters > 0 && library > 0 &&
                library < p->n_steps);
    assert_int_equal(dfg_program_overhead(p),
                     ((uint64_t)p->n_steps * DFG_STEP_FLOPS +
                      DFG_WEIGHT_BYTE_FLOPS * filters +
                      DFG_MOVED_BYTE_FLOPS * moved) *
                         (uint64_t)dfg_cpu_threads());
    dfg_graph *copy;
    int32_t joined, cuts[32], n_cuts = 0;
    assert_int_equal(dfg_tile_region(g, -1, NULL, NULL, cuts, 32, &n_cuts),
                     DFG_OK);
    assert_true(n_cuts > 0);
    assert_int_equal(dfg_graph_clone(g, NULL, &copy), DFG_OK);
    dfg_tile_plan plan = {1, {cuts[n_cuts - 1], 0}, {3, 0}, 0, 0, {0, 0},
                          {0, 0}, {0, 0}};
    assert_int_equal(dfg_tile_apply(copy, &plan, &joined), DFG_OK);
    dfg_program *tiled = cnn_untiled(copy, x, got);
    cnn_assert_close(got, want, CLASSES);
    assert_true(dfg_program_overhead(tiled) > dfg_program_overhead(p));
    dfg_program_destroy(tiled);
    dfg_program_destroy(p);
    dfg_graph_destroy(copy);
    free(x);
    dfg_graph_destroy(g);
}

/* Memory first counts each program's overhead: it tiles the dense CNN
 * on a large image (the same logits, a smaller arena, its cost with its
 * overhead within 10% of the untiled program's), not on a small one,
 * whose few FLOPs a band's steps outweigh, which it tiles only keeping
 * the smallest arena whatever runs it. */
static void test_memory_first_counts_overhead(void **state)
{
    (void)state;
    int32_t blocked[2];
    if (dfg_cpu_blocked_layouts(blocked) == 0)
        skip(); /* below AVX2 the convs are plain: in bands they lose the
                   im2col scratch of oneDNN's gemm, and cost too much */
    float *x = random_floats(3 * LARGE * LARGE, 1.0f);
    float want[CLASSES], got[CLASSES];
    dfg_graph *g = dense_cnn(LARGE);
    dfg_program *off, *on;
    dfg_plan_stats b;
    cnn_memory_first(g, 1, x, want, got, &off, &on);
    cnn_assert_close(got, want, CLASSES);
    dfg_program_stats(on, &b);
    assert_true(b.tiles >= 2);
    assert_true(on->stats.arena_bytes < off->stats.arena_bytes);
    uint64_t tiled = dfg_program_cost(on, 2) + dfg_program_overhead(on);
    uint64_t untiled = dfg_program_cost(off, 2) + dfg_program_overhead(off);
    assert_true(tiled * 10 <= untiled * 11);
    dfg_program_destroy(off);
    dfg_program_destroy(on);
    dfg_graph_destroy(g);
    g = dense_cnn(SMALL);
    cnn_memory_first(g, 1, x, want, got, &off, &on);
    dfg_program_stats(on, &b);
    assert_int_equal(b.tiles, 0);
    dfg_program_destroy(off);
    dfg_program_destroy(on);
    cnn_memory_first(g, DFG_PREFER_SMALLEST, x, want, got, &off, &on);
    cnn_assert_close(got, want, CLASSES);
    dfg_program_stats(on, &b);
    assert_true(b.tiles >= 2);
    dfg_program_destroy(off);
    dfg_program_destroy(on);
    dfg_graph_destroy(g);
    free(x);
}

/* Convs a faster product runs (dfg_program_product_flops): a 64->96 3x3
 * conv at 32x32 runs as Winograd (on either block), a 128->256 one would
 * but its transformed filters exceed the session's allowance, so it runs
 * direct; the 64->96 one counts, the 128->256 one does not, and neither
 * does the 64->96 one where its workspace lacks Winograd's room. Skipped
 * where the layouts stay plain (no Winograd). */
static void test_product_flops(void **state)
{
    (void)state;
    dfg_value x, t;
    dfg_graph *g = image_graph(99u, 32, &x);
    t = relu(g, cnn_conv(g, x, "stem", 3, 64, 1, 1, 1));
    t = relu(g, cnn_conv(g, t, "mix", 64, 64, 1, 1, 1));
    t = relu(g, cnn_conv(g, t, "granted", 64, 96, 3, 1, 1));
    t = relu(g, cnn_conv(g, t, "widen", 96, 128, 1, 1, 1));
    t = relu(g, cnn_conv(g, t, "refused", 128, 256, 3, 1, 1));
    logits(g, t, 256);
    float *in = random_floats(3 * 32 * 32, 1.0f), y[CLASSES];
    dfg_program *p = cnn_untiled(g, in, y);
    int32_t granted = -1;
    int64_t refused = 0;
    for (int32_t i = 0; i < p->n_steps; i++) {
        const dfg_program_step *s = &p->steps[i];
        const char *w = s->op == DFG_OP_CONV2D && s->inputs[1] >= 0
                            ? p->tensors[s->inputs[1]].name : "";
        if (strcmp(w, "granted.w") == 0)
            granted = i;
        if (strcmp(w, "refused.w") == 0)
            refused = s->flops;
    }
    assert_true(granted >= 0 && refused > 0);
    const dfg_program_step *s = &p->steps[granted];
    if (p->tensors[s->inputs[0]].type.layout == DFG_LAYOUT_PLAIN) {
        dfg_program_destroy(p);
        dfg_graph_destroy(g);
        free(in);
        skip();
    }
    uint64_t product = dfg_program_product_flops(p);
    assert_true(product >= (uint64_t)s->flops);
    assert_true(product + (uint64_t)refused <= (uint64_t)cnn_flops(p));
    assert_true(s->workspace >= 0);
    p->tensors[s->workspace].bytes = 64;
    assert_int_equal(dfg_program_product_flops(p),
                     product - (uint64_t)s->flops);
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
    free(in);
}

/* A 96->96 3x3 conv at 96x96 that runs as Winograd (on either block),
 * after 1x1 convs whose outputs set the peak. */
static dfg_graph *winograd_cnn(void)
{
    dfg_value x, t;
    dfg_graph *g = image_graph(31u, H, &x);
    t = relu(g, cnn_conv(g, x, "stem", 3, 64, 1, 1, 1));
    t = relu(g, cnn_conv(g, t, "mix", 64, 96, 1, 1, 1));
    t = relu(g, cnn_conv(g, t, "winograd", 96, 96, 3, 1, 1));
    t = relu(g, cnn_conv(g, t, "down", 96, 64, 3, 2, 1));
    logits(g, t, 64);
    return g;
}

/* The tilings first listed cut the Winograd conv into bands too short
 * for Winograd, which costs more than 10%: memory first lists lighter
 * ones, and keeps one (the same logits, a smaller arena) whose bands
 * run Winograd. Skipped where the layouts stay plain (no Winograd). */
static void test_lighter_tilings_where_none_is_eligible(void **state)
{
    (void)state;
    dfg_graph *g = winograd_cnn();
    float *x = random_floats(INPUT_NUMEL, 1.0f);
    float want[CLASSES], got[CLASSES];
    dfg_program *off, *on;
    dfg_plan_stats b;
    cnn_memory_first(g, 1, x, want, got, &off, &on);
    uint64_t product = dfg_program_product_flops(off);
    if (product > 0) {
        cnn_assert_close(got, want, CLASSES);
        dfg_program_stats(on, &b);
        assert_true(b.tiles >= 2);
        assert_true(on->stats.arena_bytes < off->stats.arena_bytes);
        assert_true(dfg_program_product_flops(on) >= product);
    }
    dfg_program_destroy(off);
    dfg_program_destroy(on);
    dfg_graph_destroy(g);
    free(x);
    if (product == 0)
        skip();
}

/* The image side of the graphs below: a few bands of several rows. */
#define SCRATCH_H 48

/* Estimates tile a scratch clone (dfg_graph_clone_scratch: names
 * neither unique nor indexed, also in its clones): every cut's estimate
 * in 2 and 3 bands, joined either way, is what the graph tiled on a
 * named clone measures; a scratch graph (and a clone of it) takes a
 * node name twice, a named one refuses the second. */
static void test_estimates_on_scratch(void **state)
{
    (void)state;
    dfg_graph *g = dense_cnn(SCRATCH_H);
    int estimated = 0;
    for (int32_t v = 0; v < g->n_values; v++)
        for (int32_t t = 2; t <= 3; t++)
            for (int put = 0; put < 2; put++) {
                int64_t peak, flops, want_peak, want_flops;
                if (dfg_tile_estimate(g, -1, v, t, put, &peak, &flops) !=
                    DFG_OK)
                    continue;
                dfg_tile_plan plan = {1, {v, 0}, {t, 0}, 0, 0, {0, 0},
                                      {put, 0}, {0, 0}};
                dfg_graph *named = NULL;
                int32_t joined;
                assert_int_equal(dfg_graph_clone(g, NULL, &named), DFG_OK);
                assert_int_equal(dfg_tile_apply(named, &plan, &joined),
                                 DFG_OK);
                assert_int_equal(dfg_tile_estimate(named, -1, -1, 0, 0,
                                                   &want_peak, &want_flops),
                                 DFG_OK);
                assert_int_equal(peak, want_peak);
                assert_int_equal(flops, want_flops);
                dfg_graph_destroy(named);
                estimated++;
            }
    assert_true(estimated >= 12);
    dfg_graph *scratch = NULL, *again = NULL;
    assert_int_equal(dfg_graph_clone_scratch(g, NULL, &scratch), DFG_OK);
    assert_int_equal(dfg_graph_clone(scratch, NULL, &again), DFG_OK);
    const dfg_graph *graphs[3] = {g, scratch, again};
    for (int k = 0; k < 3; k++) {
        dfg_graph *x = (dfg_graph *)graphs[k];
        int32_t in = x->nodes[0].inputs[0], out;
        dfg_attrs none;
        dfg_attrs_init(&none);
        for (int twice = 0; twice < 2; twice++)
            assert_int_equal(dfg_graph_add_node(x, DFG_OP_RELU, "twice", &in,
                                                1, &none, 1, &out),
                             k == 0 && twice ? DFG_ERR_INVALID_ARGUMENT
                                             : DFG_OK);
    }
    dfg_graph_destroy(again);
    dfg_graph_destroy(scratch);
    dfg_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_carried_halos),
        cmocka_unit_test(test_no_carry_where_copies_cost_more),
        cmocka_unit_test(test_overhead),
        cmocka_unit_test(test_memory_first_counts_overhead),
        cmocka_unit_test(test_product_flops),
        cmocka_unit_test(test_lighter_tilings_where_none_is_eligible),
        cmocka_unit_test(test_estimates_on_scratch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
