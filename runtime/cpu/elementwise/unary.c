/* Unary elementwise ops. Float dtypes compute in f32 with the shared
 * per-element math (src/math/elementwise.h), except exp, sigmoid, tanh,
 * erf and most of GELU, whose branch-free forms (f32_math.h) let the loops
 * vectorize; neg, abs,
 * relu and clip also run on integer dtypes, exactly, in int64 (neg and abs wrap like C's
 * unsigned arithmetic: abs(INT32_MIN) stays INT32_MIN). */
#include <string.h>

#include "runtime/cpu/elementwise/dtype_access.h"
#include "util/error.h"
#include "runtime/cpu/elementwise/f32_math.h"
#include "runtime/cpu/kernels.h"
#include "math/elementwise.h"
#include "runtime/cpu/parallel.h"
#include "runtime/cpu/elementwise/vector_clones.h"

typedef struct unary_ctx {
    const dfg_attrs *attrs;
    dfg_op op;
    dfg_dtype dtype;
    const void *in;
    void *out;
    int64_t clip_lo, clip_hi; /* integer clip bounds */
} unary_ctx;

#define UNARY_LOOP(expr)              \
    for (int64_t i = 0; i < n; i++) { \
        x = v[i];                     \
        o[i] = (expr);                \
    }                                 \
    break

/* GELU (erf form) below x = -1: 0.5 x erfc(z), z = -x / sqrt 2 > 0.707,
 * as erfc(z) = t exp(-z^2 + P(t)), t = 1 / (1 + z / 2), P of degree 8
 * fitted to log(erfc(z) / t) + z^2 on Chebyshev nodes of t for z in
 * [0.707, 10] (erfc's relative error at most 1.4e-8 in double; beyond
 * z = 10 the result is below f32's least normal). Branch-free (z is
 * clamped where x >= -1, whose lanes the caller does not use), so that
 * a loop over it vectorizes; -inf gives NaN (-inf times 0), NaN stays. */
static inline float gelu_erf_tail(float x)
{
    float z = x * -0.70710678118654752f;
    z = z > 0.70710678f ? z : 0.70710678f;
    float t = 1.0f / (1.0f + 0.5f * z);
    float p = -0.16171118321158934f;
    p = p * t + 0.3813262560313488f;
    p = p * t - 0.0757453448622939f;
    p = p * t - 0.3615255818208178f;
    p = p * t + 0.06853558127880201f;
    p = p * t + 0.029799388596610136f;
    p = p * t + 0.3852990368351666f;
    p = p * t + 0.9989484066586596f;
    p = p * t - 1.2654676887086647f;
    return 0.5f * x * (t * dfg_f32_exp(p - z * z));
}

/* GELU (erf form) over a run: 0.5 x (1 + erf(x / sqrt 2)) with the
 * vectorised erf where 1 + erf keeps its precision (x >= -1: it is at
 * least 0.317, a few ulps), and the erfc form (gelu_erf_tail) for the
 * rest, NaN included, in chunks that hold any. Chunks go through a copy,
 * so that out may be in (a step in place). */
#define GELU_CHUNK 64
DFG_VECTOR_LOOP(gelu_erf_run, (const float *in, float *out, int64_t n),
                (in, out, n))
{
    float x[GELU_CHUNK];
    for (int64_t at = 0; at < n; at += GELU_CHUNK) {
        int64_t m = n - at < GELU_CHUNK ? n - at : GELU_CHUNK;
        memcpy(x, in + at, (size_t)m * sizeof *x);
        float *o = out + at;
        int tail = 0;
        for (int64_t i = 0; i < m; i++) {
            o[i] = 0.5f * x[i] *
                   (1.0f + dfg_f32_erf(x[i] * 0.70710678118654752f));
            tail |= !(x[i] >= -1.0f);
        }
        for (int64_t i = 0; tail && i < m; i++)
            o[i] = x[i] >= -1.0f ? o[i] : gelu_erf_tail(x[i]);
    }
}

DFG_VECTOR_LOOP(apply_float,
                (const unary_ctx *c, const float *v, float *o, int64_t n),
                (c, v, o, n))
{
    const dfg_attrs *a = c->attrs;
    float x;
    switch (c->op) {
    case DFG_OP_NEG: UNARY_LOOP(-x);
    case DFG_OP_ABS: UNARY_LOOP(fabsf(x));
    case DFG_OP_EXP: UNARY_LOOP(dfg_f32_exp(x));
    case DFG_OP_LOG: UNARY_LOOP(logf(x));
    case DFG_OP_SQRT: UNARY_LOOP(sqrtf(x));
    case DFG_OP_RECIPROCAL: UNARY_LOOP(1.0f / x);
    case DFG_OP_RELU: UNARY_LOOP(dfg_relu(x));
    case DFG_OP_LEAKY_RELU: UNARY_LOOP(dfg_leaky_relu(x, a->alpha));
    case DFG_OP_SIGMOID: UNARY_LOOP(dfg_f32_sigmoid(x));
    case DFG_OP_TANH: UNARY_LOOP(dfg_f32_tanh(x));
    case DFG_OP_GELU:
        if (a->approximate == DFG_GELU_TANH) {
            UNARY_LOOP(dfg_gelu_tanh(x));
        }
        gelu_erf_run(v, o, n);
        break;
    case DFG_OP_ERF: UNARY_LOOP(dfg_f32_erf(x));
    case DFG_OP_CLIP: UNARY_LOOP(dfg_clip(x, a->clip_min, a->clip_max));
    default: break;
    }
}

static void apply_integer(const unary_ctx *c, const int64_t *v, int64_t *o,
                          int64_t n)
{
    int64_t x;
    switch (c->op) {
    case DFG_OP_NEG: UNARY_LOOP((int64_t)(0 - (uint64_t)x));
    case DFG_OP_ABS: UNARY_LOOP(x < 0 ? (int64_t)(0 - (uint64_t)x) : x);
    case DFG_OP_RELU: UNARY_LOOP(x > 0 ? x : 0);
    case DFG_OP_CLIP:
        UNARY_LOOP(x < c->clip_lo ? c->clip_lo : x > c->clip_hi ? c->clip_hi : x);
    default: break;
    }
}

#undef UNARY_LOOP

static void unary_range(void *opaque, int64_t start, int64_t n)
{
    const unary_ctx *c = opaque;
    if (dfg_dtype_is_integer(c->dtype)) {
        int64_t buf_in[DFG_CPU_BLOCK], buf_out[DFG_CPU_BLOCK];
        const int64_t *v = dfg_load_i64(c->in, c->dtype, start, 1, n, buf_in);
        int64_t *o = dfg_i64_target(c->out, c->dtype, start, buf_out);
        apply_integer(c, v, o, n);
        dfg_store_i64(c->out, c->dtype, start, n, o);
    } else {
        float buf_in[DFG_CPU_BLOCK], buf_out[DFG_CPU_BLOCK];
        const float *v = dfg_load_f32(c->in, c->dtype, start, 1, n, buf_in);
        float *o = dfg_f32_target(c->out, c->dtype, start, buf_out);
        apply_float(c, v, o, n);
        dfg_store_f32(c->out, c->dtype, start, n, o);
    }
}

static int integer_op(dfg_op op)
{
    return op == DFG_OP_NEG || op == DFG_OP_ABS || op == DFG_OP_RELU ||
           op == DFG_OP_CLIP;
}

dfg_status dfg_cpu_unary(const dfg_kernel_args *args)
{
    dfg_dtype dtype = args->in_types[0].dtype;
    int64_t n = dfg_type_numel(&args->in_types[0]);
    if (args->out_types[0].dtype != dtype || n < 0 ||
        dfg_type_numel(&args->out_types[0]) != n)
        return dfg_error(DFG_ERR_SHAPE, "%s: output type differs from input",
                         dfg_op_get(args->op)->name);
    if (args->op < DFG_OP_NEG || args->op > DFG_OP_CLIP || dtype == DFG_BOOL ||
        (dfg_dtype_is_integer(dtype) && !integer_op(args->op)))
        return dfg_error(DFG_ERR_UNSUPPORTED, "%s on %s has no CPU kernel",
                         dfg_op_get(args->op)->name, dfg_dtype_name(dtype));
    unary_ctx c = {args->attrs, args->op, dtype, args->in[0], args->out[0],
                   dfg_clip_integer_bound(args->attrs->clip_min, 0),
                   dfg_clip_integer_bound(args->attrs->clip_max, 1)};
    dfg_cpu_parallel_ranges(n, DFG_CPU_BLOCK, unary_range, &c);
    return DFG_OK;
}
