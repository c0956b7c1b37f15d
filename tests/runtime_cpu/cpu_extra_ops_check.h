/* What the CPU tests of the ONNX front end's ops share
 * (test_cpu_extra_ops.c, test_cpu_resize_top_k.c): types written inline,
 * default attributes, small random integers and shapes, integer tensor
 * elements, and one op run through its shape rule and CPU kernel. Include
 * after <cmocka.h>; every failure ends the running cmocka test. */
#ifndef DFG_TEST_CPU_EXTRA_OPS_CHECK_H
#define DFG_TEST_CPU_EXTRA_OPS_CHECK_H

#include "tests/runtime_cpu/cpu_kernel_check.h"
#include "runtime/cpu/kernels_extra.h"
#include "ir/op_table.h"

#define DIMS(...) (int64_t[]){__VA_ARGS__}
#define N_DIMS(...) ((int32_t)(sizeof(DIMS(__VA_ARGS__)) / sizeof(int64_t)))
#define T(dt, ...) check_type(dt, N_DIMS(__VA_ARGS__), DIMS(__VA_ARGS__))

/* Attributes as dfg_attrs_init leaves them. */
static inline dfg_attrs defaults(void)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    return a;
}

/* In [0, n), from cpu_kernel_check.h's seeded stream. */
static inline int64_t random_below(int64_t n)
{
    return (int64_t)(check_next() % (uint64_t)n);
}

/* Each dimension in [1, max_dim]. */
static inline dfg_type random_type(dfg_dtype dt, int32_t rank,
                                   int64_t max_dim)
{
    dfg_type t = {dt, rank, {0}, 0};
    for (int32_t d = 0; d < rank; d++)
        t.shape[d] = 1 + random_below(max_dim);
    return t;
}

/* Element i of an integer tensor (i32 or i64). */
static inline int64_t int_at(const check_tensor *x, int64_t i)
{
    return x->type.dtype == DFG_I64 ? ((const int64_t *)x->data)[i]
                                    : ((const int32_t *)x->data)[i];
}

/* Sets element i of an integer tensor (i32 or i64). */
static inline void set_int(check_tensor *x, int64_t i, int64_t v)
{
    if (x->type.dtype == DFG_I64)
        ((int64_t *)x->data)[i] = v;
    else
        ((int32_t *)x->data)[i] = (int32_t)v;
}

/* Runs op with the shape rule's outputs, which the caller frees. */
static inline dfg_status run_op(dfg_op op, const dfg_attrs *a,
                                int32_t n_in, check_tensor *const *in,
                                int32_t n_out, check_tensor *outs)
{
    dfg_type types[2];
    check_infer(op, a, n_in, in, n_out, types);
    check_tensor *out[2];
    for (int32_t i = 0; i < n_out; i++) {
        outs[i] = check_empty(types[i]);
        out[i] = &outs[i];
    }
    return check_run(dfg_cpu_kernel_for(op), op, a, n_in, in, n_out, out,
                     NULL, 0);
}

/* Float results within 1e-5 relative error of the reference. */
static inline void expect_close(const check_tensor *y, const double *ref,
                                const char *what)
{
    double err = check_rel_error(y, ref);
    if (!(err < 1e-5))
        fail_msg("%s: relative error %g", what, err);
}

#endif
