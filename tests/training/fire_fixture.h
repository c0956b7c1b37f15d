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

#endif
