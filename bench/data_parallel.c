/* bench-data-parallel MODEL [STEPS] [BUCKET_BYTES]: data-parallel training
 * of a bundled classifier (batch 32 per rank, Adam) on the CPU backend,
 * under mpirun (bench/data_parallel.sh runs the configurations and prints
 * the table). Rank 0 prints one line:
 *   ranks threads images_per_s wait_ms_per_step blocking_ms_per_step
 *   hidden_fraction buckets
 * hidden_fraction = 1 - (time blocked in waits) / (time the same
 * all-reduces take blocking, with nothing to overlap them), per step.
 * Threads: OMP_NUM_THREADS. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dfg/mpi.h"

#define BATCH 32
#define PIXELS 64

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int check(dfg_status st, const char *what)
{
    if (st != DFG_OK)
        fprintf(stderr, "bench-data-parallel: %s: %s\n", what, dfg_last_error());
    return st != DFG_OK;
}

int main(int argc, char **argv)
{
    const char *model = argc > 1 ? argv[1] : "cnn";
    int steps = argc > 2 ? atoi(argv[2]) : 200;
    long long bucket_bytes = argc > 3 ? atoll(argv[3]) : 0;
    MPI_Init(&argc, &argv);
    dfg_graph *g = NULL;
    dfg_program *p = NULL;
    dfg_session *s = NULL;
    dfg_data_parallel *dp = NULL;
    const dfg_backend *cpu;
    dfg_training_options t;
    dfg_training_options_init(&t);
    t.loss = "loss";
    t.optimizer = DFG_OPTIMIZER_ADAM;
    t.learning_rate = 0.001f;
    t.data_parallel = 1;
    t.bucket_bytes = bucket_bytes;
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    o.training = &t;
    if (check(dfg_model_build_training(model, NULL, &g), "model") ||
        check(dfg_compile(g, &o, &p), "compile") ||
        check(dfg_backend_find("cpu", &cpu), "cpu") ||
        check(dfg_session_create(p, cpu, NULL, &s), "session") ||
        check(dfg_data_parallel_create(s, p, MPI_COMM_WORLD, NULL, &dp),
              "attach"))
        return 1;
    float *pixels = malloc(BATCH * PIXELS * sizeof *pixels), loss, norms[256];
    int64_t *labels = malloc(BATCH * sizeof *labels);
    for (int i = 0; i < BATCH * PIXELS; i++)
        pixels[i] = (float)((i * 7919) % 101) / 101.0f;
    for (int i = 0; i < BATCH; i++)
        labels[i] = i % 10;
    const void *in[2] = {pixels, labels};
    void *out[2] = {&loss, norms};
    for (int i = 0; i < 10; i++) /* warm-up */
        if (check(dfg_session_run(s, in, out), "run"))
            return 1;
    dfg_data_parallel_stats before, after;
    dfg_data_parallel_get_stats(dp, &before);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_s();
    for (int i = 0; i < steps; i++)
        if (check(dfg_session_run(s, in, out), "run"))
            return 1;
    MPI_Barrier(MPI_COMM_WORLD);
    double seconds = now_s() - t0, blocking = 0.0;
    dfg_data_parallel_get_stats(dp, &after);
    if (check(dfg_data_parallel_time_blocking(dp, 50, &blocking), "timing"))
        return 1;
    int ranks = dfg_data_parallel_size(dp);
    double wait_max = after.wait_seconds - before.wait_seconds, wait;
    MPI_Allreduce(&wait_max, &wait, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double wait_per_step = wait / steps;
    if (dfg_data_parallel_rank(dp) == 0) {
        const char *threads = getenv("OMP_NUM_THREADS");
        char hidden[32] = "-"; /* one rank: nothing to hide */
        if (ranks > 1 && blocking > 0.0)
            snprintf(hidden, sizeof hidden, "%.2f",
                     1.0 - wait_per_step / blocking);
        printf("%d %s %.1f %.3f %.3f %s %lld\n", ranks,
               threads ? threads : "?", (double)ranks * BATCH * steps / seconds,
               wait_per_step * 1e3, blocking * 1e3, hidden,
               (long long)((after.all_reduces - before.all_reduces) / steps));
    }
    free(pixels);
    free(labels);
    dfg_data_parallel_destroy(dp);
    dfg_session_destroy(s);
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
    MPI_Finalize();
    return 0;
}
