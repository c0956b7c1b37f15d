/* dfgc bench MODEL: the median latency of dfg_session_run over many
 * iterations, and the process's peak resident memory. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "bench_profile.h"
#include "cli.h"
#include "commands.h"
#include "compile_options.h"
#include "run_setup.h"

static const char usage[] =
    "usage: dfgc bench MODEL [--iterations N] [--warmup N] [--seed N]\n"
    "                  [--device cpu|cuda] [--planner NAME] [--align N]\n"
    "                  [--profile] [--trace FILE.json]\n"
    "\n"
    "Runs MODEL --warmup times untimed, then --iterations times timed, on\n"
    "random inputs, and prints the median, minimum and maximum latency of\n"
    "one run (inputs copied in and outputs copied out included) and the\n"
    "peak resident memory of the process (getrusage), split into the\n"
    "weights, the arena (in host memory on the cpu device), what the\n"
    "process held before reading MODEL (code, libraries) and the rest\n"
    "(compiling, buffers, thread stacks, allocator slack).\n"
    "\n"
    "MODEL             a program FILE.dfgp, or example:NAME (compiled first)\n"
    "--iterations N    timed runs (100)\n"
    "--warmup N        untimed runs first (10)\n"
    "--seed N          seed of the random inputs (1)\n"
    "--device NAME     cpu (default) or cuda ('dfgc devices'); also\n"
    "                  --backend NAME\n"
    "--planner, --align, --no-onednn, --no-fuse, --no-layouts,\n"
    "--no-share-weights,\n"
    "--max-arena-bytes, --max-weight-bytes as for 'dfgc compile', when\n"
    "                  MODEL is compiled\n"
    "--profile         then times each step alone over --iterations runs\n"
    "                  and prints the time per op type and the slowest steps\n"
    "--trace FILE      writes those step times as a Perfetto trace (Chrome\n"
    "                  trace-event JSON, https://ui.perfetto.dev), each\n"
    "                  step's args naming what ran it (runs_on)\n";

typedef struct bench_args {
    const char *model, *backend, *trace;
    uint64_t iterations, warmup, seed;
    int profile;
    dfg_compile_options options;
} bench_args;

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

/* The process's resident bytes now (Linux's /proc/self/statm); 0 if
 * unknown. */
static double resident_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long size = 0, resident = 0;
    int got = f ? fscanf(f, "%llu %llu", &size, &resident) : 0;
    if (f)
        fclose(f);
    long page = sysconf(_SC_PAGESIZE);
    return got == 2 && page > 0 ? (double)resident * (double)page : 0.0;
}

static void print_rss_split(double peak, double weights, double arena,
                            double at_start)
{
    const double mib = 1024.0 * 1024.0;
    printf("peak rss    %.1f MiB\n", peak / mib);
    printf("  weights   %7.1f MiB  the program's, read in place by cpu "
           "sessions\n", weights / mib);
    printf("  arena     %7.1f MiB\n", arena / mib);
    printf("  at start  %7.1f MiB  code and libraries, before MODEL was "
           "read\n", at_start / mib);
    printf("  the rest  %7.1f MiB  compiling, buffers, thread stacks, "
           "allocator slack\n", (peak - weights - arena - at_start) / mib);
}

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Runs the session n times; times[i] receives each run's seconds when
 * times is not NULL. */
static int run_many(dfgc_run_setup *s, uint64_t n, double *times)
{
    for (uint64_t i = 0; i < n; i++) {
        double start = now_seconds();
        if (dfg_session_run(s->session, (const void *const *)s->inputs,
                            s->outputs) != DFG_OK)
            return dfgc_library_error("run");
        if (times)
            times[i] = now_seconds() - start;
    }
    return 0;
}

int dfgc_bench(int argc, char **argv)
{
    bench_args a;
    int status = parse_args(argc, argv, &a);
    if (status >= 0)
        return status;
    double *times = malloc((size_t)a.iterations * sizeof *times);
    if (!times)
        return dfgc_error("out of memory for %llu timings",
                          (unsigned long long)a.iterations);
    double at_start = resident_bytes();
    dfgc_run_setup s;
    status = dfgc_run_setup_create(a.model, &a.options, a.backend, a.seed, &s);
    if (status == 0)
        status = run_many(&s, a.warmup, NULL);
    if (status == 0)
        status = run_many(&s, a.iterations, times);
    if (status == 0) {
        qsort(times, (size_t)a.iterations, sizeof *times, compare_doubles);
        size_t n = (size_t)a.iterations;
        double median = n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
        struct rusage usage;
        getrusage(RUSAGE_SELF, &usage);
        dfg_plan_stats stats;
        dfg_program_stats(s.program, &stats);
        printf("model       %s\n", a.model);
        printf("backend     %s\n", a.backend);
        const dfg_backend *backend = NULL;
        const char *device = dfg_backend_find(a.backend, &backend) == DFG_OK
                                 ? dfg_backend_device(backend)
                                 : NULL;
        if (device)
            printf("device      %s\n", device);
        printf("iterations  %llu (after %llu warmup)\n",
               (unsigned long long)a.iterations, (unsigned long long)a.warmup);
        printf("median      %.4f ms\n", median * 1e3);
        printf("min         %.4f ms\n", times[0] * 1e3);
        printf("max         %.4f ms\n", times[n - 1] * 1e3);
        printf("arena       %llu bytes\n", (unsigned long long)stats.arena_bytes);
        printf("weights     %llu bytes\n", (unsigned long long)stats.weights_bytes);
        /* Linux reports ru_maxrss in KiB. A device's arena is not in
         * the process's memory. */
        int host_arena = strcmp(a.backend, "cpu") == 0;
        print_rss_split((double)usage.ru_maxrss * 1024.0,
                        (double)stats.weights_bytes,
                        host_arena ? (double)stats.arena_bytes : 0.0,
                        at_start);
        if (a.profile || a.trace)
            status = dfgc_bench_profile(&s, a.iterations, a.profile, a.trace);
    }
    dfgc_run_setup_destroy(&s); /* safe on the zeroed struct of a failure */
    free(times);
    return status;
}
