/* The CUDA backend's compile target (see target.h). */
#include "runtime/cuda/plan/target.h"

#include "runtime/backend.h"
#include "runtime/cuda/plan/dnn_mapping.h"
#include "runtime/cuda/plan/step_plan.h"

static int supports_op(int32_t op)
{
    return op >= 0 && op < DFG_OP_COUNT && dfg_cuda_supports_op((dfg_op)op);
}

const dfg_target dfg_cuda_target = {
    .backend = DFG_CUDA_BACKEND_NAME,
    .workspace_rule = NULL,
    .min_alignment = 16,
    .blas_workspace_bytes = DFG_DEFAULT_BLAS_WORKSPACE,
    .blocked_layouts = 0,
    .fused_post_ops = 1,
    .fused_attention = 1,
    .tf32 = 1,
    .f32_storage_only = 1,
    .half_inference = 1,
    .transposed_operands = 1,
    .supports_op = supports_op,
    .conv_layout = dfg_cuda_conv_layout,
};
