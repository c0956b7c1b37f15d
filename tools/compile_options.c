/* The compile options every compiling subcommand accepts. */
#include "tools/compile_options.h"
#include "tools/memory_limit_cli.h"

#include <stdio.h>
#include <string.h>
#include "tools/cli.h"
#include "tools/model_source.h"

int dfgc_precision_option(const char *command, int argc, char **argv, int *i,
                          dfg_dtype *precision, int *tf32)
{
    const char *value;
    int found = dfgc_option_value(command, argc, argv, i, "--precision",
                                  &value);
    if (found != 1)
        return found;
    int inference = tf32 != NULL;
    if (strcmp(value, "f32") == 0 || strcmp(value, "bf16") == 0 ||
        (inference && (strcmp(value, "tf32") == 0 ||
                       strcmp(value, "f16") == 0))) {
        *precision = strcmp(value, "bf16") == 0  ? DFG_BF16
                     : strcmp(value, "f16") == 0 ? DFG_F16
                                                 : DFG_F32;
        if (tf32)
            *tf32 = value[0] == 't';
        return 1;
    }
    dfgc_usage_error(command, "--precision '%s': f32%s or bf16", value,
                     inference ? ", tf32, f16 (tf32 and f16 on --device "
                                 "cuda)" : "");
    return -1;
}

int dfgc_compile_option(const char *command, int argc, char **argv, int *i,
                        dfg_compile_options *options)
{
    const char *value;
    int found = dfgc_shapes_option(command, argc, argv, i);
    if (found == 0)
        found = dfgc_const_option(command, argc, argv, i);
    if (found == 0)
        found = dfgc_max_weight_option(command, argc, argv, i);
    if (found == 0)
        found = dfgc_precision_option(command, argc, argv, i,
                                      &options->precision,
                                      &options->allow_tf32);
    if (found != 0)
        return found;
    if (strcmp(argv[*i], "--no-onednn") == 0) {
        options->backend_workspace = NULL;
        options->backend_workspace_for = NULL;
        return 1;
    }
    if (strcmp(argv[*i], "--no-layouts") == 0) {
        options->assign_layouts = 0;
        return 1;
    }
    if (strcmp(argv[*i], "--no-fuse") == 0) {
        options->fuse_operators = 0;
        return 1;
    }
    if (strcmp(argv[*i], "--no-fuse-attention") == 0) {
        options->fuse_attention = 0;
        return 1;
    }
    if (strcmp(argv[*i], "--no-tiling") == 0) {
        options->tiling = 0;
        return 1;
    }
    if (strcmp(argv[*i], "--no-share-weights") == 0) {
        options->share_weights = 0;
        return 1;
    }
    found = dfgc_option_value(command, argc, argv, i, "--prefer", &value);
    if (found == 1) {
        if (strcmp(value, "memory") != 0 && strcmp(value, "speed") != 0 &&
            strcmp(value, "smallest") != 0) {
            dfgc_usage_error(command, "--prefer wants speed, memory or "
                             "smallest, not '%s'", value);
            return -1;
        }
        options->prefer_memory = strcmp(value, "memory") == 0 ? 1
                                 : strcmp(value, "smallest") == 0
                                     ? DFG_PREFER_SMALLEST
                                     : 0;
        return 1;
    }
    if (found < 0)
        return -1;
    found = dfgc_option_value(command, argc, argv, i, "--planner", &value);
    if (found == 1) {
        dfg_planner planner;
        if (dfg_planner_from_name(value, &planner) != 0) {
            char known[256] = "";
            for (int p = 0; p < DFG_PLANNER_COUNT; p++)
                snprintf(known + strlen(known), sizeof known - strlen(known),
                         "%s%s", p ? ", " : "", dfg_planner_name(p));
            dfgc_usage_error(command, "unknown planner '%s' (planners: %s)",
                             value, known);
            return -1;
        }
        options->planner = planner;
        return 1;
    }
    if (found < 0)
        return -1;
    found = dfgc_option_value(command, argc, argv, i, "--memory-limit",
                              &value);
    if (found == 1) {
        uint64_t limit;
        if (dfg_parse_bytes(value, &limit) != 0) {
            dfgc_usage_error(command, "--memory-limit wants BYTES, NMiB or "
                             "NGiB above 0, not '%s'", value);
            return -1;
        }
        dfgc_set_memory_limit(limit);
        return 1;
    }
    if (found < 0)
        return -1;
    found = dfgc_option_value(command, argc, argv, i, "--max-arena-bytes",
                              &value);
    if (found == 1)
        return dfgc_parse_u64(command, "--max-arena-bytes", value, 0,
                              UINT64_MAX, &options->max_arena_bytes) == 0
                   ? 1 : -1;
    if (found < 0)
        return -1;
    found = dfgc_option_value(command, argc, argv, i, "--blas-workspace",
                              &value);
    if (found == 1) {
        uint64_t bytes;
        if (dfgc_parse_u64(command, "--blas-workspace", value, 0,
                           DFG_MAX_BLAS_WORKSPACE, &bytes) != 0)
            return -1;
        options->blas_workspace_bytes = bytes;
        return 1;
    }
    if (found < 0)
        return -1;
    found = dfgc_option_value(command, argc, argv, i, "--align", &value);
    if (found == 1) {
        uint64_t alignment;
        if (dfgc_parse_u64(command, "--align", value, 1, (uint64_t)1 << 30,
                           &alignment) != 0)
            return -1;
        if (alignment & (alignment - 1)) {
            dfgc_usage_error(command, "--align wants a power of two, not "
                             "'%s'", value);
            return -1;
        }
        options->alignment = alignment;
    }
    return found;
}
