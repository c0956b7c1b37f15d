/* Training a bundled classifier on the digits and measuring its test
 * accuracy: the loop behind 'dfgc train', shared with tests/training/test_training.c.
 * It uses the public API only: a training program (dfg_compile with
 * training options) runs one micro-batch per session run; the trained
 * weights are then copied into an inference program's session
 * (dfg_session_copy_weights) to classify the held-back examples. */
#ifndef DFGC_DIGITS_TRAINING_H
#define DFGC_DIGITS_TRAINING_H

#include <stdint.h>
#include <stdio.h>
#include "tools/training/digits.h"
#include "dfg/dfg.h"
#include "tools/training/training_keep.h"

typedef struct dfgc_train_config {
    const char *model;              /* "mlp", "cnn" */
    dfg_training_options training;  /* loss is set to "loss" */
    int32_t epochs;
    uint64_t seed;                  /* shuffles the training examples */
    FILE *log;                      /* plan summary, per-epoch losses, or NULL */
    const char *json_path;          /* the training plan's JSON, or NULL */
    /* Data-parallel (docs/data-parallel.md): this process is rank `rank`
     * of `ranks` (0 of 1 alone) and takes rows rank*B..(rank+1)*B-1 of
     * each global batch of ranks*B; attach (if set) is called with the
     * training session before its first run, and detach (if set) before
     * the session is destroyed: what attach made must not outlive the
     * session (dfg/mpi.h). */
    int32_t rank, ranks;
    dfg_status (*attach)(void *context, dfg_session *session,
                         const dfg_program *program);
    void (*detach)(void *context);
    void *attach_context;
    /* Activations stored in f32 (0, the default) or bf16, for training
     * and for the test accuracy (dfg_compile_options.precision). */
    dfg_dtype precision;
    /* --checkpoint after every epoch (with the shuffling generator's
     * state), --resume after a checkpoint's epochs (the shuffles of the
     * epochs it holds replayed, so the next epoch sees the order a
     * straight run would); --save is not for the bundled models. One
     * process only (not with ranks > 1). */
    dfgc_keep_paths keep;
    /* Stop after this many of the `epochs` (0: run them all), as an
     * interrupted run would: the schedule still spans `epochs`. */
    int32_t stop_after;
} dfgc_train_config;

typedef struct dfgc_train_result {
    double final_loss;       /* mean loss over the last epoch */
    double test_accuracy;    /* on the examples after DFGC_DIGITS_TRAIN */
    dfg_plan_stats plan;     /* of the training program */
    int plan_verified;       /* dfg_program_verify accepted it */
} dfgc_train_result;

/* Epochs of Adam from lr 0.003, decayed to 0 by a cosine over the run,
 * after which the model has converged on the digits: the mlp 20 (test
 * accuracy 0.967-0.972 over seeds 1..10; 0.956-0.964 after 10), the cnn
 * 10 (0.958-0.981; 0.967-0.986 after 15). Without the decay the last
 * epochs' loss spikes decided the result (cnn: 0.853-0.986). */
int32_t dfgc_default_epochs(const char *model);

/* Optimizer steps of a run over the training examples: what
 * dfg_training_options.decay_steps needs to decay the learning rate over
 * the whole run ('dfgc train' and the tests do). */
int64_t dfgc_optimizer_steps(int32_t epochs, int32_t batch,
                             int32_t accumulate);

/* DFG_OK, or the failing call's status (dfg_last_error() says why). */
dfg_status dfgc_train_digits(const dfgc_train_config *config,
                             const dfgc_digits *data, dfgc_train_result *out);

#endif
