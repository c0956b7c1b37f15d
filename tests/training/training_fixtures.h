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

#endif
