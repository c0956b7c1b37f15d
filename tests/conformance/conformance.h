/* The ONNX conformance runner: runs each test of the ONNX backend test
 * data (model.onnx + test_data_set_N/{input,output}_M.pb) through the
 * importer, the compiler and a CPU session, and compares the outputs. */
#ifndef DFG_CONFORMANCE_H
#define DFG_CONFORMANCE_H

#include <stddef.h>

/* How one test ended. */
typedef enum conformance_outcome {
    CONFORMANCE_PASS = 0,
    CONFORMANCE_FAIL = 1,
    CONFORMANCE_SKIP_OP = 2,      /* uses an op type dfg does not support */
    CONFORMANCE_SKIP_FEATURE = 3  /* a supported op with an unsupported
                                     dtype, attribute value or opset */
} conformance_outcome;

/* Runs the test in directory dir. detail (size bytes) receives the reason
 * of a failure or skip; for CONFORMANCE_SKIP_OP, the unsupported op types
 * separated by spaces. */
conformance_outcome conformance_run_case(const char *dir, char *detail,
                                         size_t size);

/* Compares got with want (same dtype and count): floats within
 * |got - want| <= atol + rtol * |want| (NaN matches NaN), others exactly.
 * Returns 0, or -1 with a description of the first mismatch in detail. */
int conformance_compare(const char *what, const void *got, const void *want,
                        int dtype, long long count, char *detail,
                        size_t size);

#endif
