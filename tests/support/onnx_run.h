/* Running one-node ONNX models built with onnx_builder in tests: import,
 * compile, verify the plan, run once on the CPU backend. abort()s through
 * cmocka on any failure (tests only). */
#ifndef DFG_TEST_ONNX_RUN_H
#define DFG_TEST_ONNX_RUN_H

#include <stdint.h>
#include "tests/support/onnx_builder.h"

/* Uniform in [-1, 1), from a fixed seed. */
double onnx_run_uniform(void);
/* n such values as floats (malloc'ed). */
float *onnx_run_random_floats(int64_t n);
int64_t onnx_run_numel(int rank, const int64_t *dims);
/* Runs the model on inputs (the program's, in order) and returns output
 * 0 (malloc'ed) with its rank and dims (DFG_MAX_RANK entries); the other
 * outputs (at most 15) are computed and dropped. */
void *onnx_run_model(const onnx_builder *b, const void *const *inputs,
                     int32_t *rank, int64_t *dims);
/* Fails unless ||got - ref|| <= 1e-5 ||ref|| and ref is not zero. */
void onnx_run_expect_close(const float *got, const double *ref, int64_t n);

#endif
