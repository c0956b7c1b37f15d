/* A small squeezenet-shaped classifier for training tests. */
#ifndef DFG_TESTS_TRAINING_FIRE_FIXTURE_H
#define DFG_TESTS_TRAINING_FIRE_FIXTURE_H

#include <stdint.h>
#include "dfg/dfg.h"

/* x [n, 16, hw, hw] -> fire(8 -> e + e) -> fire(8 -> 2e + 2e) -> 1x1 conv
 * to 10 classes -> global average -> [n, 10], cross entropy appended: each
 * fire module a squeeze conv, two expand convs (1x1, 3x3) and their relus,
 * concatenated along channels. The caller destroys the graph. */
dfg_graph *fire_net(int64_t n, int64_t hw, int64_t e);

/* Compiles g's training step (Adam) under percent% of its unconstrained
 * arena or bytes (both 0: no budget) into *program, each plan verified:
 * 1 when it fits, 0 when the budget cannot be met (*program NULL); any
 * other failure fails the test. */
int fire_compile(const dfg_graph *g, float percent, uint64_t bytes,
                 dfg_program **program);

#endif
