/* Compile options for a backend's target (dfg_compile_options_for,
 * include/dfg/compile.h). */
#include "dfg/compile.h"

#include "ir/graph.h"
#include "ir/op_table.h"
#include "passes/pass.h"
#include "util/error.h"

dfg_status dfg_compile_options_for(dfg_compile_options *options,
                                   const dfg_target *target)
{
    if (!options || !target)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_compile_options_for: options and target must "
                         "not be NULL");
    if (options->alignment < target->min_alignment)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "compiling for the %s backend: alignment %llu is "
                         "below the %llu bytes it runs (--align %llu or more)",
                         target->backend,
                         (unsigned long long)options->alignment,
                         (unsigned long long)target->min_alignment,
                         (unsigned long long)target->min_alignment);
    dfg_status st = dfg_check_precision(options, target,
                                        "dfg_compile_options_for");
    if (st != DFG_OK)
        return st;
    if (options->allow_tf32 && !target->tf32)
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "compiling for the %s backend: precision tf32 is "
                         "not supported there (its f32 products are strict; "
                         "tf32 runs on the cuda backend)", target->backend);
    if (options->backend_workspace) {
        options->backend_workspace = target->workspace_rule;
        options->backend_workspace_for =
            target->workspace_rule ? target->backend : NULL;
    }
    if (!target->blocked_layouts && !target->conv_layout)
        options->assign_layouts = 0;
    if (!target->fused_post_ops)
        options->fuse_operators = 0;
    if (options->blas_workspace_bytes == 0)
        options->blas_workspace_bytes = target->blas_workspace_bytes;
    options->target = target;
    return DFG_OK;
}

dfg_status dfg_check_precision(const dfg_compile_options *o,
                               const dfg_target *target, const char *caller)
{
    const char *backend = target ? target->backend : "cpu";
    int half = o->precision == DFG_F16 || o->precision == DFG_BF16;
    if (o->precision != DFG_F32 && !half)
        return dfg_error(DFG_ERR_UNSUPPORTED, "%s: precision %s: f32, tf32, "
                         "f16 or bf16", caller, dfg_dtype_name(o->precision));
    if (half && o->allow_tf32)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "%s: precision tf32 and "
                         "%s exclude each other (tf32 is for f32 products)",
                         caller, dfg_dtype_name(o->precision));
    if (half && target && target->half_inference && !o->training)
        return DFG_OK; /* every tensor 16-bit (dfg_pass_half_inference) */
    if (half && target && target->half_inference)
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "%s: precision %s on the %s backend is for "
                         "inference only (every tensor 16-bit, weights "
                         "included); a training step there takes f32 (bf16 "
                         "activations beside f32 weights: its products take "
                         "operands of one dtype)", caller,
                         dfg_dtype_name(o->precision), backend);
    if (o->precision == DFG_F16 || (half && target && target->f32_storage_only))
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "%s: precision %s is not supported on the %s "
                         "backend: f16 and bf16 inference (16-bit products "
                         "and storage) run on the cuda backend (dfgc --device "
                         "cuda); the cpu backend stores bf16 activations "
                         "beside f32 weights (mixed precision), and no f16",
                         caller, dfg_dtype_name(o->precision), backend);
    return DFG_OK;
}

dfg_status dfg_pass_check_target(const dfg_graph *graph,
                                 const dfg_target *target)
{
    if (!target || !target->supports_op)
        return DFG_OK;
    for (int32_t i = 0; i < graph->n_nodes; i++) {
        const dfg_ir_node *n = &graph->nodes[i];
        if (!n->dead && !target->supports_op((int32_t)n->op))
            return dfg_error(DFG_ERR_UNSUPPORTED,
                             "node '%s': the %s backend has no kernel for "
                             "%s", n->name, target->backend,
                             dfg_op_get(n->op)->name);
    }
    return DFG_OK;
}
