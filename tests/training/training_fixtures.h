/* The bundled models' training steps as the training tests compile them
 * (tests/training/test_training.c, tests/training/test_training_budget.c,
 * tests/training/test_conv_inplace.c). */
#ifndef DFG_TEST_TRAINING_FIXTURES_H
#define DFG_TEST_TRAINING_FIXTURES_H

#include "dfg/dfg.h"

/* Bundled model's training step with t (its loss set to the model's
 * "loss"), compiled and its plan verified; fails the test otherwise. */
dfg_program *compile_bundled_training(const char *model,
                                      dfg_training_options *t);

/* The same on dfg's kernels alone (no backend scratch planned), as a
 * step under a memory budget runs: what a budgeted step must compute
 * bit for bit. */
dfg_program *compile_bundled_training_reference(const char *model,
                                                dfg_training_options *t);

/* A CPU session of a training program whose output 1 holds its weights'
 * squared update norms, their count in *n_norms; fails the test if it
 * cannot be made. */
dfg_session *training_session(const dfg_program *p, int64_t *n_norms);

#endif
