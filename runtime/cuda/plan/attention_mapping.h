/* The attention op (src/ir/ops.def) on the CUDA backend, two ways. Plain
 * C, no CUDA or cuDNN header: the CPU tests check both mappings and run
 * the unfused steps through the emulator (tests/cuda/cuda_emulator.c).
 *
 * - cuDNN's fused scaled dot-product attention (dnn_attention.c builds
 *   its graph, chooses the plan once when the session prepares its steps
 *   and runs it), where the step fits what cuDNN 9 documents for its
 *   f16/bf16 flash attention forward: 16-bit operands, head dims that
 *   are multiples of 8 up to 128, the head dim contiguous in q, k and v,
 *   a mask (cuDNN's bias) holding every [Sq, Sk] score of a head,
 *   broadcast only across batch and heads.
 * - Otherwise the unfused steps: one strided-batched cuBLAS product for
 *   every head's scores (alpha applied) into the step's workspace, the
 *   mask added there by the binary kernel, the softmax kernel over its
 *   rows in place, and one product with v into the output. The step's
 *   runner in reports (dfg_session_step_library) names the reason. */
#ifndef DFG_CUDA_ATTENTION_MAPPING_H
#define DFG_CUDA_ATTENTION_MAPPING_H

#include "runtime/cuda/plan/step_plan_types.h"

/* The planner of attention steps (step_plan.c's table): the unfused steps
 * and the cuBLAS workspace past the scores; cuDNN takes the step later
 * where it can (dnn.h). */
dfg_status dfg_cuda_plan_attention(const dfg_step_args *s,
                                   dfg_cuda_step_plan *p);

/* cuDNN's view of the step: 4-D [b, h, s, d] tensors with strides
 * (elements), leading batch dims folded into b; k as the product's right
 * operand, k^T [b, h, d, sk]; the mask (bias) [1|b, 1|h, sq, sk]. */
typedef struct dfg_cuda_sdpa {
    int64_t q[4], kt[4], v[4], o[4], bias[4];
    int64_t q_stride[4], kt_stride[4], v_stride[4], o_stride[4],
        bias_stride[4];
    int has_bias;
    dfg_dtype dtype;
    float scale;
} dfg_cuda_sdpa;

/* 1 with *out when cuDNN's fused attention can run plan's attention step,
 * else 0 with *why: a static phrase naming what stands in the way, for
 * the step's runner in reports (dfg_cuda_step_runs_on). */
int dfg_cuda_sdpa_make(const dfg_cuda_step_plan *plan, dfg_cuda_sdpa *out,
                       const char **why);

/* Why cuDNN's fused attention does not run an attention step, the
 * reasons the tests name (plan->dnn_why; the others are in
 * attention_mapping.c and dnn_attention.c). */
#define DFG_CUDA_SDPA_NOT_F32 "its fused attention takes f16 or bf16, not f32"
#define DFG_CUDA_SDPA_NOT_BUILT "not in this build, or turned off"

#endif
