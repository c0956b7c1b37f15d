/* dfg_evaluate_op (runtime/evaluate.h): one kernel call on the caller's
 * buffers, its arguments built as a session builds a step's. */
#include "runtime/evaluate.h"

#include "dfg/collective.h"
#include "runtime/cpu/kernels.h"
#include "util/error.h"
#include "util/memory.h"

dfg_status dfg_evaluate_op(dfg_op op, const dfg_attrs *attrs,
                           const dfg_type *in_types, const void *const *in,
                           int32_t n_in, const dfg_type *out_types,
                           void *const *out, int32_t n_out,
                           const dfg_allocator *allocator)
{
    const dfg_op_info *info = dfg_op_get(op);
    if (!info)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_evaluate_op: op %d is not an op", (int)op);
    int64_t workspace = info->workspace
                            ? info->workspace(attrs, in_types, n_in,
                                              out_types, n_out)
                            : 0;
    /* As in a session without a communicator: the functions NULL. */
    const dfg_collective no_collective = {0};
    dfg_kernel_args args = {
        .op = op,
        .attrs = attrs,
        .n_inputs = n_in,
        .in_types = in_types,
        .in = in,
        .n_outputs = n_out,
        .out_types = out_types,
        .out = out,
        .workspace_bytes = workspace > 0 ? workspace : 0,
        .collective = &no_collective,
        .layout_isa = "",
    };
    dfg_cpu_kernel kernel = dfg_cpu_kernel_for_step(&args);
    if (!kernel)
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "the CPU backend has no kernel for op '%s'",
                         info->name);
    dfg_allocator a = dfg_allocator_or_default(allocator);
    if (args.workspace_bytes > 0 &&
        !(args.workspace = dfg_alloc(&a, (size_t)args.workspace_bytes)))
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "%s: out of memory for %lld bytes of workspace",
                         info->name, (long long)args.workspace_bytes);
    dfg_status st = kernel(&args);
    dfg_free(&a, args.workspace);
    return st;
}
