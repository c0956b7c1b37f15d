/* cast: every pair of dtypes. The source's domain decides the path (see
 * dtype_access.h for the conversions): float sources go through f32 (exact
 * for f16 and bf16), integer sources through int64 (exact); a cast from or
 * to f64 goes through double. */
#include "runtime/cpu/elementwise/dtype_access.h"
#include "util/error.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/parallel.h"

typedef struct cast_ctx {
    dfg_dtype from, to;
    const void *in;
    void *out;
} cast_ctx;

static void cast_range(void *opaque, int64_t start, int64_t n)
{
    const cast_ctx *c = opaque;
    if (c->from == DFG_F64 || c->to == DFG_F64) {
        double buf[DFG_CPU_BLOCK];
        dfg_load_f64(c->in, c->from, start, n, buf);
        dfg_store_f64(c->out, c->to, start, n, buf);
    } else if (dfg_dtype_is_integer(c->from)) {
        int64_t buf[DFG_CPU_BLOCK];
        dfg_store_i64(c->out, c->to, start, n,
                      dfg_load_i64(c->in, c->from, start, 1, n, buf));
    } else {
        float buf[DFG_CPU_BLOCK];
        dfg_store_f32(c->out, c->to, start, n,
                      dfg_load_f32(c->in, c->from, start, 1, n, buf));
    }
}

dfg_status dfg_cpu_cast(const dfg_kernel_args *args)
{
    int64_t n = dfg_type_numel(&args->in_types[0]);
    dfg_dtype from = args->in_types[0].dtype, to = args->out_types[0].dtype;
    if (n < 0 || dfg_type_numel(&args->out_types[0]) != n ||
        (unsigned)from >= DFG_DTYPE_COUNT || (unsigned)to >= DFG_DTYPE_COUNT)
        return dfg_error(DFG_ERR_SHAPE, "cast: output type differs from input");
    cast_ctx c = {from, to, args->in[0], args->out[0]};
    dfg_cpu_parallel_ranges(n, DFG_CPU_BLOCK, cast_range, &c);
    return DFG_OK;
}
