/* Compile options for a backend's target (dfg_compile_options_for,
 * include/dfg/compile.h). */
#include "dfg/compile.h"

#include "error.h"

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
    return DFG_OK;
}
