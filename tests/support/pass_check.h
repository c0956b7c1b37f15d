/* What the compiler-pass tests share: test_pass_rewrites.c (folding, dead
 * code, views, in-place reuse, workspace) and test_pass_plan.c (liveness,
 * dfg_compile's contract, seeded random graphs), and the blocked-layout
 * tests of tests/runtime_cpu/. Built into each test executable with
 * pass_check.c; a helper used by only one of them stays in that file.
 * Failures end the running cmocka test; returned programs and output
 * buffers belong to the caller (dfg_program_destroy and free). */
#ifndef DFG_TEST_PASS_CHECK_H
#define DFG_TEST_PASS_CHECK_H

#include <stdint.h>

#include "dfg/builder.h"
#include "dfg/compile.h"
#include "program/program.h"

#define OK(call) assert_int_equal((call), DFG_OK)
#define DIMS(...) (const int64_t[]){__VA_ARGS__}

/* --- seeded randomness: a test sets rng_state, then draws */

extern uint64_t rng_state;
uint32_t rng_next(void);
/* Uniform in [0, n). */
int32_t rng_below(int32_t n);
/* Uniform in [-1, 1]. */
float rng_float(void);
void fill_random(float *x, int64_t n);

/* --- graphs */

/* An f32 graph input, which must be accepted. */
dfg_value input(dfg_graph *g, const char *name, int32_t rank,
                const int64_t *shape);
/* An f32 constant (constant != 0) or weight of random values. */
dfg_value random_leaf(dfg_graph *g, const char *name, int constant,
                      int32_t rank, const int64_t *shape);

/* --- programs */

/* dfg_compile with these options, which must succeed. */
dfg_program *compile(const dfg_graph *g, dfg_planner planner,
                     int fold, int dce, int in_place);
/* dfg_compile with the fusion passes (fuse) and the blocked-layout pass
 * (layouts) on or off, which must succeed; the program checked
 * (check_program). */
dfg_program *compile_fusing(const dfg_graph *g, int fuse, int layouts);
/* The same with share_weights as given: 0 keeps every weight as the
 * graph gives it, so no batch norm is folded into a conv. */
dfg_program *compile_fusing_weights(const dfg_graph *g, int fuse,
                                    int layouts, int share_weights);
/* The index of the program tensor of that name, or -1. */
int32_t tensor_named(const dfg_program *p, const char *name);
const char *value_name(const dfg_graph *g, dfg_value v);
/* The program tensor of graph value v, which must exist. */
const dfg_program_tensor *tensor_of(const dfg_program *p,
                                    const dfg_graph *g, dfg_value v);
/* Every invariant of a compiled program, checked here independently of
 * dfg_program_verify as well as through it. */
void check_program(const dfg_program *p);
/* Runs p on the CPU backend; outputs[i] receives malloc'd copies. */
void run_program(const dfg_program *p, const void *const *inputs,
                 float **outputs);
/* ||x - ref|| / ||ref|| over n values. */
double relative_error(const float *x, const double *ref, int64_t n);
/* The n values of p's tensor of that name, held in values, as doubles:
 * malloc'd (the caller frees them), *n set. */
double *values_as_reference(const dfg_program *p, const char *name,
                            const float *values, int64_t *n);
/* Runs p on inputs: its first output (n values) within a relative 1e-6
 * of ref, or the test fails naming what and layouts. */
void check_first_output(const dfg_program *p, const void *const *inputs,
                        const double *ref, int64_t n, const char *what,
                        int layouts);

#endif
