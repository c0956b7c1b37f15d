/* Rounding and trigonometric unary ops on float dtypes, computed in f32:
 * floor, ceil, round (half to even, as ONNX says), sin, cos, tan, asin,
 * acos, atan, sinh, cosh, asinh, acosh, atanh. */
#include <math.h>

#include "runtime/cpu/elementwise/dtype_access.h"
#include "util/error.h"
#include "runtime/cpu/kernels_extra.h"
#include "math/elementwise.h"
#include "runtime/cpu/parallel.h"

typedef float (*math_fn)(float);

static math_fn function_of(dfg_op op)
{
    switch (op) {
    case DFG_OP_FLOOR: return floorf;
    case DFG_OP_CEIL: return ceilf;
    case DFG_OP_ROUND: return dfg_round_half_even;
    case DFG_OP_SIN: return sinf;
    case DFG_OP_COS: return cosf;
    case DFG_OP_TAN: return tanf;
    case DFG_OP_ASIN: return asinf;
    case DFG_OP_ACOS: return acosf;
    case DFG_OP_ATAN: return atanf;
    case DFG_OP_SINH: return sinhf;
    case DFG_OP_COSH: return coshf;
    case DFG_OP_ASINH: return asinhf;
    case DFG_OP_ACOSH: return acoshf;
    case DFG_OP_ATANH: return atanhf;
    default: return NULL;
    }
}

typedef struct math_ctx {
    math_fn fn;
    dfg_dtype dtype;
    const void *in;
    void *out;
} math_ctx;

static void math_range(void *opaque, int64_t start, int64_t n)
{
    const math_ctx *c = opaque;
    float buf_in[DFG_CPU_BLOCK], buf_out[DFG_CPU_BLOCK];
    const float *v = dfg_load_f32(c->in, c->dtype, start, 1, n, buf_in);
    float *o = dfg_f32_target(c->out, c->dtype, start, buf_out);
    for (int64_t i = 0; i < n; i++)
        o[i] = c->fn(v[i]);
    dfg_store_f32(c->out, c->dtype, start, n, o);
}

dfg_status dfg_cpu_unary_math(const dfg_kernel_args *args)
{
    math_fn fn = function_of(args->op);
    dfg_dtype dtype = args->in_types[0].dtype;
    if (!fn || dfg_dtype_is_integer(dtype) ||
        args->out_types[0].dtype != dtype)
        return dfg_error(DFG_ERR_UNSUPPORTED, "%s on %s has no CPU kernel",
                         dfg_op_get(args->op)->name, dfg_dtype_name(dtype));
    math_ctx c = {fn, dtype, args->in[0], args->out[0]};
    dfg_cpu_parallel_ranges(dfg_type_numel(&args->out_types[0]), DFG_CPU_BLOCK,
                            math_range, &c);
    return DFG_OK;
}
