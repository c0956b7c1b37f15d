/* The FLOPs-versus-budget curve of a training step is monotone: at 90,
 * 75, 50, 40, 33 and 25% of the unconstrained arena, a smaller budget
 * never costs fewer FLOPs than a larger one, and never fits where a
 * larger one was refused; every plan that fits is verified, every refusal
 * says the budget cannot be met. The same in absolute budgets (bytes
 * of the unconstrained arena), each plan's arena within its budget. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "dfg/dfg.h"
#include "tests/training/fire_fixture.h"

#define OK(x) assert_int_equal((x), DFG_OK)

typedef struct point {
    int fits;
    int64_t flops, arena;
} point;

/* The step under percent% (or bytes when percent is 0; neither: none). */
static point plan(const dfg_graph *g, float percent, uint64_t bytes)
{
    dfg_program *p;
    point at = {0, 0, 0};
    if (!fire_compile(g, percent, bytes, &p))
        return at;
    dfg_plan_stats stats;
    dfg_program_stats(p, &stats);
    assert_true(stats.verified);
    at.fits = 1;
    at.arena = (int64_t)stats.arena_bytes;
    for (int32_t s = 0; s < stats.n_steps; s++) {
        dfg_step_info info;
        OK(dfg_program_step_info(p, s, &info));
        at.flops += info.flops;
    }
    dfg_program_destroy(p);
    return at;
}

/* One curve: in percent (bytes 0) or in bytes of the unconstrained
 * program's arena. */
static void check_curve(const dfg_graph *g, const point *none, int bytes)
{
    static const float budgets[] = {90, 75, 50, 40, 33, 25};
    enum { COUNT = sizeof budgets / sizeof budgets[0] };
    point curve[COUNT];
    for (int k = 0; k < COUNT; k++) {
        uint64_t b = (uint64_t)((double)none->arena * budgets[k] / 100.0);
        curve[k] = bytes ? plan(g, 0.0f, b) : plan(g, budgets[k], 0);
        print_message("%2.0f%%%s: %s, arena %lld B, %+.2f%% FLOPs\n",
                      (double)budgets[k], bytes ? " in bytes" : "",
                      curve[k].fits ? "fits" : "cannot be met",
                      (long long)curve[k].arena,
                      curve[k].fits ? 100.0 * (double)(curve[k].flops -
                                                       none->flops) /
                                          (double)none->flops
                                    : 0.0);
        if (bytes && curve[k].fits)
            assert_true(curve[k].arena <= (int64_t)b);
        if (k > 0 && curve[k].fits) {
            assert_true(curve[k - 1].fits);
            assert_true(curve[k].flops >= curve[k - 1].flops);
        }
    }
    assert_true(curve[0].fits);
}

static void test_curve_is_monotone(void **state)
{
    (void)state;
    const int64_t shapes[][3] = {{2, 12, 16}, {1, 27, 16}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        dfg_graph *g = fire_net(shapes[s][0], shapes[s][1], shapes[s][2]);
        point none = plan(g, 0.0f, 0);
        assert_true(none.fits);
        check_curve(g, &none, 0);
        check_curve(g, &none, 1);
        dfg_graph_destroy(g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_curve_is_monotone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
