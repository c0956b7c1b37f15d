/* The training steps of the CUDA emulator (cuda_emulator.h): softmax
 * cross-entropy and its gradient, the optimizer updates and batch-norm
 * training and its gradient, run on the CPU as training.cu and
 * batch_norm_train.cu launch them. */
#ifndef DFG_TEST_CUDA_EMULATOR_TRAINING_H
#define DFG_TEST_CUDA_EMULATOR_TRAINING_H

#include "runtime/cuda/plan/step_plan.h"

/* Runs plan if its kind is one of the above; any other kind is left
 * alone. *status as cuda_emulate_step sets it. */
void cuda_emulate_training_step(const dfg_cuda_step_plan *plan,
                                unsigned int *status);

/* The device's status word: the first step to raise it (step + 1) stays. */
void cuda_emulator_raise_status(unsigned int *status, int32_t step);

#endif
