/* bench-planner: how long the memory planners take and how close they come
 * to the lower bound, on random graphs and chains of 1k, 10k and 100k
 * tensors. Prints a markdown table; "growth" is the time over the time for
 * a tenth of the tensors (10 means n log n-ish scaling, 100 quadratic).
 * Times are the planning thread's CPU time, which other processes on a
 * shared machine disturb less than wall-clock time (planners are
 * single-threaded, so the two agree on an idle machine).
 *
 * Usage: bench-planner [repeats]   (default 9; the median is reported) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dfg/status.h"
#include "passes/memory_plan.h"
#include "tests/ir/random_lifetimes.h"

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Graphs like networks: each op reads its predecessor and up to two
 * tensors of the last 32 (skip connections), and four graph inputs stay
 * alive throughout, read now and then. */
static void make_lifetimes(const char *kind, uint64_t seed, dfg_buffer *b,
                           int32_t n)
{
    uint64_t rng = seed;
    if (strcmp(kind, "chain") == 0) {
        dfg_chain_lifetimes(b, n);
    } else {
        dfg_random_dag_shape shape = {
            .window = 32, .max_extra_inputs = 2, .previous_percent = 100,
            .n_graph_inputs = 4, .input_read_per_mille = 10,
        };
        dfg_random_dag_lifetimes(&rng, &shape, b, n);
    }
    /* Sizes from 1 KiB to 4 MiB, log-uniform as activations are. */
    for (int32_t i = 0; i < n; i++)
        b[i].size = ((int64_t)1 << (10 + dfg_random_below(&rng, 12))) +
                    dfg_random_below(&rng, 1024);
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? atoi(argv[1]) : 9;
    if (repeats < 1 || repeats > 101) {
        fprintf(stderr, "usage: %s [repeats, 1..101]\n", argv[0]);
        return 2;
    }
    const char *kinds[] = {"dag", "chain"};
    const int32_t sizes[] = {1000, 10000, 100000};
    const dfg_planner planners[] = {
        DFG_PLANNER_NO_REUSE, DFG_PLANNER_GREEDY_SIZE, DFG_PLANNER_GREEDY_BREADTH,
        DFG_PLANNER_HILL_CLIMB, DFG_PLANNER_SMALLEST,
    };
    enum { N_PLANNERS = sizeof planners / sizeof planners[0] };
    const int64_t alignment = 256;
    double *times = malloc((size_t)repeats * sizeof *times);
    dfg_buffer *lifetimes = calloc(100000, sizeof *lifetimes);
    dfg_buffer *b = malloc(100000 * sizeof *b);
    if (!times || !lifetimes || !b)
        return 1;
    printf("| kind | n | planner | plan CPU time (ms) | arena / lower bound | "
           "growth per 10x | verify (ms) |\n"
           "|---|---:|---|---:|---:|---:|---:|\n");
    for (int k = 0; k < 2; k++) {
        double previous[N_PLANNERS] = {0};
        for (int s = 0; s < 3; s++) {
            int32_t n = sizes[s];
            make_lifetimes(kinds[k], 0x5eed + (uint64_t)n, lifetimes, n);
            int64_t bound = dfg_plan_lower_bound(lifetimes, n, alignment, NULL);
            for (int p = 0; p < N_PLANNERS; p++) {
                int64_t arena = 0;
                double verify_ms = 0;
                for (int r = 0; r < repeats; r++) {
                    memcpy(b, lifetimes, (size_t)n * sizeof *b);
                    double start = cpu_ms();
                    dfg_status status = dfg_plan_buffers(planners[p], b, n,
                                                         alignment, NULL, &arena);
                    times[r] = cpu_ms() - start;
                    start = cpu_ms();
                    if (status == DFG_OK)
                        status = dfg_plan_verify_buffers(b, n, alignment, arena, NULL);
                    verify_ms = cpu_ms() - start;
                    if (status != DFG_OK) {
                        fprintf(stderr, "%s: %s\n", dfg_planner_name(planners[p]), dfg_last_error());
                        return 1;
                    }
                }
                qsort(times, (size_t)repeats, sizeof *times, compare_doubles);
                double median = times[repeats / 2];
                printf("| %s | %d | %s | %.2f | %.3f | ", kinds[k], n, dfg_planner_name(planners[p]),
                       median, (double)arena / (double)bound);
                if (previous[p] > 0)
                    printf("%.1fx | %.2f |\n", median / previous[p], verify_ms);
                else
                    printf("- | %.2f |\n", verify_ms);
                previous[p] = median;
            }
        }
    }
    free(times);
    free(lifetimes);
    free(b);
    return 0;
}
