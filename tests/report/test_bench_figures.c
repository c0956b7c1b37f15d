/* The benchmark figures (include/dfg/bench.h): percentiles interpolated
 * between ranks, mean and throughput, the spread warning above 1.5, the
 * JSON report holding every figure, and bad arguments refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dfg/dfg.h"

static void percentiles_interpolate(void **state)
{
    (void)state;
    /* 1..101 ms, shuffled: percentile p is 1 + p ms exactly. */
    double seconds[101];
    for (int i = 0; i < 101; i++)
        seconds[i] = (double)(1 + (i * 37) % 101) * 1e-3;
    dfg_latency_stats s;
    assert_int_equal(dfg_latency_stats_compute(seconds, 101, 8, &s), DFG_OK);
    assert_float_equal(s.median, 51e-3, 1e-12);
    assert_float_equal(s.p90, 91e-3, 1e-12);
    assert_float_equal(s.p95, 96e-3, 1e-12);
    assert_float_equal(s.p99, 100e-3, 1e-12);
    assert_float_equal(s.min, 1e-3, 1e-12);
    assert_float_equal(s.max, 101e-3, 1e-12);
    assert_float_equal(s.mean, 51e-3, 1e-12);
    assert_float_equal(s.runs_per_second, 1.0 / 51e-3, 1e-9);
    assert_float_equal(s.samples_per_second, 8.0 / 51e-3, 1e-9);
    /* Between ranks: the 90th percentile of {1, 2} is 1.9. */
    double two[] = {2.0, 1.0};
    assert_int_equal(dfg_latency_stats_compute(two, 2, 1, &s), DFG_OK);
    assert_float_equal(s.p90, 1.9, 1e-12);
}

static void spread_warning(void **state)
{
    (void)state;
    double steady[100], wide[100];
    for (int i = 0; i < 100; i++) {
        steady[i] = 1e-3;
        wide[i] = i < 90 ? 1e-3 : 3e-3;
    }
    char text[256];
    dfg_latency_stats s;
    assert_int_equal(dfg_latency_stats_compute(steady, 100, 1, &s), DFG_OK);
    assert_false(s.wide_spread);
    assert_null(dfg_latency_spread_warning(&s, text, sizeof text));
    assert_int_equal(dfg_latency_stats_compute(wide, 100, 1, &s), DFG_OK);
    assert_true(s.wide_spread);
    assert_non_null(dfg_latency_spread_warning(&s, text, sizeof text));
    assert_non_null(strstr(text, "p99 is 3.00 x the median"));
}

static void json_holds_every_figure(void **state)
{
    (void)state;
    double seconds[] = {2e-3, 1e-3, 3e-3};
    dfg_bench_report r = {0};
    r.model = "example:mlp";
    r.backend = "cpu";
    r.threads = 4;
    r.iterations = 3;
    r.batch = 32;
    r.compile_seconds = 0.5;
    assert_int_equal(dfg_latency_stats_compute(seconds, 3, 32, &r.latency),
                     DFG_OK);
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    assert_non_null(out);
    assert_int_equal(dfg_bench_report_json(&r, out), DFG_OK);
    fclose(out);
    static const char *const keys[] = {
        "\"model\": \"example:mlp\"", "\"device\": null", "\"threads\": 4",
        "\"batch\": 32", "\"compile_ms\": 500.0000", "\"mean_ms\": 2.0000",
        "\"median_ms\": 2.0000", "\"p90_ms\": 2.8000", "\"p95_ms\": 2.9000",
        "\"p99_ms\": 2.9800", "\"min_ms\": 1.0000", "\"max_ms\": 3.0000",
        "\"runs_per_second\": 500.0000", "\"samples_per_second\": 16000.0000",
        "\"p99_over_median\": 1.4900", "\"warning\": null",
        "\"session_ms\"", "\"arena_bytes\"", "\"weights_bytes\"",
        "\"peak_rss_bytes\"", "\"rss_at_start_bytes\"", "\"iterations\": 3",
        "\"warmup\": 0", "\"backend\": \"cpu\""};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (!strstr(text, keys[i]))
            fail_msg("the report lacks %s:\n%s", keys[i], text);
    free(text);
}

static void bad_arguments(void **state)
{
    (void)state;
    double one = 1.0;
    dfg_latency_stats s;
    assert_int_equal(dfg_latency_stats_compute(&one, 0, 1, &s),
                     DFG_ERR_INVALID_ARGUMENT);
    assert_int_equal(dfg_latency_stats_compute(NULL, 1, 1, &s),
                     DFG_ERR_INVALID_ARGUMENT);
    assert_int_equal(dfg_latency_stats_compute(&one, 1, -1, &s),
                     DFG_ERR_INVALID_ARGUMENT);
    assert_int_equal(dfg_bench_report_json(NULL, stdout),
                     DFG_ERR_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(percentiles_interpolate),
        cmocka_unit_test(spread_warning),
        cmocka_unit_test(json_holds_every_figure),
        cmocka_unit_test(bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
