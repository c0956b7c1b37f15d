/* Training a bundled classifier on the digits and measuring its test
 * accuracy: the loop behind 'dfgc train', shared with tests/test_training.c.
 * It uses the public API only: a training program (dfg_compile with
 * training options) runs one micro-batch per session run; the trained
 * weights are then copied into an inference program's session
 * (dfg_session_copy_weights) to classify the held-back examples. */
#ifndef DFGC_DIGITS_TRAINING_H
#define DFGC_DIGITS_TRAINING_H

#include <stdint.h>
#include <stdio.h>
#include "digits.h"
#include "dfg/dfg.h"

typedef struct dfgc_train_config {
    const char *model;              /* "mlp", "cnn" */
    dfg_training_options training;  /* loss is set to "loss" */
    int32_t epochs;
    uint64_t seed;                  /* shuffles the training examples */
    FILE *log;                      /* plan summary, per-epoch losses, or NULL */
    const char *json_path;          /* the training plan's JSON, or NULL */
} dfgc_train_config;

typedef struct dfgc_train_result {
    double final_loss;       /* mean loss over the last epoch */
    double test_accuracy;    /* on the examples after DFGC_DIGITS_TRAIN */
    dfg_plan_stats plan;     /* of the training program */
    int plan_verified;       /* dfg_program_verify accepted it */
} dfgc_train_result;

/* Epochs of Adam at lr 0.003 after which the model has converged on the
 * digits, with room to spare: the mlp needs 20 (0.96-0.975 test accuracy
 * over seeds 1..10, as the same MLP in PyTorch reaches on this split), the
 * cnn 10 (0.96-0.98). */
int32_t dfgc_default_epochs(const char *model);

/* DFG_OK, or the failing call's status (dfg_last_error() says why). */
dfg_status dfgc_train_digits(const dfgc_train_config *config,
                             const dfgc_digits *data, dfgc_train_result *out);

#endif
