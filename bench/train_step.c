/* bench-train-step MODEL [OPTIMIZER] [ITERATIONS] [WARMUP]: one training
 * step (forward, backward, optimizer update) of a bundled classifier,
 * batch 32, on the CPU backend. Prints one JSON line: the median and the
 * fastest step time (the one a busy machine distorts least), the planned arena and weights-region bytes, and the growth of the
 * peak resident set over the steps (measured the same way as
 * bench/train_vs_torch.py measures PyTorch). Threads: OMP_NUM_THREADS. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "dfg/dfg.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = 0;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kib = atol(line + 6);
    if (f)
        fclose(f);
    return kib;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const char *model = argc > 1 ? argv[1] : "mlp";
    dfg_training_options t;
    dfg_training_options_init(&t);
    t.loss = "loss";
    t.learning_rate = 0.003f;
    if (argc > 2 && dfg_optimizer_from_name(argv[2], &t.optimizer) != 0)
        return fprintf(stderr, "unknown optimizer %s\n", argv[2]), 2;
    int iterations = argc > 3 ? atoi(argv[3]) : 200;
    int warmup = argc > 4 ? atoi(argv[4]) : 20;
    if (iterations < 1 || iterations > 100000 || warmup < 0)
        return fprintf(stderr, "bad iteration counts\n"), 2;
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    o.training = &t;
    dfg_graph *g;
    dfg_program *p;
    dfg_session *s;
    const dfg_backend *cpu;
    if (dfg_model_build_training(model, NULL, &g) != DFG_OK ||
        dfg_compile(g, &o, &p) != DFG_OK || dfg_backend_find("cpu", &cpu) != DFG_OK)
        return fprintf(stderr, "%s\n", dfg_last_error()), 1;
    long rss_before = rss_kib();
    if (dfg_session_create(p, cpu, NULL, &s) != DFG_OK)
        return fprintf(stderr, "%s\n", dfg_last_error()), 1;
    static float x[32 * 64];
    static int64_t labels[32];
    for (int i = 0; i < 32 * 64; i++)
        x[i] = (float)((i * 37) % 17) / 16.0f;
    for (int i = 0; i < 32; i++)
        labels[i] = i % 10;
    /* Copied in at every run: the plan reuses an input's bytes once its
     * last reader has run. */
    const void *inputs[2] = {x, labels};
    double *times = malloc((size_t)iterations * sizeof *times);
    for (int i = 0; i < warmup + iterations; i++) {
        double start = now_ms();
        if (dfg_session_run(s, inputs, NULL) != DFG_OK)
            return fprintf(stderr, "%s\n", dfg_last_error()), 1;
        if (i >= warmup)
            times[i - warmup] = now_ms() - start;
    }
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    qsort(times, (size_t)iterations, sizeof *times, compare_doubles);
    dfg_plan_stats stats;
    dfg_program_stats(p, &stats);
    printf("{\"step_ms\": %.4f, \"min_step_ms\": %.4f, \"arena_bytes\": %llu, "
           "\"weights_bytes\": %llu, \"rss_growth_bytes\": %ld}\n",
           times[iterations / 2], times[0],
           (unsigned long long)stats.arena_bytes,
           (unsigned long long)stats.weights_bytes,
           (usage.ru_maxrss - rss_before) * 1024);
    free(times);
    dfg_session_destroy(s);
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
    return 0;
}
