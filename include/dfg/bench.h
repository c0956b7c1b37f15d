/* Benchmark figures, as `dfgc bench` prints them and writes them with
 * --json (docs/bench-json.md), and as Python's Program.bench returns
 * them: latency statistics over timed runs, throughput, and what the runs
 * ran on. One definition for every caller, so that the figures compare. */
#ifndef DFG_BENCH_H
#define DFG_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "dfg/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* p99 / median above this: the runs were not alike (other load on the
 * machine, frequency scaling, ...) and the mean says little. */
#define DFG_BENCH_SPREAD_WARNING 1.5

/* Latencies in seconds. Percentiles interpolate linearly between ranks
 * (as numpy.percentile does by default). */
typedef struct dfg_latency_stats {
    double mean, median, p90, p95, p99, min, max;
    double runs_per_second;    /* 1 / mean */
    double samples_per_second; /* batch / mean */
    double p99_over_median;    /* 0 when the median is 0 */
    int wide_spread;           /* p99_over_median > DFG_BENCH_SPREAD_WARNING */
} dfg_latency_stats;

/* The statistics of n >= 1 run times (seconds); sorts seconds in place.
 * batch: samples per run (the first input's first dimension). */
dfg_status dfg_latency_stats_compute(double *seconds, size_t n, int64_t batch,
                                     dfg_latency_stats *out);

/* The warning line for stats with a wide spread, NULL otherwise; written
 * into buf (size bytes). */
const char *dfg_latency_spread_warning(const dfg_latency_stats *stats,
                                       char *buf, size_t size);

/* Everything a benchmark reports. Strings are the caller's (device may be
 * NULL); byte counts of 0 are written as 0. */
typedef struct dfg_bench_report {
    const char *model, *backend, *device;
    int threads;          /* threads a run uses; 0 if unknown */
    int host_memory;      /* the arena is in the process's memory */
    uint64_t iterations, warmup;
    int64_t batch;
    double compile_seconds; /* making the program: compiling or loading */
    double session_seconds; /* creating the session */
    dfg_latency_stats latency;
    uint64_t arena_bytes, weights_bytes;
    uint64_t peak_rss_bytes, rss_at_start_bytes; /* 0 where not measured */
    uint64_t predicted_peak_rss_bytes; /* before the first run; 0: none */
    /* its split (include/dfg/memory_predict.h), the caller's; NULL: none */
    const struct dfg_memory_prediction *predicted;
} dfg_bench_report;

/* The report as one JSON object (docs/bench-json.md): times in
 * milliseconds with 4 decimals, "warning" null or its line. */
dfg_status dfg_bench_report_json(const dfg_bench_report *report, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
