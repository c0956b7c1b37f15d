/* dfg_compile's options: their defaults (dfg_compile_options_init), the
 * checks dfg_compile makes of them before any pass runs, and a backend
 * target's (dfg_compile_options_for, include/dfg/compile.h). */
#include "dfg/compile.h"

#include <string.h>
#include "ir/graph.h"
#include "ir/op_table.h"
#include "passes/pass.h"
#include "runtime/cpu_workspace_rule.h"
#include "util/error.h"

void dfg_compile_options_init(dfg_compile_options *options)
{
    if (!options)
        return;
    memset(options, 0, sizeof *options);
    options->planner = DFG_PLANNER_SMALLEST;
    options->alignment = 256;
    options->fold_constants = 1;
    options->eliminate_dead_code = 1;
    options->reuse_inputs_in_place = 1;
    options->allocator = NULL;
    options->backend_workspace = dfg_cpu_step_workspace;
    options->backend_workspace_for = DFG_CPU_BACKEND_NAME;
    options->fuse_operators = 1;
    options->fuse_attention = 1;
    options->assign_layouts = 1;
    options->max_arena_bytes = DFG_DEFAULT_MAX_ARENA_BYTES;
    options->share_weights = 1;
    options->in_place_depthwise = 1;
    options->tiling = 1;
}

/* 1 if name fits dfg_program.workspace_rule and program_validate.c's
 * alphabet. */
static int rule_name_valid(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    for (size_t i = 0; i < n; i++)
        if (!((name[i] >= 'a' && name[i] <= 'z') ||
              (name[i] >= '0' && name[i] <= '9') || name[i] == '_'))
            return 0;
    return n > 0 && n < DFG_PROGRAM_RULE_NAME_BYTES;
}

dfg_status dfg_compile_options_check(const dfg_compile_options *o)
{
    if (!dfg_planner_name(o->planner))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_compile: invalid planner %d", (int)o->planner);
    if (o->alignment < 1 || o->alignment > ((uint64_t)1 << 20) ||
        (o->alignment & (o->alignment - 1)) != 0)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_compile: alignment %llu is not a power of two "
                         "in [1, 2^20]", (unsigned long long)o->alignment);
    if (o->allocator && (!o->allocator->alloc || !o->allocator->free))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_compile: allocator without alloc or free");
    dfg_status st = dfg_check_precision(o, o->target, "dfg_compile");
    if (st != DFG_OK)
        return st;
    if (o->allow_tf32 && (!o->target || !o->target->tf32 || o->training))
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "dfg_compile: precision tf32 is for inference on a "
                         "backend whose products run it (the cuda backend's "
                         "target: dfg_compile_options_for, dfgc --device "
                         "cuda)%s", o->training ? ", not training" : "");
    if (o->blas_workspace_bytes > DFG_MAX_BLAS_WORKSPACE)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_compile: blas_workspace_bytes %llu exceeds %llu",
                         (unsigned long long)o->blas_workspace_bytes,
                         (unsigned long long)DFG_MAX_BLAS_WORKSPACE);
    if (o->backend_workspace && !rule_name_valid(o->backend_workspace_for))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_compile: backend_workspace needs "
                         "backend_workspace_for, a backend's name (a-z, 0-9, "
                         "'_', under %d characters)",
                         DFG_PROGRAM_RULE_NAME_BYTES);
    return DFG_OK;
}

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
