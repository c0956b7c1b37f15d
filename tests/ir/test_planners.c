/* The planners, the lower bound and the plan verifier on hand-made
 * lifetimes with known answers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "passes/memory_plan.h"

#define COUNT(a) ((int32_t)(sizeof(a) / sizeof((a)[0])))

static const dfg_planner planners[] = {
    DFG_PLANNER_NO_REUSE, DFG_PLANNER_GREEDY_SIZE, DFG_PLANNER_GREEDY_BREADTH,
    DFG_PLANNER_HILL_CLIMB, DFG_PLANNER_SMALLEST,
};

/* Plans with planner, checks the plan with the verifier and returns the
 * arena size. */
static int64_t plan_checked(dfg_planner planner, dfg_buffer *b, int32_t n,
                            int64_t alignment)
{
    int64_t arena = -1;
    assert_int_equal(dfg_plan_buffers(planner, b, n, alignment, NULL, &arena), DFG_OK);
    assert_int_equal(dfg_plan_verify_buffers(b, n, alignment, arena, NULL), DFG_OK);
    assert_true(arena % alignment == 0);
    return arena;
}

/* The 8 tensors of Pisarchyk & Lee (2020), figure of the usage records:
 * (size, first op, last op). The largest step (5) holds 36 + 16 + 8 + 64
 * bytes, so no plan beats 124, and greedy by size reaches it. */
static const dfg_buffer paper_example[] = {
    {32, 0, 1, 0, 0, 0}, {28, 1, 4, 0, 0, 0}, {36, 2, 5, 0, 0, 0}, {16, 3, 5, 0, 0, 0},
    {8, 4, 5, 0, 0, 0},  {64, 5, 7, 0, 0, 0}, {10, 6, 8, 0, 0, 0}, {40, 7, 8, 0, 0, 0},
};

static void test_paper_example(void **state)
{
    (void)state;
    dfg_buffer b[8];
    int32_t n = COUNT(paper_example);
    assert_int_equal(dfg_plan_lower_bound(paper_example, n, 1, NULL), 124);
    assert_int_equal(dfg_plan_no_reuse_bytes(paper_example, n, 1, NULL), 234);

    memcpy(b, paper_example, sizeof b);
    assert_int_equal(plan_checked(DFG_PLANNER_GREEDY_SIZE, b, n, 1), 124);
    /* The offsets that largest-first, smallest-gap placement gives. */
    const int64_t expected[] = {0, 32, 64, 100, 116, 0, 104, 64};
    for (int32_t i = 0; i < n; i++)
        assert_int_equal(b[i].offset, expected[i]);

    memcpy(b, paper_example, sizeof b);
    assert_int_equal(plan_checked(DFG_PLANNER_GREEDY_BREADTH, b, n, 1), 124);
    memcpy(b, paper_example, sizeof b);
    assert_int_equal(plan_checked(DFG_PLANNER_NO_REUSE, b, n, 1), 234);
}

/* TensorFlow Lite GPU delegate's memory management test "ComplexRecords":
 * greedy by size places its 9 tensors in 96 bytes, the lower bound. */
static void test_tflite_complex_records(void **state)
{
    (void)state;
    dfg_buffer b[] = {
        {32, 0, 1, 0, 0, 0}, {32, 1, 4, 0, 0, 0}, {8, 2, 5, 0, 0, 0}, {16, 3, 5, 0, 0, 0},
        {8, 4, 5, 0, 0, 0},  {64, 5, 7, 0, 0, 0}, {8, 6, 8, 0, 0, 0}, {8, 7, 8, 0, 0, 0},
        {16, 8, 9, 0, 0, 0},
    };
    assert_int_equal(dfg_plan_lower_bound(b, COUNT(b), 1, NULL), 96);
    assert_int_equal(plan_checked(DFG_PLANNER_GREEDY_SIZE, b, COUNT(b), 1), 96);
    assert_int_equal(plan_checked(DFG_PLANNER_NO_REUSE, b, COUNT(b), 1), 192);
}

static void test_alignment_rounds_sizes(void **state)
{
    (void)state;
    /* All alive at step 3: the arena is the sum of the rounded sizes. */
    const dfg_buffer sizes[] = {
        {1, 0, 3, 0, 0, 0}, {255, 1, 3, 0, 0, 0}, {256, 2, 3, 0, 0, 0}, {257, 3, 3, 0, 0, 0},
    };
    int32_t n = COUNT(sizes);
    assert_int_equal(dfg_plan_lower_bound(sizes, n, 256, NULL), 1280);
    assert_int_equal(dfg_plan_no_reuse_bytes(sizes, n, 256, NULL), 1280);
    assert_int_equal(dfg_plan_lower_bound(sizes, n, 1, NULL), 769);
    for (int32_t p = 0; p < COUNT(planners); p++) {
        dfg_buffer b[4];
        memcpy(b, sizes, sizeof b);
        assert_int_equal(plan_checked(planners[p], b, n, 256), 1280);
        for (int32_t i = 0; i < n; i++)
            assert_int_equal(b[i].offset % 256, 0);
    }
}

static void test_zero_size_buffers(void **state)
{
    (void)state;
    const dfg_buffer sizes[] = {
        {0, 0, 4, 0, 0, 0}, {100, 0, 2, 0, 0, 0}, {0, 1, 1, 0, 0, 0}, {50, 2, 4, 0, 0, 0}, {0, 3, 4, 0, 0, 0},
    };
    int32_t n = COUNT(sizes);
    assert_int_equal(dfg_plan_lower_bound(sizes, n, 64, NULL), 192);
    assert_int_equal(dfg_plan_no_reuse_bytes(sizes, n, 64, NULL), 192);
    for (int32_t p = 0; p < COUNT(planners); p++) {
        dfg_buffer b[5];
        memcpy(b, sizes, sizeof b);
        for (int32_t i = 0; i < n; i++)
            b[i].offset = 12345;
        assert_int_equal(plan_checked(planners[p], b, n, 64), 192);
        assert_int_equal(b[0].offset, 0);
        assert_int_equal(b[2].offset, 0);
        assert_int_equal(b[4].offset, 0);
    }
    dfg_buffer empty[] = {{0, 0, 0, 7, 0, 0}, {0, 0, 1, 7, 0, 0}};
    for (int32_t p = 0; p < COUNT(planners); p++)
        assert_int_equal(plan_checked(planners[p], empty, 2, 8), 0);
    int64_t arena = -1;
    assert_int_equal(dfg_plan_greedy_size(NULL, 0, 1, NULL, &arena), DFG_OK);
    assert_int_equal(arena, 0);
}

static void test_single_buffer(void **state)
{
    (void)state;
    for (int32_t p = 0; p < COUNT(planners); p++) {
        dfg_buffer b = {1000, 3, 7, -5, 0, 0};
        assert_int_equal(plan_checked(planners[p], &b, 1, 256), 1024);
        assert_int_equal(b.offset, 0);
    }
}

static void test_disjoint_lifetimes_reuse_everything(void **state)
{
    (void)state;
    const dfg_buffer sizes[] = {
        {300, 0, 0, 0, 0, 0}, {700, 1, 2, 0, 0, 0}, {100, 3, 3, 0, 0, 0}, {500, 4, 9, 0, 0, 0},
    };
    assert_int_equal(dfg_plan_lower_bound(sizes, 4, 1, NULL), 700);
    dfg_buffer b[4];
    memcpy(b, sizes, sizeof b);
    assert_int_equal(plan_checked(DFG_PLANNER_GREEDY_SIZE, b, 4, 1), 700);
    for (int32_t i = 0; i < 4; i++)
        assert_int_equal(b[i].offset, 0);
    memcpy(b, sizes, sizeof b);
    assert_int_equal(plan_checked(DFG_PLANNER_GREEDY_BREADTH, b, 4, 1), 700);
    memcpy(b, sizes, sizeof b);
    assert_int_equal(plan_checked(DFG_PLANNER_NO_REUSE, b, 4, 1), 1600);
}

static void test_overlapping_lifetimes_reuse_nothing(void **state)
{
    (void)state;
    const dfg_buffer sizes[] = {
        {300, 0, 5, 0, 0, 0}, {700, 1, 5, 0, 0, 0}, {100, 2, 6, 0, 0, 0}, {500, 5, 9, 0, 0, 0},
    };
    assert_int_equal(dfg_plan_lower_bound(sizes, 4, 1, NULL), 1600);
    for (int32_t p = 0; p < COUNT(planners); p++) {
        dfg_buffer b[4];
        memcpy(b, sizes, sizeof b);
        assert_int_equal(plan_checked(planners[p], b, 4, 1), 1600);
    }
}

/* Steps far apart (sparse) must give the same plan as dense ones. */
static void test_sparse_steps(void **state)
{
    (void)state;
    dfg_buffer dense[] = {{10, 0, 1, 0, 0, 0}, {20, 1, 2, 0, 0, 0}, {30, 2, 3, 0, 0, 0}};
    dfg_buffer sparse[] = {
        {10, 0, 1000000, 0, 0, 0}, {20, 1000000, 2000000000, 0, 0, 0},
        {30, 2000000000, 2100000000, 0, 0, 0},
    };
    for (int32_t p = 0; p < COUNT(planners); p++) {
        int64_t a = plan_checked(planners[p], dense, 3, 1);
        assert_int_equal(plan_checked(planners[p], sparse, 3, 1), a);
        for (int32_t i = 0; i < 3; i++)
            assert_int_equal(sparse[i].offset, dense[i].offset);
    }
    assert_int_equal(dfg_plan_lower_bound(sparse, 3, 1, NULL), 50);
}

static void test_bad_input_is_rejected(void **state)
{
    (void)state;
    dfg_buffer b[] = {{10, 0, 1, 0, 0, 0}, {20, 1, 2, 0, 0, 0}};
    int64_t arena;
    for (int32_t p = 0; p < COUNT(planners); p++) {
        assert_int_equal(dfg_plan_buffers(planners[p], b, 2, 3, NULL, &arena),
                         DFG_ERR_INVALID_ARGUMENT);
        assert_int_equal(dfg_plan_buffers(planners[p], b, 2, 0, NULL, &arena),
                         DFG_ERR_INVALID_ARGUMENT);
        assert_int_equal(dfg_plan_buffers(planners[p], NULL, 2, 1, NULL, &arena),
                         DFG_ERR_INVALID_ARGUMENT);
        dfg_buffer bad_size[] = {{-1, 0, 1, 0, 0, 0}};
        assert_int_equal(dfg_plan_buffers(planners[p], bad_size, 1, 1, NULL, &arena),
                         DFG_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(dfg_last_error(), "buffer 0"));
        dfg_buffer bad_steps[] = {{1, 0, 1, 0, 0, 0}, {1, 3, 2, 0, 0, 0}};
        assert_int_equal(dfg_plan_buffers(planners[p], bad_steps, 2, 1, NULL, &arena),
                         DFG_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(dfg_last_error(), "buffer 1"));
        dfg_buffer huge[] = {{INT64_MAX / 2, 0, 1, 0, 0, 0}, {INT64_MAX / 2, 0, 1, 0, 0, 0},
                             {INT64_MAX / 2, 0, 1, 0, 0, 0}};
        assert_int_equal(dfg_plan_buffers(planners[p], huge, 3, 1, NULL, &arena),
                         DFG_ERR_OVERFLOW);
        dfg_buffer unalignable[] = {{INT64_MAX - 2, 0, 1, 0, 0, 0}};
        assert_int_equal(dfg_plan_buffers(planners[p], unalignable, 1, 256,
                                          NULL, &arena), DFG_ERR_OVERFLOW);
    }
    assert_int_equal(dfg_plan_buffers(DFG_PLANNER_COUNT, b, 2, 1, NULL, &arena),
                     DFG_ERR_INVALID_ARGUMENT);
    assert_int_equal(dfg_plan_lower_bound(b, 2, 3, NULL), -1);
    assert_int_equal(dfg_plan_no_reuse_bytes(b, 2, 6, NULL), -1);
}

static void test_verifier_names_the_conflict(void **state)
{
    (void)state;
    dfg_buffer b[] = {
        {64, 0, 2, 0, 0, 0}, {64, 1, 3, 64, 0, 0}, {32, 3, 4, 16, 0, 0}, {64, 2, 2, 128, 0, 0},
    };
    /* Buffer 0 and 2 share bytes [16, 48) but never live together. */
    assert_int_equal(dfg_plan_verify_buffers(b, 4, 16, 192, NULL), DFG_OK);
    b[2].offset = 96;  /* onto buffer 1 at step 3 */
    assert_int_equal(dfg_plan_verify_buffers(b, 4, 16, 192, NULL), DFG_ERR_PLAN);
    assert_non_null(strstr(dfg_last_error(), "buffers 1 "));
    assert_non_null(strstr(dfg_last_error(), " 2 (steps 3..4, bytes [96, 128))"));
    b[2].offset = 16;
    assert_int_equal(dfg_plan_verify_buffers(b, 4, 16, 191, NULL), DFG_ERR_PLAN);
    assert_non_null(strstr(dfg_last_error(), "buffer 3"));
    b[3].offset = 120;
    assert_int_equal(dfg_plan_verify_buffers(b, 4, 16, 192, NULL), DFG_ERR_PLAN);
    assert_non_null(strstr(dfg_last_error(), "multiple of 16"));
    b[3].offset = -16;
    assert_int_equal(dfg_plan_verify_buffers(b, 4, 16, 192, NULL), DFG_ERR_PLAN);
    /* Bytes that merely touch are not shared. */
    b[3].offset = 128;
    b[2].offset = 64;
    b[1].offset = 0;
    b[0].offset = 64;
    assert_int_equal(dfg_plan_verify_buffers(b, 4, 16, 192, NULL), DFG_OK);
    assert_int_equal(dfg_plan_verify_buffers(b, 4, 3, 192, NULL),
                     DFG_ERR_INVALID_ARGUMENT);
}

/* A concat's buffer planned slot by slot: cells A, B, C of one group at
 * offsets 0, 256, 512, live from steps 0, 5 and 7 to 9, and X (512 bytes,
 * steps 0..4). Only placed inside B's and C's bytes, before they are
 * written, does X leave the arena at the lower bound of 768 bytes. */
static const dfg_buffer staircase[] = {
    {256, 0, 9, 0, 1, 0}, {256, 5, 9, 0, 1, 256}, {256, 7, 9, 0, 1, 512},
    {512, 0, 4, 0, 0, 0},
};

static void test_group_planned_as_one(void **state)
{
    (void)state;
    int32_t n = COUNT(staircase);
    assert_int_equal(dfg_plan_lower_bound(staircase, n, 256, NULL), 768);
    assert_int_equal(dfg_plan_no_reuse_bytes(staircase, n, 256, NULL), 1280);
    for (int32_t p = 0; p < COUNT(planners); p++) {
        dfg_buffer b[4];
        memcpy(b, staircase, sizeof b);
        int64_t arena = plan_checked(planners[p], b, n, 256);
        assert_int_equal(arena, planners[p] == DFG_PLANNER_NO_REUSE ? 1280 : 768);
        assert_int_equal(b[1].offset, b[0].offset + 256);
        assert_int_equal(b[2].offset, b[0].offset + 512);
    }
}

/* The lifetimes of vit_b_16's encoder layers (bytes of one 197x768 f32
 * tensor R, the 3R attention projections, the 1.78 MiB scores S and the
 * 2.31 MiB MLP hidden M; steps as the compiler orders them), repeated
 * over `layers` layers of ENCODER_STEPS steps. The residual stream crosses
 * layers: the residual written after a layer's attention lives through its
 * MLP and the next layer's attention. The peak, at each attention, is S
 * and four R. In size order the M go to offset 0 and the residual above
 * them, which leaves under it a gap of M - S < R at the attention: greedy
 * by size plans 1.13x the bound, and so did the hill climb before it
 * restarted from the area order and worked on every unit at the top (it
 * reached the bound up to 4 layers only). */
#define ENCODER_STEPS 30
#define ENCODER_R 605184
static int32_t encoder_layers(dfg_buffer *b, int32_t layers)
{
    static const struct { int64_t size; int32_t first, last; } layer[] = {
        {ENCODER_R, 5, 6}, {ENCODER_R, 6, 7}, {3 * ENCODER_R, 7, 11},
        {ENCODER_R, 9, 13}, {ENCODER_R, 10, 18}, {ENCODER_R, 11, 16},
        {ENCODER_R, 13, 19}, {ENCODER_R, 16, 21}, {ENCODER_R, 18, 19},
        {1862832, 19, 21}, {ENCODER_R, 21, 22}, {ENCODER_R, 22, 24},
        {ENCODER_R, 24, 26}, {ENCODER_R, 26, 27 + ENCODER_STEPS},
        {ENCODER_R, 28, 29}, {4 * ENCODER_R, 29, 32}, {ENCODER_R, 32, 34},
    };
    int32_t n = 0;
    b[n++] = (dfg_buffer){.size = ENCODER_R, .first_step = 3, .last_step = 27};
    for (int32_t l = 0; l < layers; l++)
        for (int32_t i = 0; i < COUNT(layer); i++)
            b[n++] = (dfg_buffer){.size = layer[i].size,
                                  .first_step = layer[i].first + l * ENCODER_STEPS,
                                  .last_step = layer[i].last + l * ENCODER_STEPS};
    return n;
}

static void test_cross_layer_residual_planned_at_bound(void **state)
{
    (void)state;
    dfg_buffer b[1 + 17 * 12];
    int32_t n = encoder_layers(b, 12);
    int64_t bound = dfg_plan_lower_bound(b, n, 256, NULL);
    assert_int_equal(bound, 1862912 + 4 * ENCODER_R);
    assert_true(plan_checked(DFG_PLANNER_GREEDY_SIZE, b, n, 256) > bound);
    assert_int_equal(plan_checked(DFG_PLANNER_HILL_CLIMB, b, n, 256), bound);
    assert_int_equal(plan_checked(DFG_PLANNER_SMALLEST, b, n, 256), bound);
}

/* Fault-planted plans: a planner that moves a cell out of its group's
 * line, or the group onto a live cell, is caught; groups that are not
 * well formed are refused. */
static void test_verifier_catches_broken_groups(void **state)
{
    (void)state;
    dfg_buffer b[4];
    memcpy(b, staircase, sizeof b);
    int64_t arena = plan_checked(DFG_PLANNER_GREEDY_SIZE, b, 4, 256);
    assert_int_equal(b[0].offset, 0);
    assert_int_equal(b[3].offset, 256);
    b[2].offset = 768; /* C out of line: its bytes are free there */
    assert_int_equal(dfg_plan_verify_buffers(b, 4, 256, 1024, NULL), DFG_ERR_PLAN);
    assert_non_null(strstr(dfg_last_error(), "cell 2"));
    b[2].offset = 512;
    b[3].last_step = 5; /* X still there when B is written */
    assert_int_equal(dfg_plan_verify_buffers(b, 4, 256, arena, NULL), DFG_ERR_PLAN);
    assert_non_null(strstr(dfg_last_error(), " and 1 (steps 5..9"));
    b[3].last_step = 4;
    for (int32_t i = 0; i < 3; i++) /* the whole group onto X */
        b[i].offset += 256;
    assert_int_equal(dfg_plan_verify_buffers(b, 4, 256, 1024, NULL), DFG_ERR_PLAN);
    assert_non_null(strstr(dfg_last_error(), "buffers 0 (steps 0..9"));
    for (int32_t i = 0; i < 3; i++)
        b[i].offset -= 256;
    assert_int_equal(dfg_plan_verify_buffers(b, 4, 256, arena, NULL), DFG_OK);

    int64_t out;
    memcpy(b, staircase, sizeof b);
    b[1].group = 5; /* no such buffer */
    assert_int_equal(dfg_plan_greedy_size(b, 4, 256, NULL, &out),
                     DFG_ERR_INVALID_ARGUMENT);
    assert_int_equal(dfg_plan_verify_buffers(b, 4, 256, 1024, NULL),
                     DFG_ERR_INVALID_ARGUMENT);
    b[1].group = 2; /* a base that is not its own group's */
    assert_int_equal(dfg_plan_hill_climb(b, 4, 256, NULL, &out),
                     DFG_ERR_INVALID_ARGUMENT);
    b[1].group = 1;
    b[1].cell_offset = 100; /* not aligned */
    assert_int_equal(dfg_plan_no_reuse(b, 4, 256, NULL, &out),
                     DFG_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(dfg_last_error(), "cell offset 100"));
    b[1].cell_offset = INT64_MAX - 255;
    assert_int_equal(dfg_plan_greedy_breadth(b, 4, 256, NULL, &out),
                     DFG_ERR_OVERFLOW);
    assert_int_equal(dfg_plan_lower_bound(b, 4, 256, NULL), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paper_example),
        cmocka_unit_test(test_tflite_complex_records),
        cmocka_unit_test(test_alignment_rounds_sizes),
        cmocka_unit_test(test_zero_size_buffers),
        cmocka_unit_test(test_single_buffer),
        cmocka_unit_test(test_disjoint_lifetimes_reuse_everything),
        cmocka_unit_test(test_overlapping_lifetimes_reuse_nothing),
        cmocka_unit_test(test_sparse_steps),
        cmocka_unit_test(test_bad_input_is_rejected),
        cmocka_unit_test(test_verifier_names_the_conflict),
        cmocka_unit_test(test_group_planned_as_one),
        cmocka_unit_test(test_verifier_catches_broken_groups),
        cmocka_unit_test(test_cross_layer_residual_planned_at_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
