/* 'dfgc train MODEL --synthetic': trains any classifier (an ONNX file, a
 * bundled model) on one fixed batch of random inputs and labels drawn
 * from a seed, printing each step's loss and time, then the plan's arena
 * and weights region (optimizer state included) and the process's peak
 * resident set. One fixed batch shows whether the model can learn at
 * all: a working step memorises it (the loss falls tenfold and more). */
#ifndef DFGC_SYNTHETIC_TRAINING_H
#define DFGC_SYNTHETIC_TRAINING_H

#include <stdint.h>
#include <stdio.h>
#include "tools/training/training_keep.h"
#include "tools/training/training_setup.h"

typedef struct dfgc_synthetic_config {
    const char *model;
    dfgc_training_setup setup;
    dfg_compile_options options;  /* training is set from setup */
    int32_t steps;
    uint64_t seed;
    FILE *log;                    /* per-step lines and the summary, or NULL */
    /* One step trains on the whole (one) batch: an epoch, after which a
     * checkpoint is saved; --resume goes on after the checkpoint's steps
     * up to `steps` in all. */
    dfgc_keep_paths keep;
} dfgc_synthetic_config;

typedef struct dfgc_synthetic_result {
    double first_loss, last_loss;
    dfg_plan_stats plan;
    long peak_rss_kib;
    dfg_memory_prediction predicted; /* before the first step */
} dfgc_synthetic_result;

/* DFG_OK, or the failing call's status (dfg_last_error() says why). */
dfg_status dfgc_train_synthetic(dfgc_synthetic_config *config,
                                dfgc_synthetic_result *out);

#endif
