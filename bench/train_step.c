/* bench-train-step [--device NAME] [--profile] MODEL [OPTIMIZER]
 * [ITERATIONS] [WARMUP] [BUDGET]: one training step (forward, backward, optimizer update) of a
 * bundled classifier (batch 32) or of a classifier in an ONNX file
 * (MODEL.onnx, its own batch, cross-entropy over its classes), on the CPU
 * backend or NAME's (cuda: compiled for its target, as dfgc compile
 * --device does). Prints one JSON line: the median and the
 * fastest step time (the one a busy machine distorts least), the planned arena and weights-region bytes, and the growth of the
 * peak resident set over the steps and that peak itself, the whole
 * process's (measured the same way as bench/train_vs_torch.py measures
 * PyTorch). BUDGET: a memory budget,
 * BYTES or N% (docs/training.md). Threads: OMP_NUM_THREADS.
 * --profile: then ITERATIONS runs with each step timed alone, and on
 * stderr each op's mean time per step and how many of its steps a
 * library ran (dfg_session_step_library), then every step slower than
 * 1% of the step with what ran it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static dfg_status load_training_graph(const char *model, dfg_graph **g)
{
    size_t n = strlen(model);
    if (n < 5 || strcmp(model + n - 5, ".onnx") != 0)
        return dfg_model_build_training(model, NULL, g);
    dfg_onnx_options options; /* training: every initializer its own */
    dfg_onnx_options_init(&options);
    options.keep_transposed_copies = 1;
    dfg_status st = dfg_onnx_import_file(model, &options, NULL, g);
    if (st == DFG_OK)
        st = dfg_graph_add_loss(*g, DFG_LOSS_CROSS_ENTROPY, NULL);
    return st;
}

/* The inputs x (f32, a fixed pattern in [0, 1]) and labels (i64, row % 10;
 * every classifier here has 10 classes or more). */
static void *input_data(const dfg_tensor_info *info)
{
    int64_t n = 1;
    for (int32_t d = 0; d < info->rank; d++)
        n *= info->shape[d];
    void *data = malloc((size_t)n * 8 + 1);
    for (int64_t i = 0; data && i < n; i++) {
        if (info->dtype == DFG_F32)
            ((float *)data)[i] = (float)((i * 37) % 17) / 16.0f;
        else
            ((int64_t *)data)[i] = i % 10;
    }
    return data;
}

/* An op's share of a profiled step. */
typedef struct op_time {
    const char *op;
    double ms;
    int steps, library_steps;
} op_time;

static int by_ms_desc(const void *a, const void *b)
{
    double x = ((const op_time *)a)->ms, y = ((const op_time *)b)->ms;
    return (x < y) - (x > y);
}

/* Times each step alone over `runs` runs and prints the profile. */
static int profile(dfg_session *s, const dfg_program *p, void *const *inputs,
                   int runs)
{
    dfg_plan_stats stats;
    dfg_program_stats(p, &stats);
    int32_t n = stats.n_steps;
    double *one = calloc((size_t)n + 1, sizeof *one);
    double *mean = calloc((size_t)n + 1, sizeof *mean);
    op_time *ops = calloc((size_t)n + 1, sizeof *ops);
    int status = one && mean && ops ? 0 : 1;
    for (int r = 0; r < runs && status == 0; r++) {
        status = dfg_session_run_profiled(s, (const void *const *)inputs,
                                          NULL, one) != DFG_OK;
        for (int32_t i = 0; i < n && status == 0; i++)
            mean[i] += one[i] * 1e3 / runs;
    }
    int n_ops = 0;
    double all = 0.0;
    for (int32_t i = 0; i < n && status == 0; i++) {
        dfg_step_info info;
        const char *library = NULL;
        dfg_program_step_info(p, i, &info);
        dfg_session_step_library(s, i, &library);
        int k = 0;
        while (k < n_ops && strcmp(ops[k].op, info.op) != 0)
            k++;
        if (k == n_ops)
            ops[n_ops++] = (op_time){.op = info.op};
        ops[k].ms += mean[i];
        ops[k].steps++;
        ops[k].library_steps += library != NULL;
        all += mean[i];
    }
    if (status == 0) {
        qsort(ops, (size_t)n_ops, sizeof *ops, by_ms_desc);
        fprintf(stderr, "%-28s %9s %6s %6s %8s\n", "op", "ms/step", "share",
                "steps", "library");
        for (int k = 0; k < n_ops; k++)
            fprintf(stderr, "%-28s %9.3f %5.1f%% %6d %8d\n", ops[k].op,
                    ops[k].ms, 100.0 * ops[k].ms / all, ops[k].steps,
                    ops[k].library_steps);
        fprintf(stderr, "\n%5s %9s  %-28s %-26s %s\n", "step", "ms",
                "op", "runs on", "name");
        for (int32_t i = 0; i < n; i++) {
            dfg_step_info info;
            const char *library = NULL;
            dfg_program_step_info(p, i, &info);
            dfg_session_step_library(s, i, &library);
            if (mean[i] >= all / 100)
                fprintf(stderr, "%5d %9.3f  %-28s %-26s %s\n", (int)i,
                        mean[i], info.op, library ? library : "dfg",
                        info.name);
        }
    } else {
        fprintf(stderr, "profile: %s\n", dfg_last_error());
    }
    free(one);
    free(mean);
    free(ops);
    return status;
}

int main(int argc, char **argv)
{
    const char *device = "cpu";
    int profiled = 0;
    for (int more = 1; more;) {
        more = 0;
        if (argc > 2 && strcmp(argv[1], "--device") == 0) {
            device = argv[2];
            argv += 2;
            argc -= 2;
            more = 1;
        }
        if (argc > 1 && strcmp(argv[1], "--profile") == 0) {
            profiled = 1;
            argv++;
            argc--;
            more = 1;
        }
    }
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
    if (argc > 5) {
        char *end;
        double budget = strtod(argv[5], &end);
        if (*end == '%')
            t.memory_budget_percent = (float)budget;
        else
            t.memory_budget_bytes = (uint64_t)budget;
    }
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    o.training = &t;
    dfg_graph *g;
    dfg_program *p;
    dfg_session *s;
    const dfg_backend *backend;
    if (dfg_backend_find(device, &backend) != DFG_OK ||
        dfg_compile_options_for(&o, dfg_backend_target(backend)) != DFG_OK ||
        load_training_graph(model, &g) != DFG_OK ||
        dfg_compile(g, &o, &p) != DFG_OK)
        return fprintf(stderr, "%s\n", dfg_last_error()), 1;
    /* As dfgc train does: the program holds what the steps need. */
    dfg_graph_destroy(g);
    /* The growth is measured from here: the high-water mark is reset
     * (clear_refs 5) so the compile's own peak is not counted. */
    FILE *clear = fopen("/proc/self/clear_refs", "w");
    if (clear) {
        fputs("5", clear);
        fclose(clear);
    }
    long rss_before = rss_kib();
    if (dfg_session_create(p, backend, NULL, &s) != DFG_OK)
        return fprintf(stderr, "%s\n", dfg_last_error()), 1;
    /* Copied in at every run: the plan reuses an input's bytes once its
     * last reader has run. */
    void *inputs[2] = {NULL, NULL};
    for (int32_t i = 0; i < 2; i++) {
        dfg_tensor_info info;
        if (dfg_program_input_info(p, i, &info) != DFG_OK)
            return fprintf(stderr, "%s\n", dfg_last_error()), 1;
        inputs[i] = input_data(&info);
    }
    double *times = malloc((size_t)iterations * sizeof *times);
    for (int i = 0; i < warmup + iterations; i++) {
        double start = now_ms();
        if (dfg_session_run(s, (const void *const *)inputs, NULL) != DFG_OK)
            return fprintf(stderr, "%s\n", dfg_last_error()), 1;
        if (i >= warmup)
            times[i - warmup] = now_ms() - start;
    }
    qsort(times, (size_t)iterations, sizeof *times, compare_doubles);
    dfg_plan_stats stats;
    dfg_program_stats(p, &stats);
    printf("{\"step_ms\": %.4f, \"min_step_ms\": %.4f, \"arena_bytes\": %llu, "
           "\"weights_bytes\": %llu, \"rss_growth_bytes\": %ld, "
           "\"peak_rss_bytes\": %llu}\n",
           times[iterations / 2], times[0],
           (unsigned long long)stats.arena_bytes,
           (unsigned long long)stats.weights_bytes,
           (long)dfg_process_peak_resident_bytes() - rss_before * 1024,
           (unsigned long long)dfg_process_peak_resident_bytes());
    free(times);
    if (profiled && profile(s, p, inputs, iterations) != 0)
        return 1;
    free(inputs[0]);
    free(inputs[1]);
    dfg_session_destroy(s);
    dfg_program_destroy(p);
    return 0;
}
