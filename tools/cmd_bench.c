/* dfgc bench MODEL: the latency of dfg_session_run over many iterations
 * (include/dfg/bench.h's figures), what it ran on, and the process's peak
 * resident memory; --json writes every figure (docs/bench-json.md). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "tools/bench_profile.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "tools/compile_options.h"
#include "tools/input_files.h"
#include "tools/run_setup.h"
#include "tools/tensor_data.h"

static const char usage[] =
    "usage: dfgc bench MODEL [--iterations N] [--warmup N] [--seed N]\n"
    "                  [--input NAME=FILE]... [--json FILE]\n"
    "                  [--device cpu|cuda] [--planner NAME] [--align N]\n"
    "                  [--profile] [--trace FILE.json]\n"
    "\n"
    "Runs MODEL --warmup times untimed, then --iterations times timed, and\n"
    "prints the latency of one run (inputs copied in included; on a device\n"
    "outputs copied out too, on the cpu read in place from the arena,\n"
    "dfg_session_output_buffer): mean, median, p90, p95, p99, min and max, with a\n"
    "warning when p99 exceeds 1.5 times the median; the throughput (runs/s,\n"
    "and samples/s with the first input's first dimension as the batch);\n"
    "the time compiling (or loading) MODEL and creating the session; the\n"
    "threads a run uses and the CPU (model and ISA) or device; and the\n"
    "peak resident memory of the process (VmHWM), split into the\n"
    "weights, the arena (in host memory on the cpu device), what the\n"
    "process held before reading MODEL (code, libraries) and the rest\n"
    "(compiling, buffers, thread stacks, allocator slack), beside the\n"
    "peak predicted when the session was made, before the first run\n"
    "(dfg_session_memory_predict, docs/memory-prediction.md).\n"
    "\n"
    "MODEL             a program FILE.dfgp, or example:NAME (compiled first)\n"
    "--iterations N    timed runs (100)\n"
    "--warmup N        untimed runs first (10)\n"
    "--seed N          seed of the random inputs (1)\n"
    "--input NAME=FILE input NAME from FILE (raw little-endian values of\n"
    "                  its dtype, exactly its size), as for 'dfgc run';\n"
    "                  inputs not given are random\n"
    "--json FILE       also writes every figure printed to FILE as JSON\n"
    "--device NAME     cpu (default) or cuda ('dfgc devices'); also\n"
    "                  --backend NAME\n"
    "--planner, --align, --no-onednn, --no-fuse, --no-layouts,\n"
    "--no-share-weights, --no-tiling, --prefer,\n"
    "--max-arena-bytes, --max-weight-bytes as for 'dfgc compile', when\n"
    "                  MODEL is compiled\n"
    "--profile         then times each step alone over --iterations runs\n"
    "                  and prints the time per op type and the slowest steps\n"
    "--trace FILE      writes those step times as a Perfetto trace (Chrome\n"
    "                  trace-event JSON, https://ui.perfetto.dev), each\n"
    "                  step's args naming what ran it (runs_on)\n";

typedef struct bench_args {
    const char *model, *backend, *trace, *json;
    uint64_t iterations, warmup, seed;
    int profile;
    dfg_compile_options options;
    dfgc_file_arg inputs[DFGC_MAX_FILE_ARGS];
    int n_inputs;
} bench_args;

/* --input NAME=FILE, kept for after the session exists. */
static int add_input(bench_args *a, const char *value)
{
    if (a->n_inputs == DFGC_MAX_FILE_ARGS)
        return dfgc_usage_error("bench", "more than %d --input files",
                                DFGC_MAX_FILE_ARGS);
    int status = dfgc_parse_file_arg("bench", "--input", value,
                                     &a->inputs[a->n_inputs]);
    a->n_inputs += status == 0;
    return status;
}

/* Handles argv[*i] if it is one of bench's options: 1 if it was, 0 if
 * not, or -(exit status) on a usage error. */
static int parse_option(int argc, char **argv, int *i, void *ctx)
{
    bench_args *a = ctx;
    static const struct {
        const char *name;
        size_t field;
        uint64_t min;
    } numbers[] = {
        {"--iterations", offsetof(bench_args, iterations), 1},
        {"--warmup", offsetof(bench_args, warmup), 0},
        {"--seed", offsetof(bench_args, seed), 0},
    };
    const char *value = NULL;
    int found = dfgc_compile_option("bench", argc, argv, i, &a->options);
    for (size_t k = 0; found == 0 && k < sizeof numbers / sizeof numbers[0]; k++) {
        found = dfgc_option_value("bench", argc, argv, i, numbers[k].name, &value);
        if (found > 0) {
            uint64_t *field = (uint64_t *)((char *)a + numbers[k].field);
            uint64_t max = k < 2 ? 100000000 : UINT64_MAX;
            int status = dfgc_parse_u64("bench", numbers[k].name, value,
                                        numbers[k].min, max, field);
            if (status)
                return -status;
        }
    }
    if (found == 0 && strcmp(argv[*i], "--profile") == 0) {
        a->profile = 1;
        found = 1;
    }
    if (found == 0 &&
        (found = dfgc_option_value("bench", argc, argv, i, "--input", &value)) > 0) {
        int status = add_input(a, value);
        if (status)
            return -status;
    }
    if (found == 0)
        found = dfgc_option_value("bench", argc, argv, i, "--json", &a->json);
    if (found == 0)
        found = dfgc_option_value("bench", argc, argv, i, "--trace", &a->trace);
    if (found == 0)
        found = dfgc_option_value("bench", argc, argv, i, "--device", &a->backend);
    if (found == 0)
        found = dfgc_option_value("bench", argc, argv, i, "--backend", &a->backend);
    return found < 0 ? -DFGC_EXIT_USAGE : found;
}

/* Returns -1 when the arguments are fine, else the exit status. */
static int parse_args(int argc, char **argv, bench_args *a)
{
    memset(a, 0, sizeof *a);
    a->backend = "cpu";
    a->iterations = 100;
    a->warmup = 10;
    a->seed = 1;
    dfg_compile_options_init(&a->options);
    int status = dfgc_parse_arguments("bench", usage, argc, argv, parse_option,
                                      a, &a->model);
    if (status >= 0)
        return status;
    if (!a->model)
        return dfgc_usage_error("bench", "no MODEL given");
    return -1;
}

static void print_rss_split(const dfg_bench_report *r)
{
    const double mib = 1024.0 * 1024.0;
    double peak = (double)r->peak_rss_bytes;
    double weights = (double)r->weights_bytes;
    double arena = r->host_memory ? (double)r->arena_bytes : 0.0;
    double at_start = (double)r->rss_at_start_bytes;
    printf("peak rss    %.1f MiB\n", peak / mib);
    if (r->predicted_peak_rss_bytes) {
        double predicted = (double)r->predicted_peak_rss_bytes;
        printf("predicted   %.1f MiB  before the first run (%+.1f%% of the "
               "measured)\n", predicted / mib,
               peak > 0 ? (predicted - peak) / peak * 100.0 : 0.0);
    }
    char split[512];
    if (r->predicted)
        printf("  predicted %s\n", dfg_memory_prediction_format(
                                        r->predicted, split, sizeof split));
    printf("  weights   %7.1f MiB  the program's, read in place by cpu "
           "sessions\n", weights / mib);
    printf("  arena     %7.1f MiB\n", arena / mib);
    printf("  at start  %7.1f MiB  code and libraries, before MODEL was "
           "read\n", at_start / mib);
    printf("  the rest  %7.1f MiB  compiling, buffers, thread stacks, "
           "allocator slack\n", (peak - weights - arena - at_start) / mib);
}

/* Runs the session n times; times[i] receives each run's seconds when
 * times is not NULL. */
static int run_many(dfgc_run_setup *s, int outputs_in_place, uint64_t n,
                    double *times)
{
    for (uint64_t i = 0; i < n; i++) {
        double start = dfgc_now_seconds();
        if (dfg_session_run(s->session, (const void *const *)s->inputs,
                            outputs_in_place ? NULL : s->outputs) != DFG_OK)
            return dfgc_library_error("run");
        if (times)
            times[i] = dfgc_now_seconds() - start;
    }
    return 0;
}

/* The batch: the first input's first dimension (1 for a scalar or no
 * input). */
static int64_t batch_of(const dfgc_run_setup *s)
{
    return s->n_inputs > 0 && s->input_info[0].rank > 0
               ? s->input_info[0].shape[0]
               : 1;
}

/* Everything but the latency, from the setup and the process. */
static dfg_bench_report describe(const bench_args *a, const dfgc_run_setup *s,
                                 double at_start,
                                 const dfg_memory_prediction *predicted)
{
    dfg_bench_report r = {0};
    r.model = a->model;
    r.backend = a->backend;
    const dfg_backend *backend = NULL;
    if (dfg_backend_find(a->backend, &backend) == DFG_OK) {
        r.device = dfg_backend_device(backend);
        r.threads = dfg_backend_threads(backend);
        r.host_memory = dfg_backend_host_memory(backend);
    }
    r.iterations = a->iterations;
    r.warmup = a->warmup;
    r.batch = batch_of(s);
    r.compile_seconds = s->program_seconds;
    r.session_seconds = s->session_seconds;
    dfg_plan_stats stats;
    dfg_program_stats(s->program, &stats);
    r.arena_bytes = stats.arena_bytes;
    r.weights_bytes = stats.weights_bytes;
    /* VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the
     * process that forked and exec'd dfgc (a Python harness holding
     * hundreds of MiB would be counted as dfgc's). */
    r.peak_rss_bytes = dfg_process_peak_resident_bytes();
    r.rss_at_start_bytes = (uint64_t)at_start;
    r.predicted_peak_rss_bytes = predicted->peak_bytes;
    r.predicted = predicted;
    return r;
}

static void print_report(const dfg_bench_report *r)
{
    const dfg_latency_stats *l = &r->latency;
    char warning[256];
    printf("model       %s\n", r->model);
    printf("backend     %s\n", r->backend);
    if (r->device)
        printf("device      %s\n", r->device);
    printf("threads     %d\n", r->threads);
    printf("iterations  %llu (after %llu warmup)\n",
           (unsigned long long)r->iterations, (unsigned long long)r->warmup);
    printf("compile     %.4f ms\n", r->compile_seconds * 1e3);
    printf("session     %.4f ms\n", r->session_seconds * 1e3);
    printf("mean        %.4f ms\n", l->mean * 1e3);
    printf("median      %.4f ms\n", l->median * 1e3);
    printf("p90         %.4f ms\n", l->p90 * 1e3);
    printf("p95         %.4f ms\n", l->p95 * 1e3);
    printf("p99         %.4f ms\n", l->p99 * 1e3);
    printf("min         %.4f ms\n", l->min * 1e3);
    printf("max         %.4f ms\n", l->max * 1e3);
    printf("throughput  %.2f runs/s, %.2f samples/s (batch %lld)\n",
           l->runs_per_second, l->samples_per_second, (long long)r->batch);
    printf("p99/median  %.2f\n", l->p99_over_median);
    if (dfg_latency_spread_warning(l, warning, sizeof warning))
        printf("%s\n", warning);
    printf("arena       %llu bytes\n", (unsigned long long)r->arena_bytes);
    printf("weights     %llu bytes\n", (unsigned long long)r->weights_bytes);
    print_rss_split(r);
}

/* The report as JSON into path, the old file replaced only by the whole
 * new one. */
static int write_json(const dfg_bench_report *r, const char *path)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    if (!out)
        return dfgc_error("out of memory for the JSON report");
    dfg_status st = dfg_bench_report_json(r, out);
    fclose(out);
    if (st == DFG_OK)
        st = dfg_write_file_atomically(path, text, size);
    free(text);
    return st == DFG_OK ? 0 : dfgc_library_error("--json");
}

int dfgc_bench(int argc, char **argv)
{
    bench_args *a = malloc(sizeof *a);
    if (!a)
        return dfgc_error("out of memory");
    int status = parse_args(argc, argv, a);
    double *times = status < 0 ? malloc((size_t)a->iterations * sizeof *times)
                               : NULL;
    if (status >= 0 || !times) {
        free(a);
        return status >= 0 ? status
                           : dfgc_error("out of memory for the timings");
    }
    double at_start = (double)dfg_process_resident_bytes();
    dfgc_run_setup s;
    status = dfgc_run_setup_create(a->model, &a->options, a->backend, a->seed,
                                   &s);
    if (status == 0)
        status = dfgc_read_input_files("bench", a->inputs, a->n_inputs, &s);
    dfg_memory_prediction predicted = {0};
    if (status == 0 &&
        dfg_session_memory_predict(s.session, 1, &predicted) != DFG_OK)
        status = dfgc_library_error("bench");
    /* Where the arena is host memory the outputs are read where it holds
     * them: the host buffers stay untouched (not resident). */
    int in_place = status == 0 &&
                   dfg_backend_host_memory(dfg_session_backend(s.session));
    for (int32_t i = 0; status == 0 && in_place && i < s.n_outputs; i++) {
        uint64_t bytes = dfgc_tensor_bytes(&s.output_info[i]);
        predicted.io_bytes -= bytes;
    }
    dfg_memory_prediction_total(&predicted);
    if (status == 0)
        status = run_many(&s, in_place, a->warmup, NULL);
    if (status == 0)
        status = run_many(&s, in_place, a->iterations, times);
    if (status == 0) {
        dfg_bench_report r = describe(a, &s, at_start, &predicted);
        if (dfg_latency_stats_compute(times, (size_t)a->iterations, r.batch,
                                      &r.latency) != DFG_OK)
            status = dfgc_library_error(NULL);
        if (status == 0)
            print_report(&r);
        if (status == 0 && a->json)
            status = write_json(&r, a->json);
        if (status == 0 && (a->profile || a->trace))
            status = dfgc_bench_profile(&s, a->iterations, a->profile,
                                        a->trace);
    }
    dfgc_run_setup_destroy(&s); /* safe on the zeroed struct of a failure */
    free(times);
    free(a);
    return status;
}
