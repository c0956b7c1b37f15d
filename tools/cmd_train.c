/* dfgc train MODEL: trains a bundled classifier on the digits data set
 * (data/digits, over MPI ranks with --data-parallel) and reports its
 * accuracy on the held-back examples, or,
 * with --synthetic (implied for an ONNX file), any classifier on one
 * fixed random batch (synthetic_training.h). */
#include <stdlib.h>
#include <string.h>
#include "tools/cli.h"
#include "tools/commands.h"
#include "tools/training/data_training.h"
#include "tools/training/digits_training.h"
#include "tools/model_source.h"
#include "tools/training/synthetic_training.h"
#ifdef DFGC_HAVE_MPI
#include "tools/training/data_parallel_cli.h"
#endif

static const char usage[] =
    "usage: dfgc train MODEL [--epochs N] [--batch N] [--optimizer NAME]\n"
    "                  [--lr X] [--accumulate K] [--json FILE] [--seed N]\n"
    "                  [--checkpoint FILE [--stop-after E]] [--resume FILE]\n"
    "       dfgc train MODEL --synthetic [--classes N] [--loss NAME]\n"
    "                  [--steps S] [--seed K] [--optimizer NAME] [--lr X]\n"
    "                  [--shapes SPEC] [--save FILE.onnx]\n"
    "                  [--checkpoint FILE] [--resume FILE]\n"
    "       dfgc train MODEL --data TRAIN.npz [--val VAL.npz] [--epochs N]\n"
    "                  [--batch N] [--seed N] [--loss NAME] [--optimizer NAME]\n"
    "                  [--lr X] [--accumulate K] [--schedule NAME]\n"
    "                  [--step-size S] [--gamma G] [--warmup W] [--shapes SPEC]\n"
    "                  [--save FILE.onnx] [--checkpoint FILE] [--resume FILE]\n"
    "\n"
    "Trains MODEL (example:mlp or example:cnn) on the UCI 8x8 digits: the\n"
    "first 1437 examples for training, the last 360 for the test accuracy,\n"
    "printed last as test_accuracy=0.973. Each step is one compiled program\n"
    "(forward, backward and optimizer in one memory plan, docs/training.md).\n"
    "With --synthetic (the default for FILE.onnx), trains any classifier on\n"
    "one fixed batch of random inputs and labels from --seed, printing each\n"
    "step's loss and time, then the arena, the weights region (with the\n"
    "optimizer state) and the peak resident set. A step whose loss or\n"
    "update is NaN or infinite ends the run with status 1, naming the step\n"
    "(the last finite weights are kept: a checkpoint is of the last finite\n"
    "step, and nothing is saved).\n"
    "With --data, trains on the arrays x (the model's input, float32, batch\n"
    "first) and y (int64 class indices for cross entropy, float32 targets\n"
    "for --loss mse) of a .npz (numpy.savez or savez_compressed), in a\n"
    "shuffled order each epoch, dropping the last partial batch; prints\n"
    "'epoch E: loss L' (the mean over its batches) and, with --val,\n"
    "'val_loss=V val_accuracy=A' after every epoch (docs/training.md).\n"
    "\n"
    "--epochs N        passes over the training examples (mlp 20, cnn 10;\n"
    "                  --data 10)\n"
    "--batch N         micro-batch size; the bundled models are built for 32,\n"
    "                  an ONNX model for its input's (see --shapes)\n"
    "--data FILE.npz   the training set: arrays x and y\n"
    "--val FILE.npz    a validation set like it, evaluated after each epoch\n"
    "--schedule NAME   with --data: constant (default), cosine (--lr\n"
    "                  decayed to 0 over the run) or step (--lr times\n"
    "                  --gamma every --step-size optimizer steps)\n"
    "--step-size S     --schedule step: optimizer steps between decays\n"
    "--gamma G         --schedule step: the factor, in (0, 1] (0.1)\n"
    "--warmup W        with --data: the learning rate rises linearly over\n"
    "                  the first W optimizer steps (step t at t/W of it),\n"
    "                  the schedule starting after them (0)\n"
    DFGC_TRAINING_USAGE
    "                  (digits: decayed to 0 over the run by a cosine)\n"
    "--accumulate K    micro-batches per optimizer step (1)\n"
    "--json FILE       write the training program's plan JSON\n"
    "--seed N          shuffling seed, or the synthetic batch's (1); also\n"
    "                  the dropout masks' seed\n"
    "--steps S         synthetic training steps (50)\n"
    "--shapes SPEC     an ONNX model's symbolic dims (INPUT:32x3x32x32, B=32)\n"
    "--save FILE.onnx  after training, the ONNX MODEL with its trained\n"
    "                  initializers (and batch norms' running statistics)\n"
    "--checkpoint FILE after every epoch (synthetic: every step, an epoch\n"
    "                  of its one batch), the weights, optimizer state and\n"
    "                  position, replaced atomically (docs/training.md)\n"
    "--stop-after E    digits: stop after epoch E of --epochs, as if\n"
    "                  interrupted (the schedule spans --epochs)\n"
    "--resume FILE     go on from a checkpoint of the same model, options\n"
    "                  and --seed, up to --epochs (--steps) in all, bit for\n"
    "                  bit as the run that wrote it would have\n"
    "--data-parallel   under mpirun -np N: each rank trains on its B rows of\n"
    "                  every global batch of N*B, gradients averaged across\n"
    "                  the ranks (docs/data-parallel.md)\n"
    "--bucket-bytes N  gradient bucket size for --data-parallel (25 MiB)\n"
    "--shard-optimizer with --data-parallel: each rank keeps and updates the\n"
    "                  optimizer state of 1/N of every bucket (ZeRO-1)\n"
    "--startup-timeout S  with --data-parallel: seconds MPI's start-up may\n"
    "                  take, every rank joining a first barrier, before\n"
    "                  the run ends with an error (60)\n"
    "DFG_DATA_DIR      the folder holding digits/digits.csv.gz\n";

/* example:NAME or NAME. */
static const char *model_name(const char *model)
{
    return strncmp(model, "example:", 8) == 0 ? model + 8 : model;
}

typedef struct train_args {
    const char *json, *data, *val, *schedule, *gamma;
    uint64_t epochs, batch, accumulate, seed, steps, bucket_bytes;
    uint64_t startup_timeout, stop_after, step_size, warmup;
    int synthetic, data_parallel, shard_optimizer;
    dfgc_training_setup setup;
    dfgc_keep_paths keep;
} train_args;

static int parse_option(int argc, char **argv, int *i, void *ctx)
{
    train_args *a = ctx;
    if (strcmp(argv[*i], "--synthetic") == 0) {
        a->synthetic = 1;
        return 1;
    }
    if (strcmp(argv[*i], "--data-parallel") == 0) {
        a->data_parallel = 1;
        return 1;
    }
    if (strcmp(argv[*i], "--shard-optimizer") == 0) {
        a->shard_optimizer = 1;
        return 1;
    }
    static const char *const numbers[] = {"--epochs", "--batch", "--accumulate",
                                          "--seed", "--steps", "--bucket-bytes",
                                          "--startup-timeout", "--stop-after",
                                          "--step-size", "--warmup"};
    uint64_t *targets[] = {&a->epochs, &a->batch, &a->accumulate, &a->seed,
                           &a->steps, &a->bucket_bytes, &a->startup_timeout,
                           &a->stop_after, &a->step_size, &a->warmup};
    const uint64_t most[] = {1u << 20, 1u << 20, 1u << 20, UINT64_MAX,
                             1u << 20, (uint64_t)1 << 40, 86400, 1u << 20,
                             1u << 24, 1u << 24};
    int found = 0;
    for (int k = 0; k < 10 && found == 0; k++) {
        const char *text;
        found = dfgc_option_value("train", argc, argv, i, numbers[k], &text);
        if (found > 0 &&
            dfgc_parse_u64("train", numbers[k], text, k == 3 ? 0 : 1,
                           most[k], targets[k]) != 0)
            return -DFGC_EXIT_USAGE;
    }
    if (found == 0)
        found = dfgc_option_value("train", argc, argv, i, "--json", &a->json);
    if (found == 0)
        found = dfgc_option_value("train", argc, argv, i, "--data", &a->data);
    if (found == 0)
        found = dfgc_option_value("train", argc, argv, i, "--val", &a->val);
    if (found == 0)
        found = dfgc_option_value("train", argc, argv, i, "--schedule",
                                  &a->schedule);
    if (found == 0)
        found = dfgc_option_value("train", argc, argv, i, "--gamma",
                                  &a->gamma);
    if (found == 0)
        found = dfgc_option_value("train", argc, argv, i, "--save",
                                  &a->keep.save);
    if (found == 0)
        found = dfgc_option_value("train", argc, argv, i, "--checkpoint",
                                  &a->keep.checkpoint);
    if (found == 0)
        found = dfgc_option_value("train", argc, argv, i, "--resume",
                                  &a->keep.resume);
    if (found == 0)
        found = dfgc_training_option("train", argc, argv, i, &a->setup);
    if (found == 0)
        found = dfgc_shapes_option("train", argc, argv, i);
    return found < 0 ? -DFGC_EXIT_USAGE : found;
}

static int train_synthetic(const char *model, const train_args *a)
{
    dfgc_synthetic_config c = {model, a->setup, {0}, (int32_t)a->steps,
                               a->seed, stdout, a->keep};
    dfg_compile_options_init(&c.options);
    c.setup.training.accumulate = (int32_t)a->accumulate;
    c.setup.training.seed = a->seed;
    c.options.precision = a->setup.precision;
    dfgc_synthetic_result r;
    if (dfgc_train_synthetic(&c, &r) != DFG_OK)
        return dfgc_library_error(model);
    printf("training plan: arena %llu bytes, weights and optimizer state "
           "%llu bytes, %d steps, verified %s\n",
           (unsigned long long)r.plan.arena_bytes,
           (unsigned long long)r.plan.weights_bytes, (int)r.plan.n_steps,
           r.plan.verified ? "yes" : "no");
    printf("loss %.6f -> %.6f (%.1fx lower), peak RSS %ld KiB\n", r.first_loss,
           r.last_loss, r.last_loss > 0 ? r.first_loss / r.last_loss : 0.0,
           r.peak_rss_kib);
    char split[512];
    double measured = (double)r.peak_rss_kib * 1024.0;
    printf("predicted peak RSS %llu KiB before the first step (%+.1f%% of "
           "the measured): %s\n",
           (unsigned long long)(r.predicted.peak_bytes / 1024),
           measured > 0 ? ((double)r.predicted.peak_bytes - measured) /
                              measured * 100.0
                        : 0.0,
           dfg_memory_prediction_format(&r.predicted, split, sizeof split));
    return 0;
}

static int train_digits(const char *model, const train_args *a)
{
    int32_t epochs = a->epochs ? (int32_t)a->epochs : dfgc_default_epochs(model);
    dfgc_train_config c = {.model = model, .training = a->setup.training,
                           .epochs = epochs, .seed = a->seed, .log = stdout,
                           .json_path = a->json, .rank = 0, .ranks = 1,
                           .precision = a->setup.precision,
                           .keep = a->keep, .stop_after = (int32_t)a->stop_after};
    c.training.accumulate = (int32_t)a->accumulate;
    c.training.seed = a->seed;
    if (a->batch && a->batch != 32)
        return dfgc_usage_error("train", "--batch %llu: the bundled models are "
                                "built for batch 32", (unsigned long long)a->batch);
    if ((a->bucket_bytes || a->shard_optimizer || a->startup_timeout) &&
        !a->data_parallel)
        return dfgc_usage_error("train", "--bucket-bytes, --shard-optimizer "
                                "and --startup-timeout need --data-parallel");
    if (a->data_parallel && (a->keep.checkpoint || a->keep.resume))
        return dfgc_usage_error("train", "--checkpoint and --resume train "
                                "in one process, not with --data-parallel");
    c.training.data_parallel = a->data_parallel;
    c.training.bucket_bytes = (int64_t)a->bucket_bytes;
#ifdef DFGC_HAVE_MPI
    if (a->data_parallel &&
        dfgc_data_parallel_begin(&c, a->startup_timeout ? (double)a->startup_timeout
                                                        : 60.0) != 0)
        return DFGC_EXIT_ERROR;
#else
    if (a->data_parallel)
        return dfgc_usage_error("train", "--data-parallel: this dfgc was built "
                                "without MPI");
#endif
    if (a->shard_optimizer)
        c.training.shard_optimizer = c.ranks;
    if (c.rank != 0)
        c.log = NULL;
    c.training.decay_steps = dfgc_optimizer_steps(
        epochs, 32 * c.ranks, c.training.accumulate);
    dfgc_digits data;
    if (dfgc_digits_load(dfgc_digits_default_path(), &data) != 0)
        return DFGC_EXIT_ERROR;
    dfgc_train_result result;
    dfg_status st = dfgc_train_digits(&c, &data, &result);
    dfgc_digits_free(&data);
#ifdef DFGC_HAVE_MPI
    if (a->data_parallel)
        dfgc_data_parallel_end(&c, st != DFG_OK);
#endif
    if (st != DFG_OK)
        return dfgc_library_error(model);
    if (c.rank != 0)
        return 0;
    printf("training plan: arena %llu bytes, weights and state %llu bytes, "
           "%d steps, verified %s\n",
           (unsigned long long)result.plan.arena_bytes,
           (unsigned long long)result.plan.weights_bytes,
           (int)result.plan.n_steps, result.plan_verified ? "yes" : "no");
    printf("test_accuracy=%.3f\n", result.test_accuracy);
    return 0;
}

/* --schedule step's --step-size and --gamma, and --warmup, into t. 0, or
 * -1 after a usage error. */
static int schedule_options(const train_args *a, int step,
                            dfg_training_options *t)
{
    if (step != (a->step_size != 0) || (a->gamma && !step))
        return dfgc_usage_error("train", "--schedule step goes with "
                                "--step-size S (and --gamma G), they with it"),
               -1;
    char *end = NULL;
    float gamma = a->gamma ? strtof(a->gamma, &end) : 0.1f;
    if (a->gamma && (end == a->gamma || *end != '\0' ||
                     !(gamma > 0.0f && gamma <= 1.0f)))
        return dfgc_usage_error("train", "--gamma '%s' is not a number in "
                                "(0, 1]", a->gamma), -1;
    t->lr_step_size = (int64_t)a->step_size;
    t->lr_gamma = gamma;
    t->warmup_steps = (int64_t)a->warmup;
    return 0;
}

/* --data: the user's data set (data_training.h). */
static int train_with_data(const char *model, const train_args *a)
{
    if (!a->data)
        return dfgc_usage_error("train", "--val goes with --data");
    if (a->synthetic || a->data_parallel || a->stop_after || a->json)
        return dfgc_usage_error("train", "--data does not go with --synthetic, "
                                "--data-parallel, --stop-after or --json");
    int cosine = a->schedule && strcmp(a->schedule, "cosine") == 0;
    int step = a->schedule && strcmp(a->schedule, "step") == 0;
    if (a->schedule && !cosine && !step && strcmp(a->schedule, "constant") != 0)
        return dfgc_usage_error("train", "unknown --schedule '%s' (constant, "
                                "cosine, step)", a->schedule);
    dfgc_data_config c = {model, a->setup, {0}, a->epochs ? (int32_t)a->epochs : 10,
                          (int32_t)a->batch, a->seed, cosine, stdout, a->keep};
    if (schedule_options(a, step, &c.setup.training) != 0)
        return DFGC_EXIT_USAGE;
    dfg_compile_options_init(&c.options);
    c.options.precision = a->setup.precision;
    c.setup.training.accumulate = (int32_t)a->accumulate;
    c.setup.training.seed = a->seed;
    dfgc_data_set train, val;
    int r = dfgc_data_set_load(a->data, &train);
    if (r != 0)
        return r;
    if (a->val && (r = dfgc_data_set_load(a->val, &val)) != 0) {
        dfgc_data_set_free(&train);
        return r;
    }
    r = dfgc_train_data(&c, &train, a->val ? &val : NULL);
    dfgc_data_set_free(&train);
    if (a->val)
        dfgc_data_set_free(&val);
    return r;
}

int dfgc_train(int argc, char **argv)
{
    train_args a;
    memset(&a, 0, sizeof a);
    a.accumulate = a.seed = 1;
    a.steps = 50;
    dfgc_training_setup_init(&a.setup);
    const char *model = NULL;
    int status = dfgc_parse_arguments("train", usage, argc, argv, parse_option,
                                      &a, &model);
    if (status >= 0)
        return status;
    if (!model)
        return dfgc_usage_error("train", "no MODEL given");
    size_t n = strlen(model);
    if (a.data || a.val)
        return train_with_data(model, &a);
    if (a.schedule || a.step_size || a.gamma || a.warmup)
        return dfgc_usage_error("train", "--schedule, --step-size, --gamma "
                                "and --warmup go with --data (the "
                                "digits decay by a cosine, --synthetic keeps "
                                "--lr)");
    if (a.synthetic || (n > 5 && strcmp(model + n - 5, ".onnx") == 0)) {
        if (a.data_parallel)
            return dfgc_usage_error("train", "--data-parallel trains the "
                                    "bundled models on the digits only");
        if (a.stop_after)
            return dfgc_usage_error("train", "--stop-after is for the digits: "
                                    "--steps ends a synthetic run");
        if (a.keep.save && !(n > 5 && strcmp(model + n - 5, ".onnx") == 0))
            return dfgc_usage_error("train", "--save writes the trained ONNX "
                                    "model: MODEL must be a FILE.onnx");
        return train_synthetic(model, &a);
    }
    if (a.keep.save)
        return dfgc_usage_error("train", "--save writes the trained ONNX "
                                "model: MODEL must be a FILE.onnx");
    if (a.stop_after && !a.keep.checkpoint)
        return dfgc_usage_error("train", "--stop-after goes with --checkpoint");
    if (a.setup.loss != DFG_LOSS_CROSS_ENTROPY || a.setup.classes != 0)
        return dfgc_usage_error("train", "--loss and --classes go with "
                                "--synthetic; the digits have 10 classes");
    return train_digits(model_name(model), &a);
}
