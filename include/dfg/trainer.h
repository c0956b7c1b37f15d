/* A trainer: a model's training step and its evaluation, fed batch by
 * batch by the caller's own loop (docs/training.md, "Training from C and
 * Python"). It is what 'dfgc train --data' and Python's dfg.train run:
 *
 *   dfg_trainer_create(model, &options, &t);     compile both programs
 *   for each batch: dfg_trainer_step(t, x, y, &loss);
 *   dfg_trainer_predict(t, x, prediction);       eval with the weights now
 *   dfg_trainer_save_onnx(t, "model.onnx", "trained.onnx", NULL);
 *   dfg_trainer_checkpoint_save(t, &position, "ckpt");
 *
 * It holds three programs compiled from the model, each with a session on
 * the CPU: the training step (the model, its loss dfg_graph_add_loss
 * appends, backward and the optimizer update: include/dfg/training.h),
 * the inference program (the model as it is: batch norms in eval form,
 * dropout off) and the evaluation's loss (the inference program with
 * the loss). Every step runs through a finite guard
 * (include/dfg/finite_training.h): a non-finite loss or update is
 * DFG_ERR_NOT_FINITE and the weights stay those of the last finite step.
 * The inference sessions are given the trained weights
 * (dfg_session_copy_weights) before the first prediction or evaluation
 * after any change to them.
 *
 * Inputs: x is the model's input 0 (f32, the program's static batch);
 * y is the labels (i64 [batch], cross entropy) or the targets (f32 like
 * the prediction, mse). A trainer is used by one thread at a time. */
#ifndef DFG_TRAINER_H
#define DFG_TRAINER_H

#include <stddef.h>
#include <stdint.h>
#include "dfg/compile.h"
#include "dfg/graph.h"
#include "dfg/program.h"
#include "dfg/session.h"
#include "dfg/status.h"
#include "dfg/training.h"
#include "dfg/training_checkpoint.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dfg_trainer dfg_trainer;

typedef struct dfg_trainer_options {
    /* The optimizer, schedule, budget and seed; its loss name is the
     * trainer's ("loss"). dfg_training_options_init's defaults. */
    dfg_training_options training;
    dfg_loss_kind loss;          /* DFG_LOSS_CROSS_ENTROPY */
    /* Planner, precision (f32 or bf16), alignment, ...; its training and
     * share_weights are the trainer's. dfg_compile_options_init's. */
    dfg_compile_options compile;
} dfg_trainer_options;

void dfg_trainer_options_init(dfg_trainer_options *options);

/* Compiles model's inference program, then appends the loss to model
 * (dfg_graph_add_loss: model is changed, and stays the caller's to
 * destroy) and compiles the training step; makes both sessions on the
 * CPU. Errors are the compiler's and the loss's, naming what is wrong
 * (a model whose first output is no prediction [N, classes], a budget
 * that cannot be met). On failure *out is NULL. */
dfg_status dfg_trainer_create(dfg_graph *model,
                              const dfg_trainer_options *options,
                              dfg_trainer **out);
void dfg_trainer_destroy(dfg_trainer *trainer);

/* The training step's program and session (the weights region, with the
 * optimizer state, is the session's: include/dfg/collective.h
 * dfg_session_weights_region), and the inference program. Valid while
 * the trainer lives. */
const dfg_program *dfg_trainer_program(const dfg_trainer *trainer);
dfg_session *dfg_trainer_session(dfg_trainer *trainer);
const dfg_program *dfg_trainer_predict_program(const dfg_trainer *trainer);
/* The batch size the programs are compiled for (input 0's first dim),
 * and the prediction's elements per example. */
int64_t dfg_trainer_batch(const dfg_trainer *trainer);
int64_t dfg_trainer_prediction_size(const dfg_trainer *trainer);
/* Finite steps run (since creation or the last checkpoint loaded: the
 * loaded one's count). */
int64_t dfg_trainer_steps(const dfg_trainer *trainer);

/* One micro-batch: forward, backward, and (every `accumulate`) the
 * optimizer update. *loss (may be NULL) receives the batch's loss, the
 * failed step's on DFG_ERR_NOT_FINITE. */
dfg_status dfg_trainer_step(dfg_trainer *trainer, const void *x,
                            const void *y, float *loss);

/* The model's prediction of batch x with the weights now: f32,
 * dfg_trainer_batch * dfg_trainer_prediction_size elements. */
dfg_status dfg_trainer_predict(dfg_trainer *trainer, const void *x,
                               float *prediction);

/* The loss of batch x, y in eval form (no update) into *loss, and the
 * prediction as dfg_trainer_predict into prediction unless it is NULL. */
dfg_status dfg_trainer_evaluate(dfg_trainer *trainer, const void *x,
                                const void *y, float *loss,
                                float *prediction);

/* The weight `name` (a trained weight or a batch norm's running
 * statistic, named as in the model) in the training session's region:
 * *data points at its f32 elements, *count is their number. Reading and
 * writing them between steps is allowed; the next prediction sees them.
 * DFG_ERR_NOT_FOUND if the training program has no such f32 weight. */
dfg_status dfg_trainer_weight(dfg_trainer *trainer, const char *name,
                              float **data, int64_t *count);
/* The trainable names in order: index i of dfg_trainer_num_weights. */
int32_t dfg_trainer_num_weights(const dfg_trainer *trainer);
const char *dfg_trainer_weight_name(const dfg_trainer *trainer, int32_t i);

/* dfg_onnx_save_trained of the training session's weights: model_path,
 * the ONNX file the model was imported from, written to out_path with
 * the trained initializers. */
dfg_status dfg_trainer_save_onnx(dfg_trainer *trainer, const char *model_path,
                                 const char *out_path, int32_t *replaced);

/* dfg_checkpoint_save / dfg_checkpoint_load of the training session
 * (include/dfg/training_checkpoint.h): the weights, optimizer state and
 * step counter, and the caller's position. */
dfg_status dfg_trainer_checkpoint_save(dfg_trainer *trainer,
                                       const dfg_checkpoint_position *position,
                                       const char *path);
dfg_status dfg_trainer_checkpoint_load(dfg_trainer *trainer, const char *path,
                                       uint64_t seed,
                                       dfg_checkpoint_position *position);

#ifdef __cplusplus
}
#endif
#endif
