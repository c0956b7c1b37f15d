/* The planners on thousands of seeded random graphs and chains: every plan
 * passes the verifier and lies between the lower bound and no reuse; the
 * verifier agrees with a brute-force check and rejects every broken plan;
 * dfg_program_verify on small hand-built programs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "passes/memory_plan.h"
#include "program/program.h"
#include "tests/ir/random_lifetimes.h"
#include "util/memory.h"

#define MAX_TENSORS 400

/* Seeded random cases of the planner sweep and of the longer climb: under
 * the sanitizers (DFG_TEST_SANITIZED, tests/meson.build) a prefix of the
 * normal build's, the same cases, each still planned by every planner and
 * verified; the counts the sweep must reach scale with it (the first 100
 * climbs already hold longer ones that win). */
#ifdef DFG_TEST_SANITIZED
#define RANDOM_ROUNDS 1000
#define CLIMB_ROUNDS 100
#else
#define RANDOM_ROUNDS 5000
#define CLIMB_ROUNDS 200
#endif

static const dfg_planner planners[] = {
    DFG_PLANNER_NO_REUSE, DFG_PLANNER_GREEDY_SIZE, DFG_PLANNER_GREEDY_BREADTH,
    DFG_PLANNER_HILL_CLIMB, DFG_PLANNER_SMALLEST,
};
#define N_PLANNERS ((int32_t)(sizeof planners / sizeof planners[0]))

/* Sizes from empty to huge: 0, a few bytes, up to a megabyte, up to 2^40. */
static int64_t random_size(uint64_t *rng)
{
    switch (dfg_random_below(rng, 8)) {
    case 0: return 0;
    case 1: return 1 + dfg_random_below(rng, 16);
    case 2: return (int64_t)1 << 40 >> dfg_random_below(rng, 8);
    default: return 1 + dfg_random_below(rng, (int64_t)1 << 20);
    }
}

/* Runs of consecutive buffers become rigid groups, each cell after the
 * one before it and live from its own first step to the group's last
 * (a concat's buffer planned slot by slot). */
static void make_staircases(uint64_t *rng, dfg_buffer *b, int32_t n,
                            int64_t alignment)
{
    for (int32_t i = 0; i + 1 < n;) {
        int32_t k = 2 + (int32_t)dfg_random_below(rng, 5);
        if (k > n - i || dfg_random_below(rng, 2) == 0) {
            i++;
            continue;
        }
        int32_t last = 0;
        for (int32_t j = i; j < i + k; j++)
            last = b[j].last_step > last ? b[j].last_step : last;
        int64_t at = 0;
        for (int32_t j = i; j < i + k; j++) {
            b[j].group = i + 1;
            b[j].cell_offset = at;
            b[j].last_step = last;
            at += (b[j].size + alignment - 1) / alignment * alignment;
        }
        i += k;
    }
}

/* A random graph (or, one time in four, a chain) of up to MAX_TENSORS
 * tensors with random sizes; returns the tensor count and an alignment. */
static int32_t random_case(uint64_t *rng, dfg_buffer *b, int64_t *alignment)
{
    int32_t n = dfg_random_below(rng, 10) == 0
        ? (int32_t)dfg_random_below(rng, MAX_TENSORS + 1)
        : (int32_t)dfg_random_below(rng, 40);
    if (dfg_random_below(rng, 4) == 0) {
        dfg_chain_lifetimes(b, n);
    } else {
        dfg_random_dag_shape shape = {
            .window = (int32_t)dfg_random_below(rng, 20),
            .max_extra_inputs = (int32_t)dfg_random_below(rng, 4),
            .previous_percent = (int32_t)dfg_random_below(rng, 101),
            .n_graph_inputs = (int32_t)dfg_random_below(rng, 4),
            .input_read_per_mille = (int32_t)dfg_random_below(rng, 200),
        };
        dfg_random_dag_lifetimes(rng, &shape, b, n);
    }
    for (int32_t i = 0; i < n; i++) {
        b[i].size = random_size(rng);
        b[i].offset = -1;
        b[i].group = 0;
        b[i].cell_offset = 0;
    }
    *alignment = (int64_t)1 << dfg_random_below(rng, 10);
    if (dfg_random_below(rng, 3) == 0)
        make_staircases(rng, b, n, *alignment);
    return n;
}

static int lifetimes_overlap(const dfg_buffer *x, const dfg_buffer *y)
{
    return x->first_step <= y->last_step && y->first_step <= x->last_step;
}

static int bytes_overlap(const dfg_buffer *x, const dfg_buffer *y)
{
    return x->size > 0 && y->size > 0 && x->offset < y->offset + y->size &&
           y->offset < x->offset + x->size;
}

/* What the verifier must say, the slow way. */
static dfg_status brute_force_verify(const dfg_buffer *b, int32_t n,
                                     int64_t alignment, int64_t arena)
{
    for (int32_t i = 0; i < n; i++)
        if (b[i].offset < 0 || b[i].offset % alignment != 0 ||
            b[i].offset + b[i].size > arena ||
            (b[i].group > 0 &&
             b[i].offset != b[b[i].group - 1].offset + b[i].cell_offset))
            return DFG_ERR_PLAN;
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = i + 1; j < n; j++)
            if (lifetimes_overlap(&b[i], &b[j]) && bytes_overlap(&b[i], &b[j]))
                return DFG_ERR_PLAN;
    return DFG_OK;
}

/* Max over steps of the aligned bytes alive, the slow way. */
static int64_t brute_force_lower_bound(const dfg_buffer *b, int32_t n,
                                       int64_t alignment)
{
    int64_t bound = 0;
    for (int32_t i = 0; i < n; i++) {
        int64_t live = 0;
        for (int32_t j = 0; j < n; j++)
            if (b[j].first_step <= b[i].first_step &&
                b[i].first_step <= b[j].last_step)
                live += (b[j].size + alignment - 1) / alignment * alignment;
        if (live > bound)
            bound = live;
    }
    return bound;
}

/* Breaks a valid plan in each way a planner could, and checks that the
 * verifier notices every time. Returns how many breakages were tried. */
static int32_t check_broken_plans(dfg_buffer *b, int32_t n, int64_t alignment,
                                  int64_t arena)
{
    int32_t tried = 0;
    /* About ten buffers per plan: each check costs O(n log n). */
    int32_t stride = n / 10 > 1 ? n / 10 : 1;
    for (int32_t i = 0; i < n; i += stride) {
        if (b[i].size == 0)
            continue;
        int64_t offset = b[i].offset;
        /* Onto another buffer alive at the same time. */
        for (int32_t j = 0; j < n; j++) {
            if (j == i || b[j].size == 0 || !lifetimes_overlap(&b[i], &b[j]))
                continue;
            b[i].offset = b[j].offset;
            if (b[i].offset + b[i].size <= arena) {
                assert_int_equal(dfg_plan_verify_buffers(b, n, alignment, arena, NULL),
                                 DFG_ERR_PLAN);
                tried++;
            }
            break;
        }
        b[i].offset = arena - b[i].size + 1;  /* one byte past the end */
        assert_int_equal(dfg_plan_verify_buffers(b, n, 1, arena, NULL), DFG_ERR_PLAN);
        b[i].offset = -alignment;
        assert_int_equal(dfg_plan_verify_buffers(b, n, alignment, arena, NULL),
                         DFG_ERR_PLAN);
        if (alignment > 1) {
            b[i].offset = offset + alignment / 2;
            assert_int_equal(dfg_plan_verify_buffers(b, n, alignment,
                                                     arena + alignment, NULL),
                             DFG_ERR_PLAN);
        }
        if (b[i].group > 0 && b[i].group - 1 != i &&
            offset + alignment + b[i].size <= arena) {
            b[i].offset = offset + alignment; /* out of its group's line */
            assert_int_equal(dfg_plan_verify_buffers(b, n, alignment, arena, NULL),
                             DFG_ERR_PLAN);
            assert_non_null(strstr(dfg_last_error(), "group"));
            tried++;
        }
        b[i].offset = offset;
        tried += 3;
        assert_int_equal(dfg_plan_verify_buffers(b, n, alignment, arena, NULL), DFG_OK);
    }
    return tried;
}

static void test_random_plans(void **state)
{
    (void)state;
    uint64_t rng = 0x5eed0001;
    static dfg_buffer lifetimes[MAX_TENSORS], b[MAX_TENSORS];
    int64_t tried = 0, reused = 0;
    for (int32_t round = 0; round < RANDOM_ROUNDS; round++) {
        int64_t alignment;
        int32_t n = random_case(&rng, lifetimes, &alignment);
        int64_t bound = dfg_plan_lower_bound(lifetimes, n, alignment, NULL);
        int64_t no_reuse = dfg_plan_no_reuse_bytes(lifetimes, n, alignment, NULL);
        assert_true(bound >= 0 && bound <= no_reuse);
        if (n <= 60)
            assert_int_equal(bound, brute_force_lower_bound(lifetimes, n,
                                                            alignment));
        for (int32_t p = 0; p < N_PLANNERS; p++) {
            memcpy(b, lifetimes, (size_t)n * sizeof *b);
            int64_t arena = -1;
            assert_int_equal(dfg_plan_buffers(planners[p], b, n, alignment,
                                              NULL, &arena), DFG_OK);
            assert_int_equal(dfg_plan_verify_buffers(b, n, alignment, arena, NULL),
                             DFG_OK);
            assert_true(bound <= arena && arena <= no_reuse);
            if (planners[p] == DFG_PLANNER_NO_REUSE)
                assert_int_equal(arena, no_reuse);
            else if (arena < no_reuse)
                reused++;
            if (round % 8 == p)
                tried += check_broken_plans(b, n, alignment, arena);
        }
    }
    /* The cases must exercise reuse and breakage, not just empty graphs. */
    assert_true(reused > RANDOM_ROUNDS * 3 / 5);
    assert_true(tried > RANDOM_ROUNDS * 2);
}

/* The longer climb (a budget's target missed with the bound under it)
 * follows the same seeded climbs further: a verified plan, never larger
 * than the plain climb's, and smaller on some cases. */
static void test_longer_climb_never_loses(void **state)
{
    (void)state;
    uint64_t rng = 0x5eed0003;
    static dfg_buffer lifetimes[MAX_TENSORS], b[MAX_TENSORS];
    int32_t smaller = 0;
    for (int32_t round = 0; round < CLIMB_ROUNDS; round++) {
        int64_t alignment;
        int32_t n = random_case(&rng, lifetimes, &alignment);
        int64_t plain = -1, longer = -1;
        memcpy(b, lifetimes, (size_t)n * sizeof *b);
        assert_int_equal(dfg_plan_hill_climb(b, n, alignment, NULL, &plain), DFG_OK);
        memcpy(b, lifetimes, (size_t)n * sizeof *b);
        assert_int_equal(dfg_plan_hill_climb_long(b, n, alignment, NULL, &longer),
                         DFG_OK);
        assert_int_equal(dfg_plan_verify_buffers(b, n, alignment, longer, NULL),
                         DFG_OK);
        assert_true(dfg_plan_lower_bound(lifetimes, n, alignment, NULL) <= longer);
        assert_true(longer <= plain);
        smaller += longer < plain;
    }
    assert_true(smaller > 0);
}

/* Random offsets, some valid and most not: the sweep and the brute force
 * must agree on every one. */
static void test_verifier_agrees_with_brute_force(void **state)
{
    (void)state;
    uint64_t rng = 0x5eed0002;
    static dfg_buffer b[64];
    int32_t accepted = 0, rejected = 0;
    for (int32_t round = 0; round < 20000; round++) {
        int32_t n = (int32_t)dfg_random_below(&rng, 12);
        dfg_random_dag_shape shape = {4, 2, 50, 1, 100};
        dfg_random_dag_lifetimes(&rng, &shape, b, n);
        int64_t alignment = (int64_t)1 << dfg_random_below(&rng, 3);
        int64_t arena = 16 * (1 + dfg_random_below(&rng, 8));
        for (int32_t i = 0; i < n; i++) {
            b[i].size = dfg_random_below(&rng, 12);
            b[i].offset = dfg_random_below(&rng, arena) - (dfg_random_below(&rng, 50) == 0);
            b[i].group = 0;
            b[i].cell_offset = 0;
        }
        /* Now and then a pair in a rigid group, mostly in line. */
        if (n >= 2 && dfg_random_below(&rng, 4) == 0) {
            b[0].group = b[1].group = 1;
            b[1].cell_offset = 16 * dfg_random_below(&rng, 2);
            if (dfg_random_below(&rng, 3) > 0)
                b[1].offset = b[0].offset + b[1].cell_offset;
        }
        dfg_status expected = brute_force_verify(b, n, alignment, arena);
        assert_int_equal(dfg_plan_verify_buffers(b, n, alignment, arena, NULL), expected);
        if (expected == DFG_OK)
            accepted++;
        else
            rejected++;
    }
    assert_true(accepted > 1000 && rejected > 1000);
}

/* One large graph with a few tensors alive throughout: the interval
 * structures at a size where a slip would show. */
static void test_large_graph(void **state)
{
    (void)state;
    enum { N = 20000 };
    uint64_t rng = 0x5eed0003;
    dfg_buffer *lifetimes = calloc(N, sizeof *lifetimes);
    dfg_buffer *b = malloc(N * sizeof *b);
    assert_non_null(lifetimes);
    assert_non_null(b);
    dfg_random_dag_shape shape = {32, 2, 100, 4, 10};
    dfg_random_dag_lifetimes(&rng, &shape, lifetimes, N);
    for (int32_t i = 0; i < N; i++)
        lifetimes[i].size = 1 + dfg_random_below(&rng, 1 << 20);
    int64_t bound = dfg_plan_lower_bound(lifetimes, N, 256, NULL);
    for (int32_t p = 0; p < N_PLANNERS; p++) {
        memcpy(b, lifetimes, N * sizeof *b);
        int64_t arena;
        assert_int_equal(dfg_plan_buffers(planners[p], b, N, 256, NULL, &arena), DFG_OK);
        assert_int_equal(dfg_plan_verify_buffers(b, N, 256, arena, NULL), DFG_OK);
        assert_true(arena >= bound);
        if (planners[p] != DFG_PLANNER_NO_REUSE)
            assert_true(arena < 2 * bound);
    }
    free(lifetimes);
    free(b);
}

/* A program of 4 arena tensors over 3 steps, laid out without conflicts:
 * x [0, 256) steps 0..1, y [256, 512) steps 1..2, z [0, 256) step 2, and
 * w, a weight. */
static dfg_program *small_program(void)
{
    dfg_program *p = dfg_program_alloc(NULL, 5, 3, 1, 1, 64);
    assert_non_null(p);
    p->region_bytes[DFG_REGION_ARENA] = 512;
    p->stats.alignment = 256;
    const struct {
        const char *name;
        dfg_region region;
        int64_t offset, bytes;
        int32_t first, last;
    } t[] = {
        {"x", DFG_REGION_ARENA, 0, 256, 0, 1},
        {"y", DFG_REGION_ARENA, 256, 200, 1, 2},
        {"z", DFG_REGION_ARENA, 0, 256, 2, 2},
        {"w", DFG_REGION_WEIGHTS, 0, 64, 0, 2},
        {"v", DFG_REGION_WEIGHTS, 32, 32, 0, 2},
    };
    for (int32_t i = 0; i < 5; i++) {
        dfg_program_tensor *pt = &p->tensors[i];
        pt->name = dfg_strdup(NULL, t[i].name);
        pt->region = t[i].region;
        pt->offset = t[i].offset;
        pt->bytes = t[i].bytes;
        pt->first_step = t[i].first;
        pt->last_step = t[i].last;
        pt->alias_of = -1;
        pt->kind = t[i].region == DFG_REGION_ARENA ? DFG_TENSOR_ACTIVATION
                                                    : DFG_TENSOR_WEIGHT;
    }
    p->tensors[4].alias_of = 3;  /* a slice of the weight */
    return p;
}

static void test_program_verify(void **state)
{
    (void)state;
    dfg_program *p = small_program();
    assert_int_equal(dfg_program_verify(p), DFG_OK);

    /* z moved onto y while both live at step 2. */
    p->tensors[2].offset = 256;
    assert_int_equal(dfg_program_verify(p), DFG_ERR_PLAN);
    assert_non_null(strstr(dfg_last_error(), "'y' (#1, steps 1..2, bytes [256, 456))"));
    assert_non_null(strstr(dfg_last_error(), "'z' (#2, steps 2..2, bytes [256, 512))"));

    /* ... unless z is a view of y (or a view of a view of y), inside its
     * bytes and lifetime. */
    p->tensors[2].bytes = 200;
    p->tensors[2].alias_of = 1;
    p->tensors[2].kind = DFG_TENSOR_VIEW;
    assert_int_equal(dfg_program_verify(p), DFG_OK);
    p->tensors[2].alias_of = 0;  /* a view of x does not excuse it */
    assert_int_equal(dfg_program_verify(p), DFG_ERR_PLAN);
    p->tensors[0].alias_of = 1;  /* x itself a view of y: same root */
    p->tensors[0].offset = 256;
    p->tensors[0].bytes = 200;
    p->tensors[0].first_step = 1;
    assert_int_equal(dfg_program_verify(p), DFG_OK);
    p->tensors[1].alias_of = 2;  /* a cycle of aliases */
    assert_int_equal(dfg_program_verify(p), DFG_ERR_PLAN);
    assert_non_null(strstr(dfg_last_error(), "cycle"));
    p->tensors[1].alias_of = 9;
    assert_int_equal(dfg_program_verify(p), DFG_ERR_PLAN);
    dfg_program_destroy(p);

    /* Outside the region, misaligned, a bad lifetime. */
    p = small_program();
    p->tensors[1].offset = 384;
    assert_int_equal(dfg_program_verify(p), DFG_ERR_PLAN);
    assert_non_null(strstr(dfg_last_error(), "'y'"));
    assert_non_null(strstr(dfg_last_error(), "outside its region"));
    p->tensors[1].offset = 128;
    p->tensors[1].bytes = 100;
    assert_int_equal(dfg_program_verify(p), DFG_ERR_PLAN);
    assert_non_null(strstr(dfg_last_error(), "multiple of 256"));
    p->tensors[1].offset = 256;
    p->tensors[3].bytes = 65;
    assert_int_equal(dfg_program_verify(p), DFG_ERR_PLAN);
    assert_non_null(strstr(dfg_last_error(), "'w'"));
    p->tensors[3].bytes = 64;
    p->tensors[0].last_step = -1;
    assert_int_equal(dfg_program_verify(p), DFG_ERR_PLAN);
    p->tensors[0].last_step = 1;
    p->stats.alignment = 48;
    assert_int_equal(dfg_program_verify(p), DFG_ERR_PLAN);
    p->stats.alignment = 256;
    assert_int_equal(dfg_program_verify(p), DFG_OK);
    dfg_program_destroy(p);
    assert_int_equal(dfg_program_verify(NULL), DFG_ERR_INVALID_ARGUMENT);
}

/* A program whose tensors come from a random plan: the program verifier
 * accepts the plan and finds a moved tensor, like the buffer verifier. */
static void test_program_verify_random(void **state)
{
    (void)state;
    uint64_t rng = 0x5eed0004;
    static dfg_buffer b[MAX_TENSORS];
    int32_t moved = 0, views = 0;
    for (int32_t round = 0; round < 1000; round++) {
        int64_t alignment;
        int32_t n = random_case(&rng, b, &alignment);
        int64_t arena;
        assert_int_equal(dfg_plan_greedy_size(b, n, alignment, NULL, &arena), DFG_OK);
        dfg_program *p = dfg_program_alloc(NULL, n, n, 0, 0, 0);
        assert_non_null(p);
        p->region_bytes[DFG_REGION_ARENA] = arena;
        p->stats.alignment = (uint64_t)alignment;
        for (int32_t i = 0; i < n; i++)
            p->tensors[i] = (dfg_program_tensor){
                .bytes = b[i].size, .region = DFG_REGION_ARENA,
                .offset = b[i].offset, .first_step = b[i].first_step,
                .last_step = b[i].last_step, .alias_of = -1,
            };
        assert_int_equal(dfg_program_verify(p), DFG_OK);
        /* About ten tensors per program: each check costs O(n log n). */
        int32_t stride = n / 10 > 1 ? n / 10 : 1;
        for (int32_t i = 0; i < n; i += stride) {
            for (int32_t j = 0; j < n; j++) {
                if (i == j || b[i].size == 0 || b[j].size == 0 ||
                    !lifetimes_overlap(&b[i], &b[j]) ||
                    b[j].offset + b[i].size > arena)
                    continue;
                p->tensors[i].offset = b[j].offset;
                assert_int_equal(dfg_program_verify(p), DFG_ERR_PLAN);
                /* As a view of j, inside j's bytes and lifetime, it may. */
                if (b[i].size <= b[j].size &&
                    b[j].first_step <= b[i].first_step &&
                    b[i].last_step <= b[j].last_step) {
                    p->tensors[i].alias_of = j;
                    assert_int_equal(dfg_program_verify(p), DFG_OK);
                    p->tensors[i].alias_of = -1;
                    views++;
                }
                p->tensors[i].offset = b[i].offset;
                moved++;
                break;
            }
        }
        dfg_program_destroy(p);
    }
    assert_true(moved > 1000 && views > 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_plans),
        cmocka_unit_test(test_longer_climb_never_loses),
        cmocka_unit_test(test_verifier_agrees_with_brute_force),
        cmocka_unit_test(test_large_graph),
        cmocka_unit_test(test_program_verify),
        cmocka_unit_test(test_program_verify_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
