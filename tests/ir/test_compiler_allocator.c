/* The compiler's memory comes from the caller's allocator only
 * (dfg_compile_options.allocator), as IREE's and TFLite Micro's do: the
 * passes, the planners, the plan and program verifiers, rematerialization
 * under a memory budget and the plan comparison make no call to malloc &
 * co., which are wrapped at link time (libc_calls.h) and counted while a
 * resnet18 and its training step compile. Building the graphs is not the
 * compiler and is not counted. */
#include <execinfo.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "dfg/dfg.h"
#include "models/model_builder.h"
#include "tests/support/libc_calls.h"
#include "tests/support/training_options.h"

#define RESNET_CLASSES 1000

/* resnet18 (He et al. 2016; torchvision's layout): a 7x7 stride-2 stem,
 * a 3x3 stride-2 max pool, four stages of two basic blocks (64, 128, 256,
 * 512 channels, stages 2-4 halving the image), global average pooling, a
 * 1000-class linear layer and a softmax. */
static dfg_graph *resnet18(int64_t batch, int64_t image)
{
    dfg_model_ctx m = {.rng_state = 0x9E3779B97F4A7C15ULL};
    assert_int_equal(dfg_graph_create(NULL, &m.graph), DFG_OK);
    dfg_value x, h, flat, logits, probs;
    dfg_status s = dfg_graph_input(m.graph, "x", DFG_F32, 4,
                                   (int64_t[]){batch, 3, image, image}, &x);
    if (s == DFG_OK)
        s = dfg_model_conv_bn(&m, "stem", x, 3, 64, 7, 2, 1, &h);
    dfg_pool_params pool = {.kernel = {3, 3}, .strides = {2, 2},
                            .pads = {1, 1, 1, 1}};
    if (s == DFG_OK)
        s = dfg_max_pool(m.graph, h, &pool, &h);
    int64_t channels = 64;
    for (int stage = 0; s == DFG_OK && stage < 4; stage++)
        for (int block = 0; s == DFG_OK && block < 2; block++) {
            char name[32];
            snprintf(name, sizeof name, "layer%d.%d", stage + 1, block);
            int64_t out = (int64_t)64 << stage;
            int32_t stride = stage > 0 && block == 0 ? 2 : 1;
            s = dfg_model_residual_block(&m, name, h, channels, out, stride,
                                         &h);
            channels = out;
        }
    if (s == DFG_OK)
        s = dfg_global_average_pool(m.graph, h, &h);
    if (s == DFG_OK)
        s = dfg_flatten(m.graph, h, 1, &flat);
    if (s == DFG_OK)
        s = dfg_model_linear(&m, "fc", flat, 512, RESNET_CLASSES, &logits);
    if (s == DFG_OK)
        s = dfg_softmax(m.graph, logits, 1, &probs);
    if (s == DFG_OK)
        s = dfg_graph_output(m.graph, probs, "probs");
    if (s != DFG_OK)
        fail_msg("resnet18: %s", dfg_last_error());
    return m.graph;
}

/* The graph's training step: softmax cross-entropy on the logits. */
static dfg_graph *with_loss(dfg_graph *g)
{
    if (dfg_graph_add_loss(g, DFG_LOSS_CROSS_ENTROPY, NULL) != DFG_OK)
        fail_msg("loss: %s", dfg_last_error());
    return g;
}

/* Compiles g with o through a counting allocator, verifies the program,
 * compares the planners on it and destroys it, failing on any call to
 * malloc & co. on the way; the allocator must have served them all. */
static void compile_counted(const char *what, const dfg_graph *g,
                            dfg_compile_options *o)
{
    counting counts = {0, 0, 0};
    dfg_allocator allocator = counting_allocator(&counts);
    o->allocator = &allocator;
    dfg_plan_comparison compare;
    long before = libc_calls_count();
    dfg_program *p = NULL;
    dfg_status s = dfg_compile(g, o, &p);
    if (s == DFG_OK)
        s = dfg_program_verify(p);
    if (s == DFG_OK)
        s = dfg_plan_compare(p, &compare);
    dfg_program_destroy(p);
    long during = libc_calls_count() - before;
    if (s != DFG_OK)
        fail_msg("%s: %s", what, dfg_last_error());
    if (during != 0) {
        void *caller = libc_calls_last_caller();
        backtrace_symbols_fd(&caller, 1, 2); /* for addr2line */
        fail_msg("%s: %ld calls to malloc & co. from the compiler, the "
                 "latest from %p", what, during, caller);
    }
    assert_true(counts.allocs > 0);
    assert_int_equal(counts.allocs, counts.frees);
    o->allocator = NULL;
}

static void test_bundled_models(void **state)
{
    (void)state;
    for (const char *const *name = dfg_model_names(); *name; name++) {
        dfg_graph *g;
        assert_int_equal(dfg_model_build(*name, NULL, &g), DFG_OK);
        dfg_compile_options o;
        dfg_compile_options_init(&o);
        compile_counted(*name, g, &o);
        /* Every planner, each plan verified. */
        o.planner = DFG_PLANNER_SMALLEST;
        compile_counted(*name, g, &o);
        dfg_graph_destroy(g);
    }
}

static void test_resnet18(void **state)
{
    (void)state;
    dfg_graph *g = resnet18(1, 224);
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    compile_counted("resnet18", g, &o);
    o.planner = DFG_PLANNER_SMALLEST;
    compile_counted("resnet18, smallest", g, &o);
    dfg_graph_destroy(g);
}

/* Training steps, the second within a memory budget: rematerialization
 * searches the recomputations with trial plans. */
static void test_training(void **state)
{
    (void)state;
    dfg_graph *cnn;
    assert_int_equal(dfg_model_build_training("cnn", NULL, &cnn), DFG_OK);
    dfg_graph *resnet = with_loss(resnet18(2, 32));
    dfg_training_options t;
    dfg_compile_options o;
    training_compile_options(&t, &o);
    compile_counted("cnn training", cnn, &o);
    compile_counted("resnet18 training", resnet, &o);
    t.memory_budget_percent = 50.0f;
    compile_counted("cnn training within 50%", cnn, &o);
    compile_counted("resnet18 training within 50%", resnet, &o);
    dfg_graph_destroy(cnn);
    dfg_graph_destroy(resnet);
}

/* The count does see the library's calls: a graph's own memory defaults
 * to the C library. */
static void test_the_count_sees_the_library(void **state)
{
    (void)state;
    long before = libc_calls_count();
    dfg_graph_destroy(resnet18(1, 32));
    assert_true(libc_calls_count() > before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_count_sees_the_library),
        cmocka_unit_test(test_bundled_models),
        cmocka_unit_test(test_resnet18),
        cmocka_unit_test(test_training),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
