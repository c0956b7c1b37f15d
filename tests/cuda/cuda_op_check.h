/* The harness of the CUDA host-logic tests (test_cuda_host_logic.c,
 * test_cuda_later_ops.c): seeded random data, and one op run both by the
 * CPU backend's kernel and by the CUDA backend's step plan through the
 * emulator (cuda_emulator.h), every output compared: relative error below
 * 1e-5 for f32 and 1e-2 for f16 and bf16, exact for the other dtypes.
 * Failures are cmocka failures. */
#ifndef DFG_TEST_CUDA_OP_CHECK_H
#define DFG_TEST_CUDA_OP_CHECK_H

#include <stdint.h>

#include "dfg/attrs.h"
#include "runtime/cpu/kernels.h"
#include "tests/cuda/cuda_emulator.h"

/* The seeded generator (one sequence per test program). */
uint64_t next_random(void);
float uniform(float lo, float hi);

/* A type of rank dims given as ints. */
dfg_type type_of(dfg_dtype dtype, int32_t rank, ...);
/* Fills by dtype: floats in [lo, hi), integers in a small range. */
void *random_tensor(const dfg_type *t, float lo, float hi);

#define MAX_OPERANDS 8

typedef struct op_run {
    dfg_op op;
    dfg_attrs attrs;
    int32_t n_in, n_out;
    dfg_type in_types[MAX_OPERANDS], out_types[MAX_OPERANDS];
    void *in[MAX_OPERANDS];
    void *out_cpu[MAX_OPERANDS], *out_emu[MAX_OPERANDS];
    void *ws_cpu, *ws_emu;
    int64_t ws_bytes;
    dfg_kernel_args cpu, emu;
} op_run;

/* Inputs of the given types (random in [lo, hi)), outputs typed by the
 * op's shape rule, workspaces by its workspace rule. The inputs may be
 * rewritten before run_compare (indices, labels). */
void run_setup(op_run *r, dfg_op op, const dfg_attrs *attrs, int32_t n_in,
               const dfg_type *in, int32_t n_out, float lo, float hi);
/* Runs both sides and compares every output. */
void run_compare(op_run *r);
void run_free(op_run *r);
/* run_setup, run_compare, run_free. */
void check_op(dfg_op op, const dfg_attrs *attrs, int32_t n_in,
              const dfg_type *in, int32_t n_out, float lo, float hi);

/* ||emu - cpu|| / ||cpu|| over the elements, NaNs matched by position. */
double relative_error(const dfg_type *t, const void *cpu, const void *emu);
double tolerance(dfg_dtype dtype);
dfg_attrs defaults(void);

#endif
