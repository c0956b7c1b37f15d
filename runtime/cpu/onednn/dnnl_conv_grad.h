/* conv2d_grad_input and conv2d_grad_weight on oneDNN: the convolution's
 * backward-data and backward-weights primitives, in the formats oneDNN
 * chooses for the CPU it runs on (blocked nChw16c / OIhw16i16o on
 * AVX-512), made once at session creation with the forward primitive's
 * descriptor as their hint. A training step's tensors are plain NCHW
 * and its weights change at every step, so at every run dy and the other
 * input (w or x) are reordered into the chosen formats and the result
 * (dx or dw) back into the step's plain output, all within the step.
 * dx may be planned over dy (dfg_op_may_write_over_input): dy is then
 * reordered before dx is written, or the step stays on dfg's kernel.
 *
 * Scratch: oneDNN's scratchpad (user mode, shared by the primitive and
 * its reorders) and the reordered copies lie in the step's planned
 * workspace, which the CPU backend's workspace rule sizes
 * (dfg_dnnl_conv_grad_workspace_bytes, dnnl_steps.c): a run allocates
 * nothing. A step whose workspace is smaller (compiled with no backend
 * rule, or on a CPU whose primitives needed less) runs on dfg's kernel
 * (runtime/cpu/linalg/conv2d_grad.c), whose own workspace the rule
 * always covers. The results match dfg's kernels within f32 rounding,
 * not bit for bit (the sums run in another order).
 *
 * Lifetime: made by dfg_dnnl_conv_grad_create with the session's
 * allocator, owns its oneDNN objects, points into the step's regions
 * (which must outlive it), freed by dfg_dnnl_conv_grad_destroy. */
#ifndef DFG_CPU_DNNL_CONV_GRAD_H
#define DFG_CPU_DNNL_CONV_GRAD_H

#include <dnnl.h>
#include "dfg/allocator.h"
#include "runtime/cpu/kernels.h"

typedef struct dfg_dnnl_conv_grad dfg_dnnl_conv_grad;

/* 1 if op is one this file runs (conv2d_grad_input, conv2d_grad_weight). */
int dfg_dnnl_conv_grad_op(int32_t op);

/* Bytes of workspace op's oneDNN primitive and reorders need for these
 * operands (0: none), or -1 when oneDNN does not take them (not f32, not
 * plain, only its reference implementation). constant_weights: a
 * grad_input's w never changes (an inference program's ConvTranspose),
 * so its reordered copy, made once, needs no room here. */
int64_t dfg_dnnl_conv_grad_workspace_bytes(int32_t op, const dfg_attrs *attrs,
                                           const dfg_type *in, int32_t n_in,
                                           const dfg_type *out,
                                           int32_t n_out,
                                           int constant_weights);

/* Prepares step on engine; *out is NULL, with DFG_OK, when oneDNN does
 * not take it or its workspace is too small for it. */
dfg_status dfg_dnnl_conv_grad_create(dnnl_engine_t engine,
                                     const dfg_kernel_args *step,
                                     const dfg_allocator *allocator,
                                     dfg_dnnl_conv_grad **out);
dfg_status dfg_dnnl_conv_grad_run(const dfg_dnnl_conv_grad *grad,
                                  dnnl_stream_t stream);
/* The implementation oneDNN chose ("jit:avx512_core", ...), for reports. */
const char *dfg_dnnl_conv_grad_impl(const dfg_dnnl_conv_grad *grad);
void dfg_dnnl_conv_grad_destroy(dfg_dnnl_conv_grad *grad,
                                const dfg_allocator *allocator);

#endif
