/* dfgc train MODEL: trains a bundled classifier on the digits data set
 * (data/digits) and reports its accuracy on the held-back examples. */
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "commands.h"
#include "digits_training.h"
#ifdef DFGC_HAVE_MPI
#include "data_parallel_cli.h"
#endif

static const char usage[] =
    "usage: dfgc train MODEL [--epochs N] [--batch N] [--optimizer NAME]\n"
    "                  [--lr X] [--accumulate K] [--json FILE] [--seed N]\n"
    "                  [--data-parallel [--bucket-bytes N]]\n"
    "\n"
    "Trains MODEL (example:mlp or example:cnn) on the UCI 8x8 digits: the\n"
    "first 1437 examples for training, the last 360 for the test accuracy,\n"
    "printed last as test_accuracy=0.973. Each step is one compiled program\n"
    "(forward, backward and optimizer in one memory plan, docs/training.md).\n"
    "\n"
    "--epochs N        passes over the training examples (mlp 20, cnn 10)\n"
    "--batch N         micro-batch size; the bundled models are built for 32\n"
    "--optimizer NAME  adam (default), adamw, or sgd (momentum 0.9)\n"
    "--lr X            learning rate (sgd 0.05, adam/adamw 0.003), decayed\n"
    "                  to 0 over the run by a cosine\n"
    "--accumulate K    micro-batches per optimizer step (1)\n"
    "--json FILE       write the training program's plan JSON\n"
    "--seed N          shuffling seed (1)\n"
    "--data-parallel   under mpirun -np N: each rank trains on its B rows of\n"
    "                  every global batch of N*B, gradients averaged across\n"
    "                  the ranks (docs/data-parallel.md)\n"
    "--bucket-bytes N  gradient bucket size for --data-parallel (25 MiB)\n"
    "DFG_DATA_DIR      the folder holding digits/digits.csv.gz\n";

/* example:NAME or NAME. */
static const char *model_name(const char *model)
{
    return strncmp(model, "example:", 8) == 0 ? model + 8 : model;
}

typedef struct train_args {
    const char *model, *json, *optimizer, *lr;
    uint64_t epochs, batch, accumulate, seed, bucket_bytes;
    int data_parallel;
} train_args;

static int parse(int argc, char **argv, train_args *a)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *text = NULL;
        if (dfgc_is_help(arg)) {
            fputs(usage, stdout);
            exit(0);
        }
        if (strcmp(arg, "--data-parallel") == 0) {
            a->data_parallel = 1;
            continue;
        }
        static const char *const numbers[] = {"--epochs", "--batch",
                                              "--accumulate", "--seed",
                                              "--bucket-bytes"};
        uint64_t *targets[] = {&a->epochs, &a->batch, &a->accumulate, &a->seed,
                               &a->bucket_bytes};
        const uint64_t most[] = {1u << 20, 1u << 20, 1u << 20, UINT64_MAX,
                                 (uint64_t)1 << 40};
        int found = 0;
        for (int k = 0; k < 5 && found == 0; k++) {
            found = dfgc_option_value("train", argc, argv, &i, numbers[k], &text);
            if (found > 0 &&
                dfgc_parse_u64("train", numbers[k], text, k == 3 ? 0 : 1,
                               most[k], targets[k]) != 0)
                return -1;
        }
        if (found == 0)
            found = dfgc_option_value("train", argc, argv, &i, "--json", &a->json);
        if (found == 0)
            found = dfgc_option_value("train", argc, argv, &i, "--optimizer",
                                      &a->optimizer);
        if (found == 0)
            found = dfgc_option_value("train", argc, argv, &i, "--lr", &a->lr);
        if (found < 0)
            return -1;
        if (found > 0)
            continue;
        if (arg[0] == '-')
            return dfgc_usage_error("train", "unknown option '%s'", arg), -1;
        if (a->model)
            return dfgc_usage_error("train", "more than one MODEL"), -1;
        a->model = arg;
    }
    if (!a->model)
        return dfgc_usage_error("train", "no MODEL given"), -1;
    return 0;
}

int dfgc_train(int argc, char **argv)
{
    train_args a = {NULL, NULL, "adam", NULL, 0, 32, 1, 1, 0, 0};
    if (parse(argc, argv, &a) != 0)
        return DFGC_EXIT_USAGE;
    const char *model = model_name(a.model);
    int32_t epochs = a.epochs ? (int32_t)a.epochs : dfgc_default_epochs(model);
    dfgc_train_config c = {model, {0}, epochs, a.seed, stdout, a.json,
                           0, 1, NULL, NULL};
    dfg_training_options_init(&c.training);
    if (dfg_optimizer_from_name(a.optimizer, &c.training.optimizer) != 0)
        return dfgc_usage_error("train", "unknown optimizer '%s' (sgd, adam, "
                                "adamw)", a.optimizer);
    c.training.learning_rate = c.training.optimizer == DFG_OPTIMIZER_SGD ? 0.05f
                                                                         : 0.003f;
    if (a.lr) {
        char *end;
        c.training.learning_rate = strtof(a.lr, &end);
        if (*end != '\0' || !(c.training.learning_rate > 0.0f))
            return dfgc_usage_error("train", "--lr '%s' is not a positive "
                                    "number", a.lr);
    }
    c.training.accumulate = (int32_t)a.accumulate;
    if (a.batch != 32)
        return dfgc_usage_error("train", "--batch %llu: the bundled models are "
                                "built for batch 32", (unsigned long long)a.batch);
    if (a.bucket_bytes && !a.data_parallel)
        return dfgc_usage_error("train", "--bucket-bytes needs --data-parallel");
    c.training.data_parallel = a.data_parallel;
    c.training.bucket_bytes = (int64_t)a.bucket_bytes;
#ifdef DFGC_HAVE_MPI
    if (a.data_parallel && dfgc_data_parallel_begin(&c) != 0)
        return DFGC_EXIT_ERROR;
#else
    if (a.data_parallel)
        return dfgc_usage_error("train", "--data-parallel: this dfgc was built "
                                "without MPI");
#endif
    if (c.rank != 0)
        c.log = NULL;
    c.training.decay_steps = dfgc_optimizer_steps(
        epochs, (int32_t)a.batch * c.ranks, c.training.accumulate);
    dfgc_digits data;
    if (dfgc_digits_load(dfgc_digits_default_path(), &data) != 0)
        return DFGC_EXIT_ERROR;
    dfgc_train_result result;
    dfg_status st = dfgc_train_digits(&c, &data, &result);
    dfgc_digits_free(&data);
#ifdef DFGC_HAVE_MPI
    if (a.data_parallel)
        dfgc_data_parallel_end(&c, st != DFG_OK);
#endif
    if (st != DFG_OK)
        return dfgc_library_error(a.model);
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
