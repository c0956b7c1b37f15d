/* Test-side helpers for the elementwise kernel tests: reading any dtype's
 * element, filling tensors with chosen value sets, numpy's broadcast rule
 * written out directly, and integer results wrapped to a dtype. Written
 * independently of runtime/cpu so that the kernels are checked against
 * something else than themselves. */
#ifndef DFG_TEST_ELEMENTWISE_REFERENCE_H
#define DFG_TEST_ELEMENTWISE_REFERENCE_H

#include "tests/runtime_cpu/cpu_kernel_check.h"

static inline int ref_is_float(dfg_dtype dtype)
{
    return dtype == DFG_F32 || dtype == DFG_F16 || dtype == DFG_BF16 ||
           dtype == DFG_F64;
}

/* Element i of an integer or bool tensor. */
static inline int64_t ref_get_int(const check_tensor *x, int64_t i)
{
    switch (x->type.dtype) {
    case DFG_I32: return ((const int32_t *)x->data)[i];
    case DFG_I64: return ((const int64_t *)x->data)[i];
    case DFG_I8: return ((const int8_t *)x->data)[i];
    case DFG_I16: return ((const int16_t *)x->data)[i];
    case DFG_U16: return ((const uint16_t *)x->data)[i];
    default: return ((const uint8_t *)x->data)[i];
    }
}

static inline double ref_get(const check_tensor *x, int64_t i)
{
    return ref_is_float(x->type.dtype) ? check_get(x, i)
                                       : (double)ref_get_int(x, i);
}

/* Writes v into element i (floats rounded by the conversions, which
 * test_math_elementwise checks on their own; integers wrapped). */
static inline void ref_set(check_tensor *x, int64_t i, double v)
{
    switch (x->type.dtype) {
    case DFG_F32: ((float *)x->data)[i] = (float)v; break;
    case DFG_F16: ((uint16_t *)x->data)[i] = dfg_f32_to_f16((float)v); break;
    case DFG_BF16: ((uint16_t *)x->data)[i] = dfg_f32_to_bf16((float)v); break;
    case DFG_F64: ((double *)x->data)[i] = v; break;
    case DFG_I32: ((int32_t *)x->data)[i] = (int32_t)(int64_t)v; break;
    case DFG_I64: ((int64_t *)x->data)[i] = (int64_t)v; break;
    case DFG_I8: ((int8_t *)x->data)[i] = (int8_t)(int64_t)v; break;
    case DFG_I16: ((int16_t *)x->data)[i] = (int16_t)(int64_t)v; break;
    case DFG_U16: ((uint16_t *)x->data)[i] = (uint16_t)(int64_t)v; break;
    default: ((uint8_t *)x->data)[i] = (uint8_t)(int64_t)v; break;
    }
}

/* A tensor of small integers in [lo, hi] (stored in any dtype), so that
 * comparisons meet equal values. */
static inline check_tensor ref_small_ints(dfg_type t, int lo, int hi)
{
    check_tensor x = check_empty(t);
    for (int64_t i = 0; i < x.numel; i++)
        ref_set(&x, i, lo + (int)(check_next() % (uint64_t)(hi - lo + 1)));
    return x;
}

/* A float tensor with values uniform in +-scale (never zero). */
static inline check_tensor ref_scaled(dfg_type t, double scale, int positive)
{
    check_tensor x = check_empty(t);
    for (int64_t i = 0; i < x.numel; i++) {
        double v = check_uniform() * scale;
        ref_set(&x, i, positive ? fabs(v) : v);
    }
    return x;
}

static inline check_tensor ref_copy(const check_tensor *x)
{
    check_tensor y = check_empty(x->type);
    memcpy(y.data, x->data, (size_t)x->numel * dfg_dtype_size(x->type.dtype));
    return y;
}

/* Offset in x of output element `linear` of shape out, by numpy's rule. */
static inline int64_t ref_broadcast_offset(const dfg_type *out,
                                           const dfg_type *x, int64_t linear)
{
    int64_t offset = 0, stride = 1;
    for (int32_t i = out->rank - 1; i >= 0; i--) {
        int64_t index = linear % out->shape[i];
        linear /= out->shape[i];
        int32_t j = i - (out->rank - x->rank);
        if (j < 0)
            continue;
        if (x->shape[j] != 1)
            offset += index * stride;
        stride *= x->shape[j];
    }
    return offset;
}

/* The broadcast output shape of a and b (assumed compatible). */
static inline dfg_type ref_broadcast_type(dfg_dtype dtype, const dfg_type *a,
                                          const dfg_type *b)
{
    dfg_type out = {dtype, a->rank > b->rank ? a->rank : b->rank, {0}, 0};
    for (int32_t i = 0; i < out.rank; i++) {
        int32_t ia = i - (out.rank - a->rank), ib = i - (out.rank - b->rank);
        int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
        out.shape[i] = da == 1 ? db : da;
    }
    return out;
}

/* An int64 result as the dtype stores it (two's-complement wrap). */
static inline int64_t ref_wrap(dfg_dtype dtype, int64_t v)
{
    switch (dtype) {
    case DFG_I32: return (int32_t)(uint32_t)(uint64_t)v;
    case DFG_U8: return (uint8_t)(uint64_t)v;
    case DFG_I8: return (int8_t)(uint8_t)(uint64_t)v;
    case DFG_I16: return (int16_t)(uint16_t)(uint64_t)v;
    case DFG_U16: return (uint16_t)(uint64_t)v;
    case DFG_BOOL: return v != 0;
    default: return v;
    }
}

#endif
