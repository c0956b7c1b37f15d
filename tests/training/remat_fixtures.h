/* Graphs of hand-named recomputations for the rematerialization tests
 * (tests/training/test_remat_merge.c, tests/training/test_remat_split.c): nodes added to a
 * graph directly, so that a node's name can say it is a recomputation
 * ("<producer>/recompute_<n>", passes/remat/remat.h). */
#ifndef DFG_TEST_REMAT_FIXTURES_H
#define DFG_TEST_REMAT_FIXTURES_H

#include <stdint.h>
#include "ir/graph.h"

/* A new graph whose input "x" is [rows, cols] f32; *x: its value index. */
dfg_graph *remat_graph(int64_t rows, int64_t cols, int32_t *x);

/* The largest weight remat_weight makes, in floats. */
#define REMAT_FIXTURE_MAX_WEIGHT (2048 * 256)

/* A [rows, cols] f32 weight of zeros (rows * cols at most
 * REMAT_FIXTURE_MAX_WEIGHT) named name; its value index. */
int32_t remat_weight(dfg_graph *g, const char *name, int64_t rows,
                     int64_t cols);

/* Node op(a[, b]) named name (b < 0: one input) with default attributes;
 * its output's value index, and the node's index in *at. */
int32_t remat_node(dfg_graph *g, dfg_op op, const char *name, int32_t a,
                   int32_t b, int32_t *at);

#endif
