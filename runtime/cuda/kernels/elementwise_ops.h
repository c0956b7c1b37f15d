/* The elementwise ops of the CUDA backend, one output element at a time:
 * unary, binary (arithmetic and comparisons, numpy broadcasting), where,
 * cast and batch_norm. The parameter structs are filled on the host at
 * session creation (step_plan.c) and passed by value to the kernels
 * (elementwise.cu), which call the *_element functions below in a
 * grid-stride loop; the CPU tests call the same functions over every index
 * and compare with the CPU backend.
 *
 * Semantics follow the CPU kernels exactly: float dtypes compute in f32
 * with src/math/elementwise.h, integer dtypes in int64 with wrap-around
 * (integer division truncates, x / 0 and x mod 0 give 0). */
#ifndef DFG_CUDA_ELEMENTWISE_OPS_H
#define DFG_CUDA_ELEMENTWISE_OPS_H

#include "ir/op_table.h"
#include "math/broadcast.h"
#include "math/index_split.h"
#include "math/post_ops.h"
#include "runtime/cuda/kernels/element_access.h"

typedef struct dfg_cuda_unary {
    dfg_op op;
    dfg_dtype dtype;
    int64_t n;
    float alpha, clip_min, clip_max;
    int32_t approximate;
    int64_t clip_lo, clip_hi; /* integer clip bounds (ceil / floor, saturated) */
    /* 16-byte loads of `lanes` elements (dfg_cuda_vector_lanes: float
     * dtypes, n % lanes == 0, 16-byte aligned operands); 0: one by one */
    int lanes;
} dfg_cuda_unary;

typedef struct dfg_cuda_binary {
    dfg_op op;         /* add..min, or equal/less/greater (bool output) */
    dfg_dtype dtype;   /* of both inputs */
    dfg_dtype out_dtype;
    int64_t n;
    dfg_broadcast b;   /* operands 0 and 1 */
    int lanes;         /* as unary's: float arithmetic, no broadcast */
    int index32;       /* n fits 32-bit index arithmetic (index_split.h) */
} dfg_cuda_binary;

typedef struct dfg_cuda_where {
    int64_t element_size;
    int64_t n;
    dfg_broadcast b;   /* cond, x, y */
    int index32;       /* as binary's */
} dfg_cuda_where;

typedef struct dfg_cuda_cast {
    dfg_dtype from, to;
    int64_t n;
} dfg_cuda_cast;

typedef struct dfg_cuda_batch_norm {
    dfg_dtype dtype;
    int64_t n, channels, plane; /* plane: product of the dims after dim 1 */
    float epsilon;
    int index32;                /* as binary's */
} dfg_cuda_batch_norm;

DFG_HOST_DEVICE static inline float dfg_cuda_unary_f32(const dfg_cuda_unary *u,
                                                       float x)
{
    switch (u->op) {
    case DFG_OP_NEG: return -x;
    case DFG_OP_ABS: return fabsf(x);
    case DFG_OP_EXP: return expf(x);
    case DFG_OP_LOG: return logf(x);
    case DFG_OP_SQRT: return sqrtf(x);
    case DFG_OP_RECIPROCAL: return 1.0f / x;
    case DFG_OP_RELU: return dfg_relu(x);
    case DFG_OP_LEAKY_RELU: return dfg_leaky_relu(x, u->alpha);
    case DFG_OP_SIGMOID: return dfg_sigmoid(x);
    case DFG_OP_TANH: return dfg_tanh(x);
    case DFG_OP_GELU:
        return u->approximate == DFG_GELU_TANH ? dfg_gelu_tanh(x)
                                               : dfg_gelu_erf(x);
    case DFG_OP_ERF: return dfg_erf(x);
    case DFG_OP_SILU: return dfg_post_op_eltwise(DFG_POST_SILU, 0, 0, x);
    case DFG_OP_HARDSWISH:
        return dfg_post_op_eltwise(DFG_POST_HARDSWISH, 0, 0, x);
    case DFG_OP_CLIP: return dfg_clip(x, u->clip_min, u->clip_max);
    case DFG_OP_FLOOR: return floorf(x);
    case DFG_OP_CEIL: return ceilf(x);
    case DFG_OP_ROUND: return dfg_round_half_even(x);
    case DFG_OP_SIN: return sinf(x);
    case DFG_OP_COS: return cosf(x);
    case DFG_OP_TAN: return tanf(x);
    case DFG_OP_ASIN: return asinf(x);
    case DFG_OP_ACOS: return acosf(x);
    case DFG_OP_ATAN: return atanf(x);
    case DFG_OP_SINH: return sinhf(x);
    case DFG_OP_COSH: return coshf(x);
    case DFG_OP_ASINH: return asinhf(x);
    case DFG_OP_ACOSH: return acoshf(x);
    case DFG_OP_ATANH: return atanhf(x);
    default: return x;
    }
}

/* neg, abs, relu and clip on integers (the others are rejected when the
 * step is planned). */
DFG_HOST_DEVICE static inline int64_t
dfg_cuda_unary_i64(const dfg_cuda_unary *u, int64_t x)
{
    switch (u->op) {
    case DFG_OP_NEG: return (int64_t)(0 - (uint64_t)x);
    case DFG_OP_ABS: return x < 0 ? (int64_t)(0 - (uint64_t)x) : x;
    case DFG_OP_RELU: return x > 0 ? x : 0;
    case DFG_OP_CLIP:
        return x < u->clip_lo ? u->clip_lo : x > u->clip_hi ? u->clip_hi : x;
    default: return x;
    }
}

DFG_HOST_DEVICE static inline void
dfg_cuda_unary_element(const dfg_cuda_unary *u, const void *in, void *out,
                       int64_t i)
{
    if (dfg_cuda_is_integer(u->dtype))
        dfg_cuda_store_i64(out, u->dtype, i,
                           dfg_cuda_unary_i64(u, dfg_cuda_load_i64(in, u->dtype, i)));
    else
        dfg_cuda_store_f32(out, u->dtype, i,
                           dfg_cuda_unary_f32(u, dfg_cuda_load_f32(in, u->dtype, i)));
}

/* The vector kernels' body: the `lanes` elements of one 16-byte chunk
 * of u->dtype, widened, computed in f32 and rounded, in place. */
DFG_HOST_DEVICE static inline void
dfg_cuda_unary_vector(const dfg_cuda_unary *u, void *chunk, int lanes)
{
    for (int k = 0; k < lanes; k++)
        dfg_cuda_store_f32(chunk, u->dtype, k,
                           dfg_cuda_unary_f32(u, dfg_cuda_load_f32(chunk,
                                                                   u->dtype, k)));
}

DFG_HOST_DEVICE static inline float dfg_cuda_binary_f32(dfg_op op, float x,
                                                        float y)
{
    switch (op) {
    case DFG_OP_ADD: return dfg_add(x, y);
    case DFG_OP_SUB: return dfg_sub(x, y);
    case DFG_OP_MUL: return dfg_mul(x, y);
    case DFG_OP_DIV: return dfg_div(x, y);
    case DFG_OP_POW: return dfg_pow(x, y);
    case DFG_OP_MAX: return dfg_max(x, y);
    case DFG_OP_MIN: return dfg_min(x, y);
    case DFG_OP_EQUAL: return x == y;
    case DFG_OP_LESS: return x < y;
    case DFG_OP_GREATER: return x > y;
    case DFG_OP_MOD: return dfg_mod_f32(x, y, 1);
    case DFG_OP_FMOD: return dfg_mod_f32(x, y, 0);
    default: return 0.0f;
    }
}

/* As dfg_cuda_unary_vector: x op y over one chunk each, into x. */
DFG_HOST_DEVICE static inline void
dfg_cuda_binary_vector(const dfg_cuda_binary *p, void *x, const void *y,
                       int lanes)
{
    for (int k = 0; k < lanes; k++)
        dfg_cuda_store_f32(x, p->dtype, k,
                           dfg_cuda_binary_f32(p->op,
                                               dfg_cuda_load_f32(x, p->dtype, k),
                                               dfg_cuda_load_f32(y, p->dtype, k)));
}

/* Wrapping arithmetic through uint64 (signed overflow is undefined). */
DFG_HOST_DEVICE static inline int64_t dfg_cuda_binary_i64(dfg_op op, int64_t x,
                                                          int64_t y)
{
    switch (op) {
    case DFG_OP_ADD: return (int64_t)((uint64_t)x + (uint64_t)y);
    case DFG_OP_SUB: return (int64_t)((uint64_t)x - (uint64_t)y);
    case DFG_OP_MUL: return (int64_t)((uint64_t)x * (uint64_t)y);
    case DFG_OP_DIV:
        if (y == 0)
            return 0;
        if (y == -1) /* INT64_MIN / -1 traps */
            return (int64_t)(0 - (uint64_t)x);
        return x / y;
    case DFG_OP_MAX: return x > y ? x : y;
    case DFG_OP_MIN: return x < y ? x : y;
    case DFG_OP_EQUAL: return x == y;
    case DFG_OP_LESS: return x < y;
    case DFG_OP_GREATER: return x > y;
    case DFG_OP_MOD: return dfg_mod_i64(x, y, 1);
    case DFG_OP_FMOD: return dfg_mod_i64(x, y, 0);
    default: return 0;
    }
}

/* The element functions below take `narrow`: the plan's index32, a
 * constant in a kernel instantiated for it (math/index_split.h). */
DFG_HOST_DEVICE static inline void
dfg_cuda_binary_element(const dfg_cuda_binary *p, const void *a, const void *b,
                        void *out, int64_t i, int narrow)
{
    int64_t ia = dfg_broadcast_offset(&p->b, 0, i, narrow);
    int64_t ib = dfg_broadcast_offset(&p->b, 1, i, narrow);
    if (dfg_cuda_is_integer(p->dtype))
        dfg_cuda_store_i64(out, p->out_dtype, i,
                           dfg_cuda_binary_i64(p->op,
                                               dfg_cuda_load_i64(a, p->dtype, ia),
                                               dfg_cuda_load_i64(b, p->dtype, ib)));
    else
        dfg_cuda_store_f32(out, p->out_dtype, i,
                           dfg_cuda_binary_f32(p->op,
                                               dfg_cuda_load_f32(a, p->dtype, ia),
                                               dfg_cuda_load_f32(b, p->dtype, ib)));
}

DFG_HOST_DEVICE static inline void
dfg_cuda_where_element(const dfg_cuda_where *p, const uint8_t *cond,
                       const void *x, const void *y, void *out, int64_t i,
                       int narrow)
{
    if (cond[dfg_broadcast_offset(&p->b, 0, i, narrow)])
        dfg_cuda_copy_element(out, i, x,
                              dfg_broadcast_offset(&p->b, 1, i, narrow),
                              p->element_size);
    else
        dfg_cuda_copy_element(out, i, y,
                              dfg_broadcast_offset(&p->b, 2, i, narrow),
                              p->element_size);
}

DFG_HOST_DEVICE static inline void
dfg_cuda_cast_element(const dfg_cuda_cast *p, const void *in, void *out,
                      int64_t i)
{
    if (dfg_cuda_is_integer(p->from))
        dfg_cuda_store_i64(out, p->to, i, dfg_cuda_load_i64(in, p->from, i));
    else
        dfg_cuda_store_f32(out, p->to, i, dfg_cuda_load_f32(in, p->from, i));
}

/* (x - mean) / sqrt(var + eps) * scale + bias, folded per channel into
 * x * k + shift as the CPU kernel does (k in f32 here, in double there).
 * batch_norm_train (batch_norm_train_ops.h) maps x with it too, so that
 * a y recomputed from the stored statistics (passes/remat/remat.c) has the
 * same bits. */
DFG_HOST_DEVICE static inline void
dfg_cuda_batch_norm_affine(float scale, float bias, float mean, float var,
                           float epsilon, float *k, float *shift)
{
    *k = scale / sqrtf(var + epsilon);
    *shift = bias - mean * *k;
}

DFG_HOST_DEVICE static inline void dfg_cuda_batch_norm_element(
    const dfg_cuda_batch_norm *p, const void *x, const void *scale,
    const void *bias, const void *mean, const void *var, void *out, int64_t i,
    int narrow)
{
    int64_t rest = i;
    dfg_index_split(&rest, p->plane, narrow);
    int64_t c = dfg_index_split(&rest, p->channels, narrow);
    float k, shift;
    dfg_cuda_batch_norm_affine(dfg_cuda_load_f32(scale, p->dtype, c),
                               dfg_cuda_load_f32(bias, p->dtype, c),
                               dfg_cuda_load_f32(mean, p->dtype, c),
                               dfg_cuda_load_f32(var, p->dtype, c),
                               p->epsilon, &k, &shift);
    dfg_cuda_store_f32(out, p->dtype, i,
                       dfg_cuda_load_f32(x, p->dtype, i) * k + shift);
}

/* The epilogue of a product with fused post-ops (conv2d, matmul, gemm;
 * dfg_attrs.post_ops, docs/ops.md): y[i], plus bias[channel of i] where a
 * bias is given, then every post-op but the sum, in order (the product
 * accumulated onto the residual, beta 1). y and the bias are of dtype
 * (f32, f16 or bf16); the post-ops compute in f32. */
typedef struct dfg_cuda_epilogue {
    int64_t n, channels, inner; /* channel of i: (i / inner) % channels */
    int32_t n_ops;
    int32_t ops[DFG_MAX_POST_OPS];
    float alpha[DFG_MAX_POST_OPS], beta[DFG_MAX_POST_OPS];
    int bias;     /* the step's bias is added here (input 2) */
    int index32;  /* as binary's */
    dfg_dtype dtype;
} dfg_cuda_epilogue;

/* y[i] after the epilogue, in place. */
DFG_HOST_DEVICE static inline void
dfg_cuda_epilogue_element(const dfg_cuda_epilogue *p, const void *bias,
                          void *y, int64_t i, int narrow)
{
    float v = dfg_cuda_load_f32(y, p->dtype, i);
    if (bias) {
        int64_t rest = i;
        dfg_index_split(&rest, p->inner, narrow);
        v += dfg_cuda_load_f32(bias, p->dtype,
                               dfg_index_split(&rest, p->channels, narrow));
    }
    for (int32_t k = 0; k < p->n_ops; k++)
        v = dfg_post_op_eltwise(p->ops[k], p->alpha[k], p->beta[k], v);
    dfg_cuda_store_f32(y, p->dtype, i, v);
}

#endif
