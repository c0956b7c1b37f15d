/* dfgc bench --profile and --trace (bench_profile.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/bench_profile.h"
#include "tools/cli.h"

#define SLOWEST_SHOWN 10

typedef struct op_total {
    const char *op;
    double seconds;
    int32_t steps;
    int32_t library_steps; /* run by a library (oneDNN), not dfg's kernels */
} op_total;

static int by_seconds_desc(const void *a, const void *b)
{
    double x = ((const op_total *)a)->seconds, y = ((const op_total *)b)->seconds;
    return (x < y) - (x > y);
}

/* Mean seconds per run of each step over `runs` profiled runs. */
static int time_steps(dfgc_run_setup *s, uint64_t runs, int32_t n_steps,
                      double *mean)
{
    double *one = calloc((size_t)n_steps + 1, sizeof *one);
    if (!one)
        return dfgc_error("out of memory for %d step times", (int)n_steps);
    memset(mean, 0, (size_t)n_steps * sizeof *mean);
    for (uint64_t r = 0; r < runs; r++) {
        if (dfg_session_run_profiled(s->session, (const void *const *)s->inputs,
                                     s->outputs, one) != DFG_OK) {
            free(one);
            return dfgc_library_error("profile");
        }
        for (int32_t i = 0; i < n_steps; i++)
            mean[i] += one[i] / (double)runs;
    }
    free(one);
    return 0;
}

/* What runs step i: a library's name, else "dfg" (its own kernels). */
static const char *step_runner(const dfg_session *session, int32_t i)
{
    const char *library = NULL;
    dfg_session_step_library(session, i, &library);
    return library ? library : "dfg";
}

static void print_profile(const dfg_session *session, const dfg_program *p,
                          int32_t n_steps, const double *mean,
                          op_total *totals, uint64_t runs)
{
    int32_t n_ops = 0, n_library = 0;
    double all = 0.0;
    for (int32_t i = 0; i < n_steps; i++) {
        dfg_step_info info;
        dfg_program_step_info(p, i, &info);
        int32_t k = 0;
        while (k < n_ops && strcmp(totals[k].op, info.op) != 0)
            k++;
        if (k == n_ops)
            totals[n_ops++] = (op_total){.op = info.op};
        const char *library = NULL;
        dfg_session_step_library(session, i, &library);
        totals[k].seconds += mean[i];
        totals[k].steps++;
        totals[k].library_steps += library != NULL;
        n_library += library != NULL;
        all += mean[i];
    }
    qsort(totals, (size_t)n_ops, sizeof *totals, by_seconds_desc);
    printf("\nprofile     %llu runs, each step timed alone: %.4f ms per run\n",
           (unsigned long long)runs, all * 1e3);
    printf("library steps (oneDNN, cuDNN, cuBLAS): %d of %d\n",
           (int)n_library, (int)n_steps);
    printf("%-24s %10s %7s %6s %7s\n", "op", "ms/run", "share", "steps",
           "library");
    for (int32_t k = 0; k < n_ops; k++)
        printf("%-24s %10.4f %6.1f%% %6d %7d\n", totals[k].op,
               totals[k].seconds * 1e3,
               all > 0 ? 100.0 * totals[k].seconds / all : 0.0,
               (int)totals[k].steps, (int)totals[k].library_steps);
    /* The slowest steps: SLOWEST_SHOWN passes of a max search, since
     * the step order must stay as it is for the trace. */
    printf("\nslowest steps\n%6s %10s  %-16s %-22s %s\n", "step", "ms/run",
           "op", "runs on", "name");
    double bound = 1e300;
    int32_t last = -1;
    for (int shown = 0; shown < SLOWEST_SHOWN && shown < n_steps; shown++) {
        int32_t best = -1;
        for (int32_t i = 0; i < n_steps; i++) {
            int below = mean[i] < bound || (mean[i] == bound && i > last);
            if (below && (best < 0 || mean[i] > mean[best]))
                best = i;
        }
        if (best < 0)
            break;
        dfg_step_info info;
        dfg_program_step_info(p, best, &info);
        printf("%6d %10.4f  %-16s %-22s %s\n", (int)best, mean[best] * 1e3,
               info.op, step_runner(session, best), info.name);
        bound = mean[best];
        last = best;
    }
}

/* The steps' mean times as a Perfetto trace, each naming what ran it. */
static int write_trace(const dfg_session *session, const dfg_program *p,
                       int32_t n_steps, const double *mean, const char *path)
{
    const char **runs_on = calloc((size_t)n_steps + 1, sizeof *runs_on);
    if (!runs_on)
        return dfgc_error("out of memory for %d steps", (int)n_steps);
    for (int32_t i = 0; i < n_steps; i++)
        runs_on[i] = step_runner(session, i);
    dfgc_output output;
    int status = dfgc_open_output(path, &output) ? DFGC_EXIT_ERROR : 0;
    if (status == 0) {
        int written = dfg_report_step_trace(p, mean, runs_on,
                                            output.stream) == DFG_OK;
        status = written ? 0 : dfgc_library_error("--trace");
        int closed = dfgc_close_output(&output, written);
        status = status ? status : closed;
    }
    free(runs_on);
    return status;
}

int dfgc_bench_profile(dfgc_run_setup *s, uint64_t runs, int print,
                       const char *trace_path)
{
    dfg_plan_stats stats;
    dfg_program_stats(s->program, &stats);
    int32_t n = stats.n_steps;
    double *mean = calloc((size_t)n + 1, sizeof *mean);
    op_total *totals = calloc((size_t)n + 1, sizeof *totals);
    int status = mean && totals ? 0
                                : dfgc_error("out of memory for %d steps", (int)n);
    if (status == 0)
        status = time_steps(s, runs, n, mean);
    if (status == 0 && print)
        print_profile(s->session, s->program, n, mean, totals, runs);
    if (status == 0 && trace_path)
        status = write_trace(s->session, s->program, n, mean, trace_path);
    free(totals);
    free(mean);
    return status;
}
