/* Compile options for a backend's target (dfg_compile_options_for,
 * include/dfg/compile.h). */
#include "dfg/compile.h"

#include "error.h"
#include "graph.h"
#include "op_table.h"
#include "pass.h"

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
    if (options->precision != DFG_F32 && target->f32_storage_only)
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "compiling for the %s backend: precision %s (%s "
                         "activations beside f32 weights) is not supported "
                         "there, its products take operands of one dtype "
                         "(precision tf32 runs f32 products on tensor cores)",
                         target->backend, dfg_dtype_name(options->precision),
                         dfg_dtype_name(options->precision));
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
    if (!target->blocked_layouts)
        options->assign_layouts = 0;
    if (!target->fused_post_ops)
        options->fuse_operators = 0;
    if (options->blas_workspace_bytes == 0)
        options->blas_workspace_bytes = target->blas_workspace_bytes;
    options->target = target;
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
