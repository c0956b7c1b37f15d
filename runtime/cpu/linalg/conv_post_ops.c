/* conv2d's fused post-ops on the reference path (conv_post_ops.h). */
#include "runtime/cpu/linalg/conv_post_ops.h"

#include <string.h>

#include "math/post_ops.h"
#include "runtime/cpu/parallel.h"

const void *dfg_cpu_conv_residual(const dfg_kernel_args *args)
{
    return args->n_inputs > 3 ? args->in[3] : NULL;
}

void dfg_cpu_conv_residual_load(const dfg_kernel_args *args)
{
    const void *residual = dfg_cpu_conv_residual(args);
    if (residual && residual != args->out[0])
        memcpy(args->out[0], residual,
               (size_t)dfg_type_bytes(&args->out_types[0]));
}

static void apply_range(void *ctx, int64_t start, int64_t count)
{
    const dfg_kernel_args *args = ctx;
    dfg_post_ops_apply_span(args->attrs, 0, (float *)args->out[0] + start,
                            count);
}

void dfg_cpu_conv_post_ops_apply(const dfg_kernel_args *args)
{
    const dfg_attrs *a = args->attrs;
    int eltwise = 0;
    for (int32_t k = 0; k < a->n_post_ops; k++)
        eltwise |= a->post_ops[k] != DFG_POST_SUM;
    if (eltwise)
        dfg_cpu_parallel_ranges(dfg_type_numel(&args->out_types[0]), 4096,
                                apply_range, (void *)args);
}
