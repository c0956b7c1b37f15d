/* A small compiled network shared by the program-file and session tests,
 * with a double-precision reference:
 *
 *   h = gemm(x[4,8], W[8,6], b[6]); r = relu(h)      (in place)
 *   probs = softmax(r, axis 1)              -> output 0, [4,6]
 *   sums = reduce_sum(reshape(r, [2,12]), axis 1)   -> output 1, [2]
 *
 * The reshape is a view, so the program exercises weights, an in-place
 * step, a skipped view step and two outputs. */
#ifndef DFG_TEST_PROGRAM_FIXTURES_H
#define DFG_TEST_PROGRAM_FIXTURES_H

#include <stdint.h>
#include "dfg/dfg.h"

#define FIX_BATCH 4
#define FIX_IN 8
#define FIX_OUT 6

typedef struct fixture_weights {
    float w[FIX_IN * FIX_OUT];
    float b[FIX_OUT];
} fixture_weights;

/* splitmix64: a seeded stream, the same on every machine. */
uint64_t fixture_next(uint64_t *state);
/* Uniform in [-1, 1). */
float fixture_uniform(uint64_t *state);
void fixture_fill(uint64_t *state, float *data, int64_t n);

/* Builds the graph with weights drawn from seed (copied into *weights). */
dfg_status fixture_build(uint64_t seed, fixture_weights *weights,
                         dfg_graph **out);
/* Builds and compiles it with the given planner, unfused. */
dfg_status fixture_compile(uint64_t seed, fixture_weights *weights,
                           dfg_planner planner, dfg_program **out);
void fixture_reference(const fixture_weights *weights, const float *x,
                       double probs[FIX_BATCH * FIX_OUT], double sums[2]);
/* program saved to a temporary file and loaded back mapped, as a .dfgp
 * is (the file goes at once, the mapping stays); program is kept. NULL
 * on failure, dfg_last_error() saying why. */
dfg_program *fixture_reloaded(const dfg_program *program);
/* fixture_reloaded(program), program destroyed. */
dfg_program *fixture_mapped(dfg_program *program);
/* ||out - ref|| / ||ref||. */
double fixture_relative_error(const float *out, const double *ref, int64_t n);

#endif
