/* bench-data-parallel MODEL [STEPS] [BUCKET_BYTES] [SHARD] [PROGRESS]:
 * data-parallel training (Adam) on the CPU backend under mpirun
 * (bench/data_parallel.sh runs the configurations and prints the table). MODEL is a bundled
 * classifier (cnn: batch 32 of 8x8 per rank) or FILE.onnx, a classifier
 * with one f32 input whose fixed batch is each rank's and 10 classes
 * (bench/export_resnet18.py). SHARD 1: --shard-optimizer (ZeRO-1).
 * PROGRESS 0: no MPI_Test between steps (the all-reduces then advance only
 * in the waits), 1 (default): libdfg_mpi's progress calls.
 * Rank 0 prints one line:
 *   ranks threads images_per_s wait_ms_per_step blocking_ms_per_step
 *   hidden_fraction buckets optimizer_state_bytes gather_ms_per_step
 * hidden_fraction = 1 - (time blocked in waits) / (time the same
 * all-reduces take blocking, with nothing to overlap them), per step.
 * Threads: OMP_NUM_THREADS. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dfg/mpi.h"
#include "program/kind_bytes.h"
#include "program/program.h"
#include "tests/support/training_options.h"

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

static dfg_status build(const char *model, dfg_graph **g)
{
    size_t n = strlen(model);
    if (n < 5 || strcmp(model + n - 5, ".onnx") != 0)
        return dfg_model_build_training(model, NULL, g);
    int64_t classes = 10;
    dfg_onnx_options options; /* training: every initializer its own */
    dfg_onnx_options_init(&options);
    options.keep_transposed_copies = 1;
    dfg_status st = dfg_onnx_import_file(model, &options, NULL, g);
    return st == DFG_OK ? dfg_graph_add_loss(*g, DFG_LOSS_CROSS_ENTROPY,
                                             &classes)
                        : st;
}

/* Session inputs: the first input's rows of a fixed pattern, labels i % 10. */
static void **make_inputs(const dfg_program *p, int64_t *rows)
{
    void **in = calloc((size_t)p->n_inputs + 1, sizeof *in);
    for (int32_t i = 0; in && i < p->n_inputs; i++) {
        const dfg_program_tensor *t = &p->tensors[p->inputs[i]];
        in[i] = calloc((size_t)t->bytes + 1, 1);
        if (!in[i])
            return NULL;
        int64_t count = t->type.dtype == DFG_F32 ? t->bytes / 4 : t->bytes / 8;
        for (int64_t k = 0; k < count; k++)
            if (t->type.dtype == DFG_F32)
                ((float *)in[i])[k] = (float)((k * 7919) % 101) / 101.0f;
            else
                ((int64_t *)in[i])[k] = k % 10;
        if (i == 0)
            *rows = t->type.shape[0];
    }
    return in;
}

int main(int argc, char **argv)
{
    const char *model = argc > 1 ? argv[1] : "cnn";
    int steps = argc > 2 ? atoi(argv[2]) : 200;
    long long bucket_bytes = argc > 3 ? atoll(argv[3]) : 0;
    int shard = argc > 4 ? atoi(argv[4]) : 0;
    dfg_data_parallel_options options;
    dfg_data_parallel_options_init(&options);
    options.progress_between_steps = argc > 5 ? atoi(argv[5]) : 1;
    MPI_Init(&argc, &argv);
    int ranks = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    dfg_graph *g = NULL;
    dfg_program *p = NULL;
    dfg_session *s = NULL;
    dfg_data_parallel *dp = NULL;
    const dfg_backend *cpu;
    dfg_training_options t;
    dfg_compile_options o;
    training_compile_options(&t, &o);
    t.optimizer = DFG_OPTIMIZER_ADAM;
    t.learning_rate = 0.001f;
    t.data_parallel = 1;
    t.bucket_bytes = bucket_bytes;
    t.shard_optimizer = shard ? ranks : 0;
    if (check(build(model, &g), "model") ||
        check(dfg_compile(g, &o, &p), "compile") ||
        check(dfg_backend_find("cpu", &cpu), "cpu") ||
        check(dfg_session_create(p, cpu, NULL, &s), "session") ||
        check(dfg_data_parallel_create(s, p, MPI_COMM_WORLD, &options, &dp),
              "attach"))
        return 1;
    int64_t rows = 0;
    void **in = make_inputs(p, &rows);
    void **out = calloc((size_t)p->n_outputs + 1, sizeof *out);
    for (int32_t i = 0; out && i < p->n_outputs; i++)
        out[i] = malloc((size_t)p->tensors[p->outputs[i]].bytes + 1);
    if (!in || !out)
        return 1;
    for (int i = 0; i < 5; i++) /* warm-up */
        if (check(dfg_session_run(s, (const void *const *)in, out), "run"))
            return 1;
    dfg_data_parallel_stats before, after;
    dfg_data_parallel_get_stats(dp, &before);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_s();
    for (int i = 0; i < steps; i++)
        if (check(dfg_session_run(s, (const void *const *)in, out), "run"))
            return 1;
    MPI_Barrier(MPI_COMM_WORLD);
    double seconds = now_s() - t0, blocking = 0.0;
    dfg_data_parallel_get_stats(dp, &after);
    if (check(dfg_data_parallel_time_blocking(dp, 20, &blocking), "timing"))
        return 1;
    double mine[2] = {after.wait_seconds - before.wait_seconds,
                      after.gather_seconds - before.gather_seconds}, most[2];
    MPI_Allreduce(mine, most, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double wait_per_step = most[0] / steps;
    if (dfg_data_parallel_rank(dp) == 0) {
        const char *threads = getenv("OMP_NUM_THREADS");
        char hidden[32] = "-"; /* one rank: nothing to hide */
        uint64_t kinds[DFG_TENSOR_KIND_COUNT];
        dfg_program_kind_bytes(p, kinds);
        if (ranks > 1 && blocking > 0.0)
            snprintf(hidden, sizeof hidden, "%.2f",
                     1.0 - wait_per_step / blocking);
        printf("%d %s %.1f %.3f %.3f %s %lld %lld %.3f\n", ranks,
               threads ? threads : "?",
               (double)ranks * (double)rows * steps / seconds,
               wait_per_step * 1e3, blocking * 1e3, hidden,
               (long long)((after.all_reduces - before.all_reduces) / steps),
               (long long)kinds[DFG_TENSOR_OPTIMIZER_STATE],
               most[1] / steps * 1e3);
    }
    for (int32_t i = 0; i < p->n_inputs; i++)
        free(in[i]);
    for (int32_t i = 0; i < p->n_outputs; i++)
        free(out[i]);
    free(in);
    free(out);
    dfg_data_parallel_destroy(dp);
    dfg_session_destroy(s);
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
    MPI_Finalize();
    return 0;
}
