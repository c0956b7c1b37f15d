/* silu and hardswish, the activations the fusion pass forms from
 * x * sigmoid(x) and x * hardsigmoid(x) (passes/fusion/fuse_patterns.c), on any
 * float dtype, computed in f32 with the per-element math the fused conv
 * post-ops share (math/post_ops.h); silu over f32 on the vector loop of
 * silu_vector.h. In place is fine: each element is read before it is
 * written. */
#include "runtime/cpu/elementwise/dtype_access.h"
#include "runtime/cpu/elementwise/silu_vector.h"
#include "runtime/cpu/kernels_extra.h"
#include "math/post_ops.h"
#include "runtime/cpu/parallel.h"
#include "runtime/cpu/elementwise/vector_clones.h"

typedef struct fused_activation {
    int32_t kind; /* DFG_POST_SILU or DFG_POST_HARDSWISH */
    dfg_dtype dtype;
    const void *x;
    void *y;
} fused_activation;

/* One loop per kind, each of the per-element math with its kind fixed,
 * so that the compiler vectorizes it. */
DFG_VECTOR_LOOP(activation_run,
                (int32_t kind, const float *x, float *y, int64_t n),
                (kind, x, y, n))
{
    if (kind == DFG_POST_HARDSWISH)
        for (int64_t k = 0; k < n; k++)
            y[k] = dfg_post_op_eltwise(DFG_POST_HARDSWISH, 0.0f, 0.0f, x[k]);
    else
        for (int64_t k = 0; k < n; k++)
            y[k] = dfg_post_op_eltwise(DFG_POST_SILU, 0.0f, 0.0f, x[k]);
}

static void activation_range(void *ctx, int64_t start, int64_t count)
{
    const fused_activation *a = ctx;
    float in_buf[DFG_CPU_BLOCK], out_buf[DFG_CPU_BLOCK];
    for (int64_t i = 0; i < count; i += DFG_CPU_BLOCK) {
        int64_t n = count - i < DFG_CPU_BLOCK ? count - i : DFG_CPU_BLOCK;
        const float *x = dfg_load_f32(a->x, a->dtype, start + i, 1, n, in_buf);
        float *y = dfg_f32_target(a->y, a->dtype, start + i, out_buf);
        activation_run(a->kind, x, y, n);
        dfg_store_f32(a->y, a->dtype, start + i, n, y);
    }
}

dfg_status dfg_cpu_fused_activation(const dfg_kernel_args *args)
{
    if (args->op == DFG_OP_SILU && args->in_types[0].dtype == DFG_F32 &&
        args->out_types[0].dtype == DFG_F32) {
        dfg_cpu_silu_f32(args->in[0], args->out[0],
                         dfg_type_numel(&args->in_types[0]));
        return DFG_OK;
    }
    fused_activation a = {
        args->op == DFG_OP_SILU ? DFG_POST_SILU : DFG_POST_HARDSWISH,
        args->in_types[0].dtype, args->in[0], args->out[0]};
    dfg_cpu_parallel_ranges(dfg_type_numel(&args->in_types[0]),
                            DFG_CPU_BLOCK, activation_range, &a);
    return DFG_OK;
}
