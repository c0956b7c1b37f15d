/* arg_max and arg_min along one axis: the index (i64) of the first
 * extreme. The input is seen as [outer, n, inner]; NaN compares as never
 * greater nor smaller, so the first non-NaN extreme wins. */
#include "runtime/cpu/elementwise/dtype_access.h"
#include "util/error.h"
#include "runtime/cpu/kernels_extra.h"

dfg_status dfg_cpu_arg_reduce(const dfg_kernel_args *args)
{
    const dfg_type *t = &args->in_types[0];
    int32_t axis = args->attrs->axis < 0 ? args->attrs->axis + t->rank
                                         : args->attrs->axis;
    if (axis < 0 || axis >= t->rank || args->out_types[0].dtype != DFG_I64)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "%s: axis %d, rank %d",
                         dfg_op_get(args->op)->name, (int)args->attrs->axis,
                         (int)t->rank);
    int64_t outer = 1, inner = 1, n = t->shape[axis];
    for (int32_t d = 0; d < axis; d++)
        outer *= t->shape[d];
    for (int32_t d = axis + 1; d < t->rank; d++)
        inner *= t->shape[d];
    int want_max = args->op == DFG_OP_ARG_MAX;
    int integer = dfg_dtype_is_integer(t->dtype);
    int64_t *out = args->out[0];
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t i = 0; i < inner; i++) {
            int64_t base = o * n * inner + i, best = 0;
            double best_value = 0;
            for (int64_t k = 0; k < n; k++) {
                double v;
                if (integer) {
                    int64_t buf;
                    v = (double)*dfg_load_i64(args->in[0], t->dtype,
                                              base + k * inner, 1, 1, &buf);
                } else {
                    float buf;
                    v = *dfg_load_f32(args->in[0], t->dtype, base + k * inner,
                                      1, 1, &buf);
                }
                if (k == 0 || (want_max ? v > best_value : v < best_value) ||
                    (best_value != best_value && v == v)) {
                    best = k;
                    best_value = v;
                }
            }
            out[o * inner + i] = best;
        }
    }
    return DFG_OK;
}
