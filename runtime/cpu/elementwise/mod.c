/* mod and fmod with numpy broadcasting. mod takes the divisor's sign
 * (Python's %), fmod the dividend's (C's fmod); floats compute in f32,
 * integers exactly in int64, and x mod 0 gives 0 instead of a trap. */
#include <math.h>

#include "runtime/cpu/elementwise/broadcast_walk.h"
#include "runtime/cpu/elementwise/dtype_access.h"
#include "util/error.h"
#include "runtime/cpu/kernels_extra.h"
#include "math/elementwise.h"

typedef struct mod_ctx {
    int python; /* the divisor's sign */
    dfg_dtype dtype;
    const void *a, *b;
    void *out;
} mod_ctx;

static void mod_run(void *opaque, int64_t out_offset, const int64_t *offsets,
                    const int64_t *strides, int64_t n)
{
    const mod_ctx *c = opaque;
    for (int64_t j = 0; j < n; j += DFG_CPU_BLOCK) {
        int64_t m = n - j < DFG_CPU_BLOCK ? n - j : DFG_CPU_BLOCK;
        int64_t oa = offsets[0] + j * strides[0], ob = offsets[1] + j * strides[1];
        if (dfg_dtype_is_integer(c->dtype)) {
            int64_t ba[DFG_CPU_BLOCK], bb[DFG_CPU_BLOCK], bo[DFG_CPU_BLOCK];
            const int64_t *a = dfg_load_i64(c->a, c->dtype, oa, strides[0], m, ba);
            const int64_t *b = dfg_load_i64(c->b, c->dtype, ob, strides[1], m, bb);
            int64_t *o = dfg_i64_target(c->out, c->dtype, out_offset + j, bo);
            for (int64_t i = 0; i < m; i++)
                o[i] = dfg_mod_i64(a[i], b[i], c->python);
            dfg_store_i64(c->out, c->dtype, out_offset + j, m, o);
        } else {
            float ba[DFG_CPU_BLOCK], bb[DFG_CPU_BLOCK], bo[DFG_CPU_BLOCK];
            const float *a = dfg_load_f32(c->a, c->dtype, oa, strides[0], m, ba);
            const float *b = dfg_load_f32(c->b, c->dtype, ob, strides[1], m, bb);
            float *o = dfg_f32_target(c->out, c->dtype, out_offset + j, bo);
            for (int64_t i = 0; i < m; i++)
                o[i] = dfg_mod_f32(a[i], b[i], c->python);
            dfg_store_f32(c->out, c->dtype, out_offset + j, m, o);
        }
    }
}

dfg_status dfg_cpu_mod(const dfg_kernel_args *args)
{
    dfg_dtype dtype = args->in_types[0].dtype;
    if (args->in_types[1].dtype != dtype || args->out_types[0].dtype != dtype ||
        dtype == DFG_BOOL)
        return dfg_error(DFG_ERR_DTYPE, "%s: operands %s, %s -> %s",
                         dfg_op_get(args->op)->name, dfg_dtype_name(dtype),
                         dfg_dtype_name(args->in_types[1].dtype),
                         dfg_dtype_name(args->out_types[0].dtype));
    dfg_broadcast b;
    dfg_status st = dfg_cpu_broadcast_init(args, 0, 2, &b);
    if (st != DFG_OK)
        return st;
    mod_ctx c = {args->op == DFG_OP_MOD, dtype, args->in[0], args->in[1],
                 args->out[0]};
    dfg_cpu_broadcast_walk(&b, mod_run, &c);
    return DFG_OK;
}
