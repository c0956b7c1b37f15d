/* Helpers shared by the CPU kernel tests: seeded random data (never
 * zeros), tensors sized from their types, running one kernel through its
 * dfg_kernel_args, and the relative error against a double reference.
 * Include after <cmocka.h>. */
#ifndef DFG_TEST_CPU_KERNEL_CHECK_H
#define DFG_TEST_CPU_KERNEL_CHECK_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/tensor_type.h"
#include "math/elementwise.h"
#include "runtime/cpu/kernels.h"

/* A test tensor: its type and malloc'd bytes (check_tensor_free). */
typedef struct check_tensor {
    dfg_type type;
    void *data;
    int64_t numel;
} check_tensor;

static uint64_t check_rng = 0x9e3779b97f4a7c15u;

static inline void check_seed(uint64_t seed) { check_rng = seed * 2654435761u + 1; }

/* xorshift64*: reproducible across platforms, unlike rand(). */
static inline uint64_t check_next(void)
{
    check_rng ^= check_rng >> 12;
    check_rng ^= check_rng << 25;
    check_rng ^= check_rng >> 27;
    return check_rng * 0x2545f4914f6cdd1du;
}

/* Uniform in [-1, -0.05] U [0.05, 1]: never zero, so that a kernel that
 * forgets a term cannot pass. */
static inline float check_uniform(void)
{
    float u = (float)((check_next() >> 40) * (1.0 / 16777216.0));
    float mag = 0.05f + 0.95f * u;
    return (check_next() & 1) ? mag : -mag;
}

static inline dfg_type check_type(dfg_dtype dtype, int32_t rank,
                                  const int64_t *dims)
{
    dfg_type t = {dtype, rank, {0}, 0};
    for (int32_t i = 0; i < rank; i++)
        t.shape[i] = dims[i];
    return t;
}

/* A tensor of type t; float dtypes get random values, the others random
 * bytes. */
static inline check_tensor check_random(dfg_type t)
{
    check_tensor x = {t, NULL, dfg_type_numel(&t)};
    size_t size = dfg_dtype_size(t.dtype);
    x.data = malloc((size_t)x.numel * size + 1);
    for (int64_t i = 0; i < x.numel; i++) {
        float v = check_uniform();
        switch (t.dtype) {
        case DFG_F32: ((float *)x.data)[i] = v; break;
        case DFG_F16: ((uint16_t *)x.data)[i] = dfg_f32_to_f16(v); break;
        case DFG_BF16: ((uint16_t *)x.data)[i] = dfg_f32_to_bf16(v); break;
        case DFG_F64: ((double *)x.data)[i] = v; break;
        default:
            for (size_t b = 0; b < size; b++)
                ((uint8_t *)x.data)[i * (int64_t)size + (int64_t)b] =
                    (uint8_t)check_next();
        }
    }
    return x;
}

/* An output tensor, filled with a NaN-ish byte pattern so that unwritten
 * elements show. */
static inline check_tensor check_empty(dfg_type t)
{
    check_tensor x = {t, NULL, dfg_type_numel(&t)};
    size_t bytes = (size_t)x.numel * dfg_dtype_size(t.dtype);
    x.data = malloc(bytes + 1);
    memset(x.data, 0xff, bytes);
    return x;
}

static inline void check_tensor_free(check_tensor *x)
{
    free(x->data);
    x->data = NULL;
}

/* Element i of a float tensor, widened to double. */
static inline double check_get(const check_tensor *x, int64_t i)
{
    switch (x->type.dtype) {
    case DFG_F16: return dfg_f16_to_f32(((const uint16_t *)x->data)[i]);
    case DFG_BF16: return dfg_bf16_to_f32(((const uint16_t *)x->data)[i]);
    case DFG_F64: return ((const double *)x->data)[i];
    default: return ((const float *)x->data)[i];
    }
}

/* ||out - ref|| / ||ref|| over n elements (NaN in out gives NaN). */
static inline double check_rel_error(const check_tensor *out,
                                     const double *ref)
{
    double diff = 0.0, norm = 0.0;
    for (int64_t i = 0; i < out->numel; i++) {
        double d = check_get(out, i) - ref[i];
        diff += d * d;
        norm += ref[i] * ref[i];
    }
    return sqrt(diff) / sqrt(norm);
}

/* The float dtypes the float kernels are checked on. */
static const dfg_dtype check_float_dtypes[] = {DFG_F32, DFG_F16, DFG_BF16};

/* Worst relative error met per dtype by check_expect_close, printed at
 * the end by check_report_worst. */
static double check_worst_error[DFG_DTYPE_COUNT];

/* Fails the test unless out is within the dtype's tolerance of ref (1e-5
 * relative for f32, 1e-2 for f16 and bf16). */
static inline void check_expect_close(const char *what,
                                      const check_tensor *out,
                                      const double *ref)
{
    double err = check_rel_error(out, ref);
    dfg_dtype dtype = out->type.dtype;
    double tolerance = dtype == DFG_F32 ? 1e-5 : 1e-2;
    if (err > check_worst_error[dtype])
        check_worst_error[dtype] = err;
    if (!(err < tolerance))
        fail_msg("%s on %s: relative error %g", what, dfg_dtype_name(dtype),
                 err);
}

/* A cmocka group teardown printing the worst errors of the float dtypes. */
static inline int check_report_worst(void **state)
{
    (void)state;
    for (size_t d = 0; d < 3; d++)
        printf("# worst relative error on %s: %.3g\n",
               dfg_dtype_name(check_float_dtypes[d]),
               check_worst_error[check_float_dtypes[d]]);
    return 0;
}

/* The index of element `linear` of a row-major tensor of type t. */
static inline void check_unravel(int64_t linear, const dfg_type *t,
                                 int64_t *idx)
{
    for (int32_t d = t->rank - 1; d >= 0; d--) {
        idx[d] = linear % t->shape[d];
        linear /= t->shape[d];
    }
}

/* The row-major position of index idx in a tensor of type t. */
static inline int64_t check_ravel(const int64_t *idx, const dfg_type *t)
{
    int64_t at = 0;
    for (int32_t d = 0; d < t->rank; d++)
        at = at * t->shape[d] + idx[d];
    return at;
}

/* Runs kernel on the given inputs (NULL entries: absent) and outputs. */
static inline dfg_status check_run(dfg_cpu_kernel kernel, dfg_op op,
                                   const dfg_attrs *attrs, int32_t n_in,
                                   check_tensor *const *in, int32_t n_out,
                                   check_tensor *const *out, void *workspace,
                                   int64_t workspace_bytes)
{
    dfg_type in_types[16], out_types[64];
    const void *in_data[16];
    void *out_data[64];
    for (int32_t i = 0; i < n_in; i++) {
        in_types[i] = in[i] ? in[i]->type : (dfg_type){DFG_F32, -1, {0}, 0};
        in_data[i] = in[i] ? in[i]->data : NULL;
    }
    for (int32_t i = 0; i < n_out; i++) {
        out_types[i] = out[i]->type;
        out_data[i] = out[i]->data;
    }
    dfg_kernel_args args = {.op = op, .attrs = attrs, .n_inputs = n_in,
                            .in_types = in_types, .in = in_data,
                            .n_outputs = n_out, .out_types = out_types,
                            .out = out_data, .workspace = workspace,
                            .workspace_bytes = workspace_bytes};
    return kernel(&args);
}

/* Runs op's shape rule: the output types for the given inputs, plain
 * (shape rules leave an output's layout to the caller: the layout pass
 * sets it in a graph). */
static inline void check_infer(dfg_op op, const dfg_attrs *attrs,
                               int32_t n_in, check_tensor *const *in,
                               int32_t n_out, dfg_type *out)
{
    for (int32_t i = 0; i < n_out; i++)
        out[i] = (dfg_type){0};
    dfg_type in_types[16];
    for (int32_t i = 0; i < n_in; i++)
        in_types[i] = in[i] ? in[i]->type : (dfg_type){DFG_F32, -1, {0}, 0};
    dfg_status st = dfg_op_get(op)->shape(attrs, in_types, n_in, out, n_out);
    if (st != DFG_OK)
        fail_msg("shape rule of %s: %s", dfg_op_get(op)->name,
                 dfg_last_error());
}

#endif
