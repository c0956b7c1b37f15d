/* Binary arithmetic (add, sub, mul, div, pow, max, min) and comparisons
 * (equal, less, greater -> bool) with numpy broadcasting. Float dtypes
 * compute in f32; integer dtypes exactly in int64 with two's-complement
 * wrap-around, integer division truncating like C (x / 0 gives 0 instead
 * of a trap). */
#include <math.h>

#include "runtime/cpu/elementwise/broadcast_walk.h"
#include "runtime/cpu/elementwise/dtype_access.h"
#include "util/error.h"
#include "runtime/cpu/kernels.h"
#include "math/elementwise.h"
#include "runtime/cpu/elementwise/vector_clones.h"

typedef struct binary_ctx {
    dfg_op op;
    dfg_dtype dtype; /* of both inputs */
    const void *a, *b;
    void *out;
} binary_ctx;

#define BINARY_LOOP(expr)                 \
    for (int64_t i = 0; i < n; i++) {     \
        x = a[i], y = b[i];               \
        o[i] = (expr);                    \
    }                                     \
    break

/* Wrapping arithmetic through uint64 (signed overflow is undefined in C). */
static int64_t wrap_add(int64_t x, int64_t y) { return (int64_t)((uint64_t)x + (uint64_t)y); }
static int64_t wrap_sub(int64_t x, int64_t y) { return (int64_t)((uint64_t)x - (uint64_t)y); }
static int64_t wrap_mul(int64_t x, int64_t y) { return (int64_t)((uint64_t)x * (uint64_t)y); }

static int64_t int_div(int64_t x, int64_t y)
{
    if (y == 0)
        return 0;
    if (y == -1) /* INT64_MIN / -1 traps on x86 */
        return wrap_sub(0, x);
    return x / y;
}

static void apply_integer(dfg_op op, const int64_t *a, const int64_t *b,
                          int64_t *o, int64_t n)
{
    int64_t x, y;
    switch (op) {
    case DFG_OP_ADD: BINARY_LOOP(wrap_add(x, y));
    case DFG_OP_SUB: BINARY_LOOP(wrap_sub(x, y));
    case DFG_OP_MUL: BINARY_LOOP(wrap_mul(x, y));
    case DFG_OP_DIV: BINARY_LOOP(int_div(x, y));
    case DFG_OP_MAX: BINARY_LOOP(x > y ? x : y);
    case DFG_OP_MIN: BINARY_LOOP(x < y ? x : y);
    default: break;
    }
}

static void compare_float(dfg_op op, const float *a, const float *b,
                          uint8_t *o, int64_t n)
{
    float x, y;
    switch (op) {
    case DFG_OP_EQUAL: BINARY_LOOP(x == y);
    case DFG_OP_LESS: BINARY_LOOP(x < y);
    case DFG_OP_GREATER: BINARY_LOOP(x > y);
    default: break;
    }
}

static void compare_integer(dfg_op op, const int64_t *a, const int64_t *b,
                            uint8_t *o, int64_t n)
{
    int64_t x, y;
    switch (op) {
    case DFG_OP_EQUAL: BINARY_LOOP(x == y);
    case DFG_OP_LESS: BINARY_LOOP(x < y);
    case DFG_OP_GREATER: BINARY_LOOP(x > y);
    default: break;
    }
}

#undef BINARY_LOOP

/* A run of f32 operands stepping by sa and sb (0 or 1): an f32 tensor's
 * run in place, with no block buffers, or a block widened from f16/bf16.
 * A loop per stride pattern, which the compiler vectorizes, a broadcast
 * operand (a scalar, the per-channel s[c] of a squeeze-excite block, a
 * bias b[c]) held in a register. */
#define F32_RUN(expr)                                   \
    do {                                                \
        if (sa && sb) {                                 \
            for (int64_t i = 0; i < n; i++) {           \
                x = a[i], y = b[i];                     \
                o[i] = (expr);                          \
            }                                           \
        } else if (sa) {                                \
            y = b[0];                                   \
            for (int64_t i = 0; i < n; i++) {           \
                x = a[i];                               \
                o[i] = (expr);                          \
            }                                           \
        } else if (sb) {                                \
            x = a[0];                                   \
            for (int64_t i = 0; i < n; i++) {           \
                y = b[i];                               \
                o[i] = (expr);                          \
            }                                           \
        } else {                                        \
            x = a[0], y = b[0];                         \
            float r = (expr);                           \
            for (int64_t i = 0; i < n; i++)             \
                o[i] = r;                               \
        }                                               \
    } while (0);                                        \
    break

/* pow with a constant exponent of 2 or 0.5 (a variance, a norm) is x * x
 * or a square root, both exact like powf; -inf ** 0.5 is +inf and
 * -0 ** 0.5 is +0, where sqrtf would give NaN and -0. */
DFG_VECTOR_LOOP_RETURNING(int, pow_by_constant,
                          (const float *a, float y, float *o, int64_t n),
                          (a, y, o, n))
{
    if (y == 2.0f) {
        for (int64_t i = 0; i < n; i++)
            o[i] = a[i] * a[i];
        return 1;
    }
    if (y == 0.5f) {
        for (int64_t i = 0; i < n; i++)
            o[i] = a[i] == -INFINITY ? INFINITY : sqrtf(a[i]) + 0.0f;
        return 1;
    }
    return 0;
}

DFG_VECTOR_LOOP(f32_run,
                (dfg_op op, const float *a, int64_t sa, const float *b,
                 int64_t sb, float *o, int64_t n),
                (op, a, sa, b, sb, o, n))
{
    float x, y;
    if (op == DFG_OP_POW && sa && !sb && pow_by_constant(a, b[0], o, n))
        return;
    switch (op) {
    case DFG_OP_ADD: F32_RUN(dfg_add(x, y));
    case DFG_OP_SUB: F32_RUN(dfg_sub(x, y));
    case DFG_OP_MUL: F32_RUN(dfg_mul(x, y));
    case DFG_OP_DIV: F32_RUN(dfg_div(x, y));
    case DFG_OP_POW: F32_RUN(dfg_pow(x, y));
    case DFG_OP_MAX: F32_RUN(dfg_max(x, y));
    case DFG_OP_MIN: F32_RUN(dfg_min(x, y));
    default: break;
    }
}

#undef F32_RUN

static void arithmetic_run(void *opaque, int64_t out_offset,
                           const int64_t *offsets, const int64_t *strides,
                           int64_t n)
{
    const binary_ctx *c = opaque;
    if (c->dtype == DFG_F32) {
        f32_run(c->op, (const float *)c->a + offsets[0], strides[0],
                (const float *)c->b + offsets[1], strides[1],
                (float *)c->out + out_offset, n);
        return;
    }
    for (int64_t j = 0; j < n; j += DFG_CPU_BLOCK) {
        int64_t m = n - j < DFG_CPU_BLOCK ? n - j : DFG_CPU_BLOCK;
        int64_t oa = offsets[0] + j * strides[0], ob = offsets[1] + j * strides[1];
        if (dfg_dtype_is_integer(c->dtype)) {
            int64_t buf_a[DFG_CPU_BLOCK], buf_b[DFG_CPU_BLOCK], buf_o[DFG_CPU_BLOCK];
            const int64_t *a = dfg_load_i64(c->a, c->dtype, oa, strides[0], m, buf_a);
            const int64_t *b = dfg_load_i64(c->b, c->dtype, ob, strides[1], m, buf_b);
            int64_t *o = dfg_i64_target(c->out, c->dtype, out_offset + j, buf_o);
            apply_integer(c->op, a, b, o, m);
            dfg_store_i64(c->out, c->dtype, out_offset + j, m, o);
        } else {
            float buf_a[DFG_CPU_BLOCK], buf_b[DFG_CPU_BLOCK], buf_o[DFG_CPU_BLOCK];
            const float *a = dfg_load_f32(c->a, c->dtype, oa, strides[0], m, buf_a);
            const float *b = dfg_load_f32(c->b, c->dtype, ob, strides[1], m, buf_b);
            float *o = dfg_f32_target(c->out, c->dtype, out_offset + j, buf_o);
            f32_run(c->op, a, 1, b, 1, o, m); /* f16, bf16 widened */
            dfg_store_f32(c->out, c->dtype, out_offset + j, m, o);
        }
    }
}

static void compare_run(void *opaque, int64_t out_offset,
                        const int64_t *offsets, const int64_t *strides,
                        int64_t n)
{
    const binary_ctx *c = opaque;
    for (int64_t j = 0; j < n; j += DFG_CPU_BLOCK) {
        int64_t m = n - j < DFG_CPU_BLOCK ? n - j : DFG_CPU_BLOCK;
        int64_t oa = offsets[0] + j * strides[0], ob = offsets[1] + j * strides[1];
        uint8_t *o = (uint8_t *)c->out + out_offset + j;
        if (dfg_dtype_is_integer(c->dtype)) {
            int64_t buf_a[DFG_CPU_BLOCK], buf_b[DFG_CPU_BLOCK];
            compare_integer(c->op,
                            dfg_load_i64(c->a, c->dtype, oa, strides[0], m, buf_a),
                            dfg_load_i64(c->b, c->dtype, ob, strides[1], m, buf_b),
                            o, m);
        } else {
            float buf_a[DFG_CPU_BLOCK], buf_b[DFG_CPU_BLOCK];
            compare_float(c->op,
                          dfg_load_f32(c->a, c->dtype, oa, strides[0], m, buf_a),
                          dfg_load_f32(c->b, c->dtype, ob, strides[1], m, buf_b),
                          o, m);
        }
    }
}

static dfg_status run_broadcast(const dfg_kernel_args *args,
                                dfg_broadcast_run_fn run)
{
    dfg_broadcast b;
    dfg_status st = dfg_cpu_broadcast_init(args, 0, 2, &b);
    if (st != DFG_OK)
        return st;
    binary_ctx c = {args->op, args->in_types[0].dtype, args->in[0], args->in[1],
                    args->out[0]};
    dfg_cpu_broadcast_walk(&b, run, &c);
    return DFG_OK;
}

static dfg_status check_dtypes(const dfg_kernel_args *args, dfg_dtype out)
{
    dfg_dtype dtype = args->in_types[0].dtype;
    if (args->in_types[1].dtype != dtype || args->out_types[0].dtype != out)
        return dfg_error(DFG_ERR_DTYPE, "operands of %s have dtypes %s, %s -> %s",
                         dfg_op_get(args->op)->name, dfg_dtype_name(dtype),
                         dfg_dtype_name(args->in_types[1].dtype),
                         dfg_dtype_name(args->out_types[0].dtype));
    return DFG_OK;
}

dfg_status dfg_cpu_binary(const dfg_kernel_args *args)
{
    dfg_dtype dtype = args->in_types[0].dtype;
    dfg_status st = check_dtypes(args, dtype);
    if (st != DFG_OK)
        return st;
    if (args->op < DFG_OP_ADD || args->op > DFG_OP_MIN || dtype == DFG_BOOL ||
        (dfg_dtype_is_integer(dtype) && args->op == DFG_OP_POW))
        return dfg_error(DFG_ERR_UNSUPPORTED, "%s on %s has no CPU kernel",
                         dfg_op_get(args->op)->name, dfg_dtype_name(dtype));
    return run_broadcast(args, arithmetic_run);
}

dfg_status dfg_cpu_compare(const dfg_kernel_args *args)
{
    dfg_status st = check_dtypes(args, DFG_BOOL);
    if (st != DFG_OK)
        return st;
    if (args->op != DFG_OP_EQUAL && args->op != DFG_OP_LESS &&
        args->op != DFG_OP_GREATER)
        return dfg_error(DFG_ERR_UNSUPPORTED, "%s is not a comparison",
                         dfg_op_get(args->op)->name);
    return run_broadcast(args, compare_run);
}
