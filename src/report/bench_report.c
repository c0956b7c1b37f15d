/* Benchmark figures (include/dfg/bench.h): latency statistics and the
 * JSON report, written with the JSON writer so that no number goes
 * through printf's %f (the output does not depend on the C locale). */
#include "dfg/bench.h"

#include <math.h>
#include <stdlib.h>
#include "util/error.h"
#include "util/json_writer.h"

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The p-th percentile (0..100) of n sorted values, interpolating
 * linearly between the ranks around (n - 1) * p / 100. */
static double percentile(const double *sorted, size_t n, double p)
{
    double rank = (double)(n - 1) * p / 100.0;
    size_t below = (size_t)floor(rank);
    size_t above = below + 1 < n ? below + 1 : below;
    double fraction = rank - (double)below;
    return sorted[below] + (sorted[above] - sorted[below]) * fraction;
}

dfg_status dfg_latency_stats_compute(double *seconds, size_t n, int64_t batch,
                                     dfg_latency_stats *out)
{
    if (!seconds || !out || n == 0 || batch < 0)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_latency_stats_compute: no run times (n = %zu) "
                         "or a negative batch", n);
    qsort(seconds, n, sizeof *seconds, compare_doubles);
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += seconds[i];
    dfg_latency_stats s = {0};
    s.mean = sum / (double)n;
    s.median = percentile(seconds, n, 50);
    s.p90 = percentile(seconds, n, 90);
    s.p95 = percentile(seconds, n, 95);
    s.p99 = percentile(seconds, n, 99);
    s.min = seconds[0];
    s.max = seconds[n - 1];
    s.runs_per_second = s.mean > 0 ? 1.0 / s.mean : 0.0;
    s.samples_per_second = s.runs_per_second * (double)batch;
    s.p99_over_median = s.median > 0 ? s.p99 / s.median : 0.0;
    s.wide_spread = s.p99_over_median > DFG_BENCH_SPREAD_WARNING;
    *out = s;
    return DFG_OK;
}

const char *dfg_latency_spread_warning(const dfg_latency_stats *stats,
                                       char *buf, size_t size)
{
    if (!stats || !stats->wide_spread || !buf || size == 0)
        return NULL;
    /* Two decimals without %f: hundredths as an integer. */
    long long hundredths = llround(stats->p99_over_median * 100.0);
    /* "1.5": DFG_BENCH_SPREAD_WARNING, which the text must follow. */
    snprintf(buf, size, "warning: p99 is %lld.%02lld x the median (more "
             "than 1.5): the runs were not alike (other load, frequency "
             "scaling) and the mean says little", hundredths / 100,
             hundredths % 100);
    return buf;
}

/* seconds as milliseconds with 4 decimals (0.1 microsecond). */
static void json_ms(dfg_json_writer *w, const char *key, double seconds)
{
    uint64_t ns = seconds > 0 ? (uint64_t)llround(seconds * 1e9) : 0;
    dfg_json_ratio(w, key, ns, 1000000);
}

/* A rate or ratio >= 0 with 4 decimals: ten-thousandths over 10000. */
static void json_rate(dfg_json_writer *w, const char *key, double value)
{
    uint64_t scaled = value > 0 ? (uint64_t)llround(value * 1e4) : 0;
    dfg_json_ratio(w, key, scaled, 10000);
}

dfg_status dfg_bench_report_json(const dfg_bench_report *r, FILE *out)
{
    if (!r || !out)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_bench_report_json: report and stream are "
                         "required");
    const dfg_latency_stats *l = &r->latency;
    char warning[256];
    dfg_json_writer w;
    dfg_json_init(&w, out);
    dfg_json_begin_object(&w, NULL, 0);
    dfg_json_string(&w, "model", r->model);
    dfg_json_string(&w, "backend", r->backend);
    dfg_json_string(&w, "device", r->device);
    dfg_json_int(&w, "threads", r->threads);
    dfg_json_uint(&w, "iterations", r->iterations);
    dfg_json_uint(&w, "warmup", r->warmup);
    dfg_json_int(&w, "batch", r->batch);
    json_ms(&w, "compile_ms", r->compile_seconds);
    json_ms(&w, "session_ms", r->session_seconds);
    json_ms(&w, "mean_ms", l->mean);
    json_ms(&w, "median_ms", l->median);
    json_ms(&w, "p90_ms", l->p90);
    json_ms(&w, "p95_ms", l->p95);
    json_ms(&w, "p99_ms", l->p99);
    json_ms(&w, "min_ms", l->min);
    json_ms(&w, "max_ms", l->max);
    json_rate(&w, "runs_per_second", l->runs_per_second);
    json_rate(&w, "samples_per_second", l->samples_per_second);
    json_rate(&w, "p99_over_median", l->p99_over_median);
    dfg_json_string(&w, "warning",
                    dfg_latency_spread_warning(l, warning, sizeof warning));
    dfg_json_uint(&w, "arena_bytes", r->arena_bytes);
    dfg_json_uint(&w, "weights_bytes", r->weights_bytes);
    dfg_json_uint(&w, "peak_rss_bytes", r->peak_rss_bytes);
    dfg_json_uint(&w, "rss_at_start_bytes", r->rss_at_start_bytes);
    dfg_json_uint(&w, "predicted_peak_rss_bytes", r->predicted_peak_rss_bytes);
    dfg_json_end_object(&w);
    fputc('\n', out);
    if (fflush(out) != 0 || ferror(out))
        return dfg_error(DFG_ERR_IO, "dfg_bench_report_json: write failed");
    return DFG_OK;
}
