/* Memory first's choice among its programs (passes/pipeline.c,
 * memory_choice): the compiler's estimate of which steps a library runs
 * (dfg_program_step_on_library) is what a CPU session then runs, on every
 * program memory first may keep; a graph whose plain program has the
 * smaller arena but runs its convs on dfg's kernels keeps, memory first,
 * a program within 10% of the fastest one's cost, and the smaller one
 * only with DFG_PREFER_SMALLEST; --memory-limit's plans. Invariants, not
 * one CPU's figures. */
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
#include "dfg/memory_limit.h"
#include "dfg/memory_predict.h"
#include "dfg/session.h"
#include "ir/op_table.h"
#include "passes/pass.h"
#include "program/program.h"
#include "program/program_flops.h"
#include "runtime/cpu_layout_rule.h"
#include "tests/support/cnn_fixture.h"
#include "tests/support/random_data.h"

/* A stem of c channels on an h x h image, a depthwise conv of stride 1
 * (which may write over its input on dfg's kernel), with more_convs a
 * pointwise and a strided conv, then a global pool and a product. With
 * c 20, channels that blocked layouts pad (to 24 or 32) and do not
 * take. */
static dfg_graph *small_cnn(int64_t h, int64_t c, int more_convs)
{
    random_seed(777u);
    dfg_graph *g;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    dfg_value x, t;
    assert_int_equal(dfg_graph_input(g, "image", DFG_F32, 4,
                                     (int64_t[]){1, 3, h, h}, &x), DFG_OK);
    assert_int_equal(dfg_relu(g, cnn_conv(g, x, "stem", 3, c, 3, 1, 1), &t),
                     DFG_OK);
    assert_int_equal(dfg_relu(g, cnn_conv(g, t, "dw", c, c, 3, 1, c), &t),
                     DFG_OK);
    if (more_convs) {
        assert_int_equal(
            dfg_relu(g, cnn_conv(g, t, "pw", c, c, 1, 1, 1), &t), DFG_OK);
        assert_int_equal(
            dfg_relu(g, cnn_conv(g, t, "down", c, c, 3, 2, 1), &t), DFG_OK);
    }
    assert_int_equal(dfg_global_average_pool(g, t, &t), DFG_OK);
    assert_int_equal(dfg_flatten(g, t, 1, &t), DFG_OK);
    dfg_value w = cnn_weight(g, "fc.w", 2, (int64_t[]){10, c});
    assert_int_equal(dfg_gemm(g, t, w, DFG_NO_VALUE,
                              &(dfg_gemm_params){1.0f, 1.0f, 0, 1}, &t),
                     DFG_OK);
    assert_int_equal(dfg_graph_output(g, t, "logits"), DFG_OK);
    return g;
}

static dfg_program *compiled(const dfg_graph *g, int prefer, int tiling)
{
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    o.prefer_memory = prefer;
    o.tiling = tiling;
    dfg_program *p;
    if (dfg_compile(g, &o, &p) != DFG_OK)
        fail_msg("compile: %s", dfg_last_error());
    assert_int_equal(dfg_program_verify(p), DFG_OK);
    return p;
}

/* p's FLOPs weighted as memory first weighs them. */
static uint64_t cost(const dfg_program *p)
{
    return dfg_program_cost(p, 2);
}

/* Every product step of p runs on a library in a CPU session exactly
 * where dfg_program_step_on_library says so. */
static void assert_library_predicted(const dfg_program *p)
{
    const dfg_backend *cpu;
    dfg_session *session;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    assert_int_equal(dfg_session_create(p, cpu, NULL, &session), DFG_OK);
    for (int32_t i = 0; i < p->n_steps; i++) {
        const char *library = NULL;
        assert_int_equal(dfg_session_step_library(session, i, &library),
                         DFG_OK);
        if (!dfg_op_uses_blas(p->steps[i].op))
            continue;
        if ((library != NULL) != dfg_program_step_on_library(p, i))
            fail_msg("step %d (%s): predicted %s, the session runs %s", i,
                     p->steps[i].label,
                     dfg_program_step_on_library(p, i) ? "a library"
                                                       : "dfg's kernel",
                     library ? library : "dfg's kernel");
    }
    dfg_session_destroy(session);
}

/* The estimate holds on every program memory first may keep (blocked or
 * plain, tiled or not, depthwise convs over their inputs), speed first,
 * and with no backend rule (all dfg's kernels: cost twice the FLOPs). */
static void test_library_steps_predicted(void **state)
{
    (void)state;
    dfg_graph *graphs[3] = {small_cnn(48, 20, 1), small_cnn(48, 32, 1),
                            small_cnn(48, 32, 0)};
    for (int k = 0; k < 3; k++) {
        for (int prefer = 0; prefer <= DFG_PREFER_SMALLEST; prefer++)
            for (int tiling = 0; tiling < 2; tiling++) {
                dfg_program *p = compiled(graphs[k], prefer, tiling);
                assert_library_predicted(p);
                assert_true(cost(p) >= dfg_program_flops(p));
                assert_int_equal(dfg_program_cost(p, 1),
                                 dfg_program_flops(p));
                dfg_program_destroy(p);
            }
        dfg_compile_options o;
        dfg_compile_options_init(&o);
        o.backend_workspace = NULL;
        o.backend_workspace_for = NULL;
        dfg_program *p;
        assert_int_equal(dfg_compile(graphs[k], &o, &p), DFG_OK);
        assert_library_predicted(p);
        for (int32_t i = 0; i < p->n_steps; i++)
            assert_false(dfg_program_step_on_library(p, i));
        assert_int_equal(cost(p) + dfg_program_cost(p, 0),
                         2 * dfg_program_flops(p));
        dfg_program_destroy(p);
        dfg_graph_destroy(graphs[k]);
    }
}

/* The depthwise graph's plain program, its depthwise conv written over
 * its input, needs a smaller arena than the blocked one, on dfg's
 * kernels: memory first keeps a program within 10% of the fastest's
 * cost, DFG_PREFER_SMALLEST the smaller arena; both give the logits. */
static void test_smaller_but_slower(void **state)
{
    (void)state;
    int32_t blocked[2];
    if (dfg_cpu_blocked_layouts(blocked) == 0)
        skip(); /* below AVX2 every program is plain: nothing to trade */
    dfg_graph *g = small_cnn(48, 32, 0);
    float *x = random_floats(3 * 48 * 48, 1.0f);
    float want[10], mine[10], least[10];
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    o.prefer_memory = 1;
    o.tiling = 0;
    dfg_program *fast = cnn_compile_and_run(g, &o, x, want);
    /* The fastest: every product on the library. */
    assert_int_equal(cost(fast), dfg_program_flops(fast));
    o.tiling = 1;
    dfg_program *memory = cnn_compile_and_run(g, &o, x, mine);
    o.prefer_memory = DFG_PREFER_SMALLEST;
    dfg_program *smallest = cnn_compile_and_run(g, &o, x, least);
    assert_true(memory->stats.arena_bytes <= fast->stats.arena_bytes);
    assert_true(cost(memory) * 100 <= cost(fast) * 110);
    assert_true(smallest->stats.arena_bytes < memory->stats.arena_bytes);
    assert_true(cost(smallest) * 100 > cost(fast) * 110);
    cnn_assert_close(mine, want, 10);
    cnn_assert_close(least, want, 10);
    dfg_program_destroy(fast);
    dfg_program_destroy(memory);
    dfg_program_destroy(smallest);
    free(x);
    dfg_graph_destroy(g);
}

/* The predicted peak of g compiled with prefer_memory and tiling, and
 * its arena. */
static uint64_t peak_of(const dfg_graph *g, int prefer, int tiling,
                        uint64_t *arena)
{
    dfg_program *p = compiled(g, prefer, tiling);
    const dfg_backend *cpu;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    dfg_memory_prediction m;
    assert_int_equal(dfg_memory_predict(p, cpu, &m), DFG_OK);
    *arena = p->stats.arena_bytes;
    dfg_program_destroy(p);
    return m.peak_bytes;
}

/* g compiled within limit: fits, its predicted peak at most the limit;
 * its arena. */
static uint64_t arena_within(const dfg_graph *g, uint64_t limit)
{
    const dfg_backend *cpu;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    dfg_program *p = NULL;
    dfg_memory_prediction m;
    if (dfg_compile_within(g, NULL, cpu, limit, &p, &m) != DFG_OK)
        fail_msg("limit %llu: %s", (unsigned long long)limit,
                 dfg_last_error());
    assert_true(m.peak_bytes <= limit);
    uint64_t arena = p->stats.arena_bytes;
    dfg_program_destroy(p);
    return arena;
}

/* dfg_compile_within keeps the first plan of its ladder that fits: just
 * under the default's predicted peak, memory first untiled (not a
 * smaller, slower one); between the default's and memory first's
 * smallest arena's, a plan that fits (test_memory_predict.c: under every
 * plan, an error naming the excess). */
static void test_limit_ladder(void **state)
{
    (void)state;
    dfg_graph *g = small_cnn(384, 32, 0);
    uint64_t arena[3];
    uint64_t untiled = peak_of(g, 1, 0, &arena[1]);
    uint64_t smallest = peak_of(g, DFG_PREFER_SMALLEST, 1, &arena[2]);
    /* Last: memory first gives the heap its compiles freed back to the
     * system (dfg_heap_trim), which lowers the heap any prediction after
     * it counts, the default's in dfg_compile_within's ladder too. */
    uint64_t given = peak_of(g, 0, 1, &arena[0]);
    /* Memory first untiled may already reach the smallest arena: where
     * oneDNN's kernels are slow (an SSE4.1 cap on some CPUs) it takes the
     * in-place depthwise conv that tiling would take too. */
    assert_true(arena[2] <= arena[1] && arena[1] <= arena[0]);
    /* A limit a little below the default's predicted peak: the measured
     * parts of a prediction (heaps) move by far less from one compile to
     * the next (kilobytes), the plans' arenas by far more. */
    if (untiled + (1 << 19) < given)
        assert_int_equal(arena_within(g, given - (1 << 18)), arena[1]);
    assert_true(smallest + (4 << 20) < given);
    assert_true(arena_within(g, (given + smallest) / 2) < arena[0]);
    dfg_graph_destroy(g);
}

/* Convs that run as a product faster than the direct primitive
 * (Winograd, with its scratch) at the steps that set the bound: memory
 * first plans them from the direct primitive's least scratch, under the
 * bound; asked to keep the product's scratch (DFG_PREFER_MEMORY_PRODUCTS,
 * as it offers a tiled program whose bound left a conv off Winograd) it
 * runs the default program's products, at an arena between the two.
 * Skipped where this CPU's default program runs no product for them, or
 * memory first's scratch holds it. */
static void test_products_kept_above_the_bound(void **state)
{
    (void)state;
    random_seed(778u);
    dfg_graph *g;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    dfg_value x, t;
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 4,
                                     (int64_t[]){1, 3, 56, 56}, &x), DFG_OK);
    assert_int_equal(dfg_relu(g, cnn_conv(g, x, "c1", 3, 64, 3, 2, 1), &t),
                     DFG_OK);
    assert_int_equal(dfg_relu(g, cnn_conv(g, t, "c2", 64, 128, 3, 1, 1), &t),
                     DFG_OK);
    assert_int_equal(dfg_relu(g, cnn_conv(g, t, "c3", 128, 128, 3, 1, 1), &t),
                     DFG_OK);
    assert_int_equal(dfg_global_average_pool(g, t, &t), DFG_OK);
    assert_int_equal(dfg_graph_output(g, t, "y"), DFG_OK);
    dfg_program *fast = compiled(g, 0, 0);
    dfg_program *memory = compiled(g, 1, 0);
    dfg_program *kept = compiled(g, DFG_PREFER_MEMORY_PRODUCTS, 0);
    uint64_t products = dfg_program_product_flops(fast);
    int applies = products > 0 &&
                  dfg_program_product_flops(memory) < products;
    if (applies) {
        assert_int_equal(dfg_program_product_flops(kept), products);
        assert_true(kept->stats.arena_bytes > memory->stats.arena_bytes);
        assert_true(kept->stats.arena_bytes <= fast->stats.arena_bytes);
        assert_library_predicted(kept);
    }
    dfg_program_destroy(fast);
    dfg_program_destroy(memory);
    dfg_program_destroy(kept);
    dfg_graph_destroy(g);
    if (!applies)
        skip(); /* no product here, or its scratch fits under the bound */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_library_steps_predicted),
        cmocka_unit_test(test_smaller_but_slower),
        cmocka_unit_test(test_limit_ladder),
        cmocka_unit_test(test_products_kept_above_the_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
