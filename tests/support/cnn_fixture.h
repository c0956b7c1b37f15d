/* Small CNNs for the tiling tests (tests/runtime_cpu/test_tile_*.c):
 * weights from the seeded stream (random_data.h), convs with their pads,
 * a graph compiled, verified and run on one input, outputs compared.
 * Failures fail the running cmocka test. */
#ifndef DFG_TEST_CNN_FIXTURE_H
#define DFG_TEST_CNN_FIXTURE_H

#include "dfg/compile.h"
#include "dfg/graph.h"

/* A weight of the given shape, values in [-0.3, 0.3). */
dfg_value cnn_weight(dfg_graph *g, const char *name, int32_t rank,
                     const int64_t *shape);

/* A k x k conv of x (in channels) to out channels with bias, padded by
 * k / 2 on each side; weights named name.w and name.b. */
dfg_value cnn_conv(dfg_graph *g, dfg_value x, const char *name, int64_t in,
                   int64_t out, int64_t k, int32_t stride, int32_t group);

/* g compiled with o (verified), run on input (its one input) into y (its
 * one output); the program, which the caller destroys. */
dfg_program *cnn_compile_and_run(const dfg_graph *g,
                                 const dfg_compile_options *o,
                                 const float *input, float *y);

/* The same, tiling off. */
dfg_program *cnn_untiled(const dfg_graph *g, const float *x, float *y);

/* g compiled memory first (prefer_memory = prefer: 1, or
 * DFG_PREFER_SMALLEST), tiling off into *off and on into *on, run on x:
 * the untiled outputs into want, the tiled into got. */
void cnn_memory_first(const dfg_graph *g, int prefer, const float *x,
                      float *want, float *got, dfg_program **off,
                      dfg_program **on);

/* The FLOPs of p's steps. */
int64_t cnn_flops(const dfg_program *p);

/* ||got - want|| / ||want||, want not all zero. */
double cnn_relative_error(const float *got, const float *want, int n);

/* Fails unless got is within 1e-5 of want (relative). */
void cnn_assert_close(const float *got, const float *want, int n);

#endif
