/* 'dfgc train MODEL --data train.npz [--val val.npz]': trains a model on
 * the user's data set (data_set.h) for a number of epochs, each a pass
 * over the examples in an order shuffled from the seed, in batches of the
 * training program's static batch size; the rows of a last partial batch
 * are dropped (the program runs one size only), a different subset each
 * epoch. Prints "epoch E: loss L", L the mean of the epoch's batch
 * losses, and with a validation set "val_loss=V val_accuracy=A" (the
 * accuracy for cross entropy only: the argmax of the prediction against
 * the class index), computed by the trainer's inference programs
 * (dfg/trainer.h, whose steps run through a finite guard); the
 * validation set's partial last batch is padded with its last example,
 * which is counted once. --checkpoint, --resume and --save as for the
 * other training loops (training_keep.h). */
#ifndef DFGC_DATA_TRAINING_H
#define DFGC_DATA_TRAINING_H

#include <stdint.h>
#include <stdio.h>
#include "tools/training/data_set.h"
#include "tools/training/training_keep.h"
#include "tools/training/training_setup.h"

typedef struct dfgc_data_config {
    const char *model;          /* FILE.onnx or another dfgc_load_graph name */
    dfgc_training_setup setup;  /* loss, optimizer; training.seed is set */
    dfg_compile_options options;/* training is set from setup */
    int32_t epochs;
    int32_t batch;              /* 0, or what the model's batch must be */
    uint64_t seed;              /* the shuffles */
    int cosine;                 /* --schedule cosine: the learning rate
                                   decays to 0 over the run's optimizer
                                   steps (dfg_training_options.decay_steps);
                                   0: constant */
    FILE *log;                  /* per-epoch lines, or NULL */
    dfgc_keep_paths keep;
} dfgc_data_config;

/* Trains on train, evaluating on val (may be NULL) after every epoch.
 * 0, or an exit status after printing why. */
int dfgc_train_data(dfgc_data_config *config, const dfgc_data_set *train,
                    const dfgc_data_set *val);

#endif
