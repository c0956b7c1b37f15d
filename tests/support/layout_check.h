/* Helpers of the layout-assignment tests (tests/runtime_cpu/
 * test_layout_assign.c, test_foreign_block.c). Each fails the running
 * cmocka test with dfg_last_error() where dfg refuses. */
#ifndef DFG_TEST_LAYOUT_CHECK_H
#define DFG_TEST_LAYOUT_CHECK_H

#include <stdint.h>
#include "dfg/dfg.h"

/* g compiled with the layout pass on or off (layouts), with oneDNN's
 * workspaces or as the reference path (onednn 0: --no-onednn). */
dfg_program *compile_with(const dfg_graph *g, int layouts, int onednn);

/* The layout of p's tensor named name. */
int32_t layout_of(const dfg_program *p, const char *name);

/* p and plain run on the same seeded input of n_in floats (their one
 * input) give the same first output, n_out floats, within 1e-5 relative. */
void expect_plain_output(const dfg_program *p, const dfg_program *plain,
                         int64_t n_in, int64_t n_out);

#endif
