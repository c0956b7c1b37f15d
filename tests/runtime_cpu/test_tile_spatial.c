/* Tiled execution (passes/tiling/tile_spatial.h): a small CNN (stride-2 convs,
 * a depthwise conv, max (ceil_mode) and average pools with pads, a
 * residual add, a concat along the channels, then a global pool and a
 * product the region stops at) gives the untiled program's outputs when
 * its first layers run band by band, at every cut and band count the
 * pass offers; the
 * compiler tiles it memory first (prefer_memory) with a smaller verified
 * arena, the same weights and the op-by-op bound reported, and never
 * with tiling off or speed first. Bands compiled speed first keep
 * oneDNN's blocked layout through their row slices and joins (no reorder
 * added), whose kernels move a plain slice's and concat's elements laid
 * out; a band that reads a wrong row changes the logits. */
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
#include "dfg/session.h"
#include "ir/graph.h"
#include "ir/layout_rule.h"
#include "passes/tiling/tile_spatial.h"
#include "program/program.h"
#include "runtime/cpu/kernels.h"
#include "tests/support/cnn_fixture.h"
#include "tests/support/program_fixtures.h"
#include "tests/support/random_data.h"

#define H 64
#define INPUT_NUMEL (3 * H * H)
#define CLASSES 10

static dfg_graph *small_cnn(void)
{
    random_seed(12345u);
    dfg_graph *g;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    dfg_value x, t, u, r;
    assert_int_equal(dfg_graph_input(g, "image", DFG_F32, 4,
                                     (int64_t[]){1, 3, H, H}, &x), DFG_OK);
    assert_int_equal(dfg_relu(g, cnn_conv(g, x, "stem", 3, 16, 3, 2, 1), &t),
                     DFG_OK);
    assert_int_equal(dfg_clip(g, cnn_conv(g, t, "dw", 16, 16, 3, 1, 16), 0.0f,
                              6.0f, &t), DFG_OK);
    t = cnn_conv(g, t, "expand", 16, 32, 1, 1, 1);
    dfg_pool_params mp = {{3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 1, 0};
    assert_int_equal(dfg_max_pool(g, t, &mp, &r), DFG_OK);
    assert_int_equal(dfg_relu(g, cnn_conv(g, r, "block", 32, 32, 3, 1, 1), &u),
                     DFG_OK);
    assert_int_equal(dfg_add(g, u, r, &t), DFG_OK);
    dfg_pool_params ap = {{3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 0, 0};
    assert_int_equal(dfg_average_pool(g, t, &ap, &u), DFG_OK);
    dfg_value parts[2] = {u, cnn_conv(g, u, "side", 32, 8, 1, 1, 1)};
    assert_int_equal(dfg_concat(g, 2, parts, 1, &t), DFG_OK);
    assert_int_equal(dfg_global_average_pool(g, t, &t), DFG_OK);
    assert_int_equal(dfg_flatten(g, t, 1, &t), DFG_OK);
    dfg_value w = cnn_weight(g, "fc.w", 2, (int64_t[]){CLASSES, 40});
    assert_int_equal(dfg_gemm(g, t, w, DFG_NO_VALUE,
                              &(dfg_gemm_params){1.0f, 1.0f, 0, 1}, &t),
                     DFG_OK);
    assert_int_equal(dfg_graph_output(g, t, "logits"), DFG_OK);
    return g;
}

/* Memory first keeping the smallest arena (memory first's own rule
 * counts each step's overhead, which outweighs what bands save on a
 * graph this small: test_tile_halo), tiled by default: a smaller arena
 * and lower bound, the op-by-op bound that of the untiled program, the
 * same weights, at most 10% more FLOPs, the same logits; off with
 * tiling = 0, and without prefer_memory. */
static void test_compiler_tiles(void **state)
{
    (void)state;
    dfg_graph *g = small_cnn();
    float *x = random_floats(INPUT_NUMEL, 1.0f);
    float tiled[CLASSES], want[CLASSES];
    dfg_program *off, *on;
    cnn_memory_first(g, DFG_PREFER_SMALLEST, x, want, tiled, &off, &on);
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    float fast[CLASSES];
    dfg_program *speed = cnn_compile_and_run(g, &o, x, fast);
    assert_int_equal(speed->stats.tiles, 0);
    dfg_program_destroy(speed);
    dfg_plan_stats a, b;
    dfg_program_stats(off, &a);
    dfg_program_stats(on, &b);
    assert_int_equal(a.tiles, 0);
    assert_int_equal(a.op_by_op_lower_bound_bytes, 0);
    assert_true(b.tiles >= 2 && b.tiled_regions >= 1);
    assert_true(b.arena_bytes < a.arena_bytes);
    assert_true(b.lower_bound_bytes < a.lower_bound_bytes);
    assert_int_equal(b.op_by_op_lower_bound_bytes, a.lower_bound_bytes);
    assert_int_equal(b.weights_bytes, a.weights_bytes);
    int64_t flops = cnn_flops(off);
    assert_true(b.tiling_extra_flops >= 0);
    assert_true(b.tiling_extra_flops * 10 <= flops);
    cnn_assert_close(tiled, want, CLASSES);
    dfg_program_destroy(off);
    dfg_program_destroy(on);
    free(x);
    dfg_graph_destroy(g);
}

/* A clone of g tiled as plan says, or NULL (nothing left) when that is
 * no tiling of g. */
static dfg_graph *tiled_copy(const dfg_graph *g, const dfg_tile_plan *plan)
{
    dfg_graph *copy;
    int32_t joined;
    assert_int_equal(dfg_graph_clone(g, NULL, &copy), DFG_OK);
    if (dfg_tile_apply(copy, plan, &joined) == DFG_OK)
        return copy;
    dfg_graph_destroy(copy);
    return NULL;
}

/* Tiles a clone of g as plan says (the last region's cut not checked
 * first); 0 and nothing run when that is no cut, else runs it into got
 * (compiled untiled) and returns 1. */
static int run_tiled(const dfg_graph *g, const dfg_tile_plan *plan,
                     const float *x, float *got)
{
    dfg_graph *copy;
    int32_t joined;
    assert_int_equal(dfg_graph_clone(g, NULL, &copy), DFG_OK);
    dfg_status st = dfg_tile_apply(copy, plan, &joined);
    if (st == DFG_ERR_INVALID_ARGUMENT) {
        assert_non_null(strstr(dfg_last_error(), "no cut"));
        dfg_graph_destroy(copy);
        return 0;
    }
    if (st != DFG_OK)
        fail_msg("tiling: %s", dfg_last_error());
    dfg_program_destroy(cnn_untiled(copy, x, got));
    dfg_graph_destroy(copy);
    return 1;
}

/* Every cut in 2, 3 and 5 bands, and every pair of regions in 2 and 3,
 * computes the untiled logits; values that are no cut (the logits, the
 * flattened pool) are refused by name. */
static void test_every_cut(void **state)
{
    (void)state;
    dfg_graph *g = small_cnn();
    float *x = random_floats(INPUT_NUMEL, 1.0f);
    float want[CLASSES], got[CLASSES];
    dfg_program_destroy(cnn_untiled(g, x, want));
    int singles = 0, pairs = 0;
    for (int32_t v = 0; v < g->n_values; v++)
        for (int32_t t = 2; t <= 5; t += t == 3 ? 2 : 1) {
            dfg_tile_plan one = {1, {v, 0}, {t, 0}, 0, 0, {0, 0}, {0, 0}, {0, 0}};
            if (t == 4 || !run_tiled(g, &one, x, got))
                continue;
            cnn_assert_close(got, want, CLASSES);
            one.put[0] = 1;
            assert_int_equal(run_tiled(g, &one, x, got), 1);
            cnn_assert_close(got, want, CLASSES);
            singles++;
            for (int32_t u = 0; t < 5 && u < g->n_values + 40; u++) {
                dfg_tile_plan two = {2, {v, u}, {t, 5 - t}, 0, 0, {0, 0},
                                     {u % 2, 1 - u % 2}, {0, 0}};
                if (run_tiled(g, &two, x, got)) {
                    cnn_assert_close(got, want, CLASSES);
                    pairs++;
                }
            }
        }
    assert_true(singles >= 12 && pairs >= 4);
    dfg_tile_plan logits = {1, {g->outputs[0], 0}, {2, 0}, 0, 0, {0, 0},
                            {0, 0}, {0, 0}};
    assert_int_equal(run_tiled(g, &logits, x, got), 0);
    free(x);
    dfg_graph_destroy(g);
}

/* Steps of op; with blocked, those whose input 0 and output are in a
 * blocked layout. */
static int steps_of(const dfg_program *p, dfg_op op, int blocked)
{
    int n = 0;
    for (int32_t i = 0; i < p->n_steps; i++) {
        const dfg_program_step *s = &p->steps[i];
        n += s->op == op &&
             (!blocked ||
              (p->tensors[s->inputs[0]].type.layout != DFG_LAYOUT_PLAIN &&
               p->tensors[s->outputs[0]].type.layout != DFG_LAYOUT_PLAIN));
    }
    return n;
}

/* The tiled graph of each cut in 2 and 3 bands, compiled speed first,
 * has no reorder step the untiled program does not have (the bands' row
 * slices and the join stay in the layout of the convs around them,
 * dfg_op_layout_rows) and the untiled logits; where the untiled program
 * runs blocked, joins of 4 or more tilings are blocked. */
static void test_blocked_bands(void **state)
{
    (void)state;
    dfg_graph *g = small_cnn();
    float *x = random_floats(INPUT_NUMEL, 1.0f);
    float want[CLASSES], got[CLASSES];
    dfg_program *plain = cnn_untiled(g, x, want);
    int blocked = 0;
    for (int32_t i = 0; i < plain->n_tensors; i++)
        blocked |= plain->tensors[i].type.layout != DFG_LAYOUT_PLAIN;
    int checked = 0;
    for (int32_t v = 0; v < g->n_values; v++)
        for (int32_t t = 2; t <= 5; t++) {
            int put = t > 3;
            dfg_tile_plan one = {1, {v, 0}, {put ? t - 2 : t, 0}, 0, 0,
                                 {0, 0}, {put, 0}, {0, 0}};
            dfg_graph *copy = tiled_copy(g, &one);
            if (!copy)
                continue;
            dfg_program *p = cnn_untiled(copy, x, got);
            cnn_assert_close(got, want, CLASSES);
            assert_true(steps_of(p, DFG_OP_REORDER, 0) <=
                        steps_of(plain, DFG_OP_REORDER, 0));
            checked += put ? steps_of(p, DFG_OP_PUT_ROWS, 1) > 0
                           : steps_of(p, DFG_OP_CONCAT, 1) >
                                 steps_of(plain, DFG_OP_CONCAT, 1);
            dfg_program_destroy(p);
            dfg_graph_destroy(copy);
        }
    if (blocked)
        assert_true(checked >= 8);
    dfg_program_destroy(plain);
    free(x);
    dfg_graph_destroy(g);
}

/* The comparison sees a wrong band: the tiled graph with one band's
 * slice of rows moved up by a row (same shape) gives other logits. */
static void test_wrong_band_seen(void **state)
{
    (void)state;
    dfg_graph *g = small_cnn();
    float *x = random_floats(INPUT_NUMEL, 1.0f);
    float want[CLASSES], got[CLASSES];
    dfg_program_destroy(cnn_untiled(g, x, want));
    int moved = 0;
    for (int32_t v = 0; v < g->n_values && moved < 3; v++) {
        dfg_tile_plan one = {1, {v, 0}, {3, 0}, 0, 0, {0, 0}, {0, 0}, {0, 0}};
        dfg_graph *copy;
        int32_t joined;
        assert_int_equal(dfg_graph_clone(g, NULL, &copy), DFG_OK);
        int32_t slice = -1;
        if (dfg_tile_apply(copy, &one, &joined) == DFG_OK)
            for (int32_t n = 0; n < copy->n_nodes; n++)
                if (!copy->nodes[n].dead &&
                    copy->nodes[n].op == DFG_OP_SLICE &&
                    copy->nodes[n].attrs.starts[0] > 0)
                    slice = n;
        if (slice >= 0) {
            copy->nodes[slice].attrs.starts[0]--;
            copy->nodes[slice].attrs.ends[0]--;
            dfg_program_destroy(cnn_untiled(copy, x, got));
            assert_true(cnn_relative_error(got, want, CLASSES) > 1e-4);
            moved++;
        }
        dfg_graph_destroy(copy);
    }
    assert_true(moved >= 1);
    free(x);
    dfg_graph_destroy(g);
}

/* --- rows of a blocked tensor (dfg_op_layout_rows) */

#define RC 32 /* channels: two blocks of 16, four of 8 */
#define RW 5

/* Element (c, h, w) of a [1, RC, rows, RW] tensor in layout. */
static int64_t at(int32_t layout, int64_t rows, int64_t c, int64_t h,
                  int64_t w)
{
    int64_t b = dfg_layout_block(layout);
    return ((c / b) * rows + h) * RW * b + w * b + c % b;
}

/* x's rows [lo, hi) of a [1, RC, h, RW] tensor, plain, laid out. */
static void lay_out(const float *x, int64_t h, int64_t lo, int64_t hi,
                    int32_t layout, float *y)
{
    for (int64_t c = 0; c < RC; c++)
        for (int64_t r = lo; r < hi; r++)
            for (int64_t w = 0; w < RW; w++)
                y[at(layout, hi - lo, c, r - lo, w)] = x[(c * h + r) * RW + w];
}

/* A blocked slice of rows and a blocked concat of rows move the elements
 * a plain one moves, laid out; the rule takes them in one blocked layout
 * and refuses nhwc, mixed layouts, columns and steps. */
static void test_rows_blocked(void **state)
{
    (void)state;
    enum { ROWS = 7, LO = 2, HI = 6 };
    float *x = random_floats(RC * ROWS * RW, 1.0f);
    static const int32_t layouts[] = {DFG_LAYOUT_NCHW8C, DFG_LAYOUT_NCHW16C};
    for (int k = 0; k < 2; k++) {
        int32_t l = layouts[k];
        float xb[RC * ROWS * RW], got[RC * ROWS * RW], want[RC * ROWS * RW];
        lay_out(x, ROWS, 0, ROWS, l, xb);
        dfg_type whole = {DFG_F32, 4, {1, RC, ROWS, RW}, l};
        dfg_type part = {DFG_F32, 4, {1, RC, HI - LO, RW}, l};
        dfg_attrs a;
        dfg_attrs_init(&a);
        a.n_axes = 1;
        a.axes[0] = 2;
        a.starts[0] = LO;
        a.ends[0] = HI;
        a.steps[0] = 1;
        assert_true(dfg_op_layout_rows(DFG_OP_SLICE, &a, 4));
        assert_int_equal(dfg_layout_check(DFG_OP_SLICE, &a, &whole, 1, &part,
                                          1), DFG_OK);
        const void *in[2] = {xb, NULL};
        void *out[1] = {got};
        dfg_kernel_args args = {.op = DFG_OP_SLICE, .attrs = &a,
                                .n_inputs = 1, .in_types = &whole, .in = in,
                                .n_outputs = 1, .out_types = &part,
                                .out = out};
        assert_int_equal(dfg_cpu_slice(&args), DFG_OK);
        lay_out(x, ROWS, LO, HI, l, want);
        assert_memory_equal(got, want, sizeof(float) * RC * (HI - LO) * RW);
        /* rows [0, LO) and [LO, ROWS) joined give x */
        float p0[RC * ROWS * RW], p1[RC * ROWS * RW];
        lay_out(x, ROWS, 0, LO, l, p0);
        lay_out(x, ROWS, LO, ROWS, l, p1);
        dfg_type parts[2] = {{DFG_F32, 4, {1, RC, LO, RW}, l},
                             {DFG_F32, 4, {1, RC, ROWS - LO, RW}, l}};
        dfg_attrs c;
        dfg_attrs_init(&c);
        c.axis = 2;
        in[0] = p0;
        in[1] = p1;
        args = (dfg_kernel_args){.op = DFG_OP_CONCAT, .attrs = &c,
                                 .n_inputs = 2, .in_types = parts, .in = in,
                                 .n_outputs = 1, .out_types = &whole,
                                 .out = out};
        assert_int_equal(dfg_layout_check(DFG_OP_CONCAT, &c, parts, 2, &whole,
                                          1), DFG_OK);
        assert_int_equal(dfg_cpu_concat(&args), DFG_OK);
        assert_memory_equal(got, xb, sizeof xb);
        /* refused: a plain part, nhwc, a slice of columns, a step of 2 */
        parts[1].layout = DFG_LAYOUT_PLAIN;
        assert_int_not_equal(dfg_layout_check(DFG_OP_CONCAT, &c, parts, 2,
                                              &whole, 1), DFG_OK);
        dfg_type nhwc[2] = {parts[0], whole};
        nhwc[0].layout = nhwc[1].layout = DFG_LAYOUT_NHWC;
        nhwc[0].shape[2] = ROWS;
        assert_int_not_equal(dfg_layout_check(DFG_OP_CONCAT, &c, nhwc, 1,
                                              &nhwc[1], 1), DFG_OK);
        a.axes[0] = 3;
        a.ends[0] = RW;
        assert_false(dfg_op_layout_rows(DFG_OP_SLICE, &a, 4));
        a.axes[0] = 2;
        a.steps[0] = 2;
        assert_false(dfg_op_layout_rows(DFG_OP_SLICE, &a, 4));
        assert_int_not_equal(dfg_layout_check(DFG_OP_SLICE, &a, &whole, 1,
                                              &part, 1), DFG_OK);
    }
    free(x);
}

/* put_rows moves a band's rows into the whole, in every layout the rule
 * takes: into a copy of the whole, over the whole in place, and into
 * zeros without one, the other rows kept (or zero); its shape rule and
 * the layout rule refuse a part that does not fit, mixed layouts and
 * nhwc with a message. */
static void test_put_rows(void **state)
{
    (void)state;
    enum { ROWS = 7, LO = 2, HI = 5, N = RC * ROWS * RW };
    float *x = random_floats(N, 1.0f), *y = random_floats(N, 1.0f);
    static const int32_t layouts[] = {DFG_LAYOUT_PLAIN, DFG_LAYOUT_NCHW8C,
                                      DFG_LAYOUT_NCHW16C};
    float joined[N]; /* x's rows, with rows [LO, HI) y's */
    for (int64_t i = 0; i < N; i++)
        joined[i] = (i / RW) % ROWS >= LO && (i / RW) % ROWS < HI ? y[i]
                                                                  : x[i];
    for (int k = 0; k < 3; k++) {
        int32_t l = layouts[k];
        dfg_type types[3] = {{DFG_F32, 4, {1, RC, ROWS, RW}, l},
                             {DFG_F32, 4, {1, RC, HI - LO, RW}, l},
                             {DFG_F32, 4, {1, RC, ROWS, RW}, l}};
        dfg_attrs a;
        dfg_attrs_init(&a);
        a.n_axes = 1;
        a.axes[0] = 2;
        a.starts[0] = LO;
        dfg_type out;
        assert_int_equal(dfg_op_get(DFG_OP_PUT_ROWS)->shape(&a, types, 2,
                                                            &out, 1), DFG_OK);
        assert_true(dfg_type_equal(&out, &types[0]));
        assert_int_equal(dfg_layout_check(DFG_OP_PUT_ROWS, &a, types, 2,
                                          &types[2], 1), DFG_OK);
        float whole[N], part[N], got[N], want[N], zeros[N];
        lay_out(x, ROWS, 0, ROWS, l, whole);
        lay_out(y, ROWS, LO, HI, l, part);
        lay_out(joined, ROWS, 0, ROWS, l, want);
        const void *in[2] = {whole, part};
        void *to[1] = {got};
        dfg_kernel_args args = {.op = DFG_OP_PUT_ROWS, .attrs = &a,
                                .n_inputs = 2, .in_types = types, .in = in,
                                .n_outputs = 1, .out_types = &types[2],
                                .out = to};
        assert_int_equal(dfg_cpu_put_rows(&args), DFG_OK);
        assert_memory_equal(got, want, sizeof got);
        to[0] = whole; /* in place */
        assert_int_equal(dfg_cpu_put_rows(&args), DFG_OK);
        assert_memory_equal(whole, want, sizeof whole);
        /* without a whole: zeros around the part */
        for (int64_t i = 0; i < N; i++)
            zeros[i] = (i / RW) % ROWS >= LO && (i / RW) % ROWS < HI
                           ? y[i] : 0.0f;
        lay_out(zeros, ROWS, 0, ROWS, l, want);
        a.n_shape = 1;
        a.shape[0] = ROWS;
        assert_int_equal(dfg_op_get(DFG_OP_PUT_ROWS)->shape(&a, &types[1], 1,
                                                            &out, 1), DFG_OK);
        assert_true(dfg_type_equal(&out, &types[0]));
        memset(got, 0x7f, sizeof got);
        in[0] = part;
        args.n_inputs = 1;
        args.in_types = &types[1];
        to[0] = got;
        assert_int_equal(dfg_cpu_put_rows(&args), DFG_OK);
        assert_memory_equal(got, want, sizeof got);
        /* refused: past the last row, another channel count, no rows,
         * mixed layouts, nhwc */
        a.starts[0] = ROWS - 1;
        assert_int_not_equal(dfg_op_get(DFG_OP_PUT_ROWS)->shape(&a, types, 2,
                                                                &out, 1),
                             DFG_OK);
        assert_non_null(strstr(dfg_last_error(), "do not fit"));
        a.starts[0] = LO;
        types[1].shape[1] = RC / 2;
        assert_int_not_equal(dfg_op_get(DFG_OP_PUT_ROWS)->shape(&a, types, 2,
                                                                &out, 1),
                             DFG_OK);
        types[1].shape[1] = RC;
        a.n_shape = 0;
        assert_int_not_equal(dfg_op_get(DFG_OP_PUT_ROWS)->shape(&a, &types[1],
                                                                1, &out, 1),
                             DFG_OK);
        types[1].layout = l == DFG_LAYOUT_PLAIN ? DFG_LAYOUT_NCHW8C
                                                : DFG_LAYOUT_PLAIN;
        assert_int_not_equal(dfg_layout_check(DFG_OP_PUT_ROWS, &a, types, 2,
                                              &types[2], 1), DFG_OK);
        types[0].layout = types[1].layout = types[2].layout = DFG_LAYOUT_NHWC;
        assert_int_not_equal(dfg_layout_check(DFG_OP_PUT_ROWS, &a, types, 2,
                                              &types[2], 1), DFG_OK);
    }
    free(x);
    free(y);
}

/* The search lists the pairs whose first region alone leaves the
 * estimate where it was (a cheap start that the second region's bands
 * need: tile_candidates.c's smallest joins), within the FLOPs asked, each
 * a tiling that gives the untiled logits; every first region listed
 * alone lowers the estimate. */
static void test_search_small_joins(void **state)
{
    (void)state;
    dfg_graph *g = small_cnn();
    float *x = random_floats(INPUT_NUMEL, 1.0f);
    float want[CLASSES], got[CLASSES];
    dfg_program_destroy(cnn_untiled(g, x, want));
    int64_t peak, flops;
    assert_int_equal(dfg_tile_estimate(g, -1, -1, 0, 0, &peak, &flops),
                     DFG_OK);
    dfg_tile_plan plans[16];
    int32_t n = 0, starts = 0;
    assert_int_equal(dfg_tile_candidates(g, 100, plans, 16, &n), DFG_OK);
    assert_true(n > 0);
    for (int32_t i = 0; i < n; i++) {
        int64_t alone, f;
        assert_int_equal(dfg_tile_estimate(g, -1, plans[i].cut[0],
                                           plans[i].tiles[0], plans[i].put[0],
                                           &alone, &f), DFG_OK);
        assert_true(plans[i].flops <= 2 * flops);
        assert_true(plans[i].n == 2 || alone < peak);
        starts += plans[i].n == 2 && alone >= peak;
        assert_int_equal(run_tiled(g, &plans[i], x, got), 1);
        cnn_assert_close(got, want, CLASSES);
    }
    assert_true(starts >= 1);
    free(x);
    dfg_graph_destroy(g);
}

/* A region stops at the fewest bands that reach its estimate
 * (tile_candidates.c's band counts, a power of two and the count halfway
 * to the next): of two counts at one cut whose estimates are equal, the
 * one of fewer bands, fewer FLOPs, is listed first; and counts between
 * the powers of two are among those listed. */
static void test_search_fewest_bands(void **state)
{
    (void)state;
    static const int32_t counts[] = {2, 3, 4, 6, 8, 12, 16};
    dfg_graph *g = small_cnn();
    dfg_tile_plan plans[64];
    int32_t n = 0, tried[17] = {0};
    assert_int_equal(dfg_tile_candidates(g, 100, plans, 64, &n), DFG_OK);
    for (int32_t i = 0; i < n; i++)
        for (int32_t r = 0; r < plans[i].n; r++)
            if (plans[i].tiles[r] <= 16)
                tried[plans[i].tiles[r]] = 1;
    for (int32_t i = 0; i < n; i++) {
        if (plans[i].n != 1)
            continue;
        for (size_t k = 0; k < sizeof counts / sizeof counts[0] &&
                           counts[k] < plans[i].tiles[0]; k++) {
            int64_t peak, flops;
            if (dfg_tile_estimate(g, -1, plans[i].cut[0], counts[k],
                                  plans[i].put[0], &peak, &flops) != DFG_OK ||
                peak > plans[i].peak)
                continue;
            /* an equal estimate in fewer bands is listed ahead */
            int ahead = 0;
            for (int32_t j = 0; j < i; j++)
                ahead |= plans[j].n == 1 && plans[j].cut[0] ==
                         plans[i].cut[0] && plans[j].tiles[0] == counts[k];
            assert_true(ahead);
        }
    }
    assert_true(tried[3] || tried[6] || tried[12]);
    dfg_graph_destroy(g);
}

/* A graph joined band by band, compiled: every put_rows over a whole
 * writes in place (the whole's bytes), the plan verified; saved and
 * loaded (the validator takes the op), it gives the untiled logits. */
static void test_put_rows_program(void **state)
{
    (void)state;
    dfg_graph *g = small_cnn();
    float *x = random_floats(INPUT_NUMEL, 1.0f);
    float want[CLASSES], got[CLASSES];
    dfg_program_destroy(cnn_untiled(g, x, want));
    int programs = 0;
    for (int32_t v = 0; v < g->n_values && programs < 3; v++) {
        dfg_tile_plan one = {1, {v, 0}, {3, 0}, 0, 0, {0, 0}, {1, 0}, {0, 0}};
        dfg_graph *copy = tiled_copy(g, &one);
        if (!copy)
            continue;
        dfg_program *p = cnn_untiled(copy, x, got);
        cnn_assert_close(got, want, CLASSES);
        int over = 0;
        for (int32_t i = 0; i < p->n_steps; i++) {
            const dfg_program_step *s = &p->steps[i];
            if (s->op != DFG_OP_PUT_ROWS || s->n_inputs != 2)
                continue;
            const dfg_program_tensor *whole = &p->tensors[s->inputs[0]];
            const dfg_program_tensor *out = &p->tensors[s->outputs[0]];
            assert_true(out->alias_of >= 0);
            assert_int_equal(out->offset, whole->offset);
            over++;
        }
        assert_int_equal(over, 2);
        dfg_program *loaded = fixture_reloaded(p);
        if (!loaded)
            fail_msg("save and load: %s", dfg_last_error());
        const dfg_backend *cpu;
        dfg_session *session;
        assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
        assert_int_equal(dfg_session_create(loaded, cpu, NULL, &session),
                         DFG_OK);
        const void *in[1] = {x};
        void *out[1] = {got};
        memset(got, 0, sizeof got);
        assert_int_equal(dfg_session_run(session, in, out), DFG_OK);
        cnn_assert_close(got, want, CLASSES);
        dfg_session_destroy(session);
        dfg_program_destroy(loaded);
        dfg_program_destroy(p);
        dfg_graph_destroy(copy);
        programs++;
    }
    assert_int_equal(programs, 3);
    free(x);
    dfg_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compiler_tiles),
        cmocka_unit_test(test_every_cut),
        cmocka_unit_test(test_blocked_bands),
        cmocka_unit_test(test_wrong_band_seen),
        cmocka_unit_test(test_rows_blocked),
        cmocka_unit_test(test_put_rows),
        cmocka_unit_test(test_search_small_joins),
        cmocka_unit_test(test_search_fewest_bands),
        cmocka_unit_test(test_put_rows_program),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
