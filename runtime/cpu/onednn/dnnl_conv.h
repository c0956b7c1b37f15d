/* conv2d on oneDNN: a convolution primitive whose formats oneDNN chooses
 * for the CPU it runs on (blocked nChw8c / nChw16c on AVX2 / AVX-512),
 * with the step's x and y reordered between their own layouts (plain
 * NCHW, or the blocked one the layout pass gave them, dfg_layout) and
 * those formats inside the step where the two differ, and its weights reordered once, when the first
 * session of the program is created, into a copy all its sessions share
 * (dnnl_weights.h); weights that change between runs (a training
 * step's) are reordered at every run into the workspace instead. The post-ops the fusion pass gave the conv
 * (dfg_attrs.post_ops) run as oneDNN post-ops: eltwise, and sum for the
 * residual, which the output then holds first (planned over it, copied
 * into it, or reordered into the blocked output).
 *
 * Scratch: everything oneDNN needs while the step runs (its scratchpad,
 * in user mode, and the blocked copies of x and y) lies in the step's
 * planned workspace, so a run allocates nothing of its own. The compiler
 * learns how much through dfg_dnnl_conv_workspace_bytes (the CPU
 * backend's workspace rule, dfg_compile's default); which steps the
 * session gives oneDNN is decided in dnnl_steps.c, and a step whose
 * planned workspace is smaller (compiled on a CPU whose primitives needed
 * less) runs on the reference kernel instead.
 *
 * Lifetime: a dfg_dnnl_conv is made by dfg_dnnl_conv_create with the
 * session's allocator, owns its oneDNN objects and a reference to its
 * reordered weights, points into the step's regions (which must outlive
 * it), and is freed by dfg_dnnl_conv_destroy. */
#ifndef DFG_CPU_DNNL_CONV_H
#define DFG_CPU_DNNL_CONV_H

#include <dnnl.h>
#include "dfg/allocator.h"
#include "runtime/cpu/kernels.h"

typedef struct dfg_dnnl_conv dfg_dnnl_conv;

/* Bytes of workspace the oneDNN convolution of these operands needs (0:
 * none), or -1 when oneDNN does not take it (not f32, not 2-D, no
 * implementation). */
int64_t dfg_dnnl_conv_workspace_bytes(const dfg_attrs *attrs,
                                      const dfg_type *in, int32_t n_in,
                                      const dfg_type *out, int32_t n_out);

/* The least of it: the direct primitive's alone, constant weights (a
 * step planned less than its Winograd or column product wants runs the
 * direct primitive). */
int64_t dfg_dnnl_conv_direct_workspace_bytes(const dfg_attrs *attrs,
                                             const dfg_type *in, int32_t n_in,
                                             const dfg_type *out,
                                             int32_t n_out);

/* The same for weights that change between runs (a training step's):
 * the direct primitive's, and room for the weights reordered into its
 * format at every run. */
int64_t dfg_dnnl_conv_training_workspace_bytes(const dfg_attrs *attrs,
                                               const dfg_type *in,
                                               int32_t n_in,
                                               const dfg_type *out,
                                               int32_t n_out);

/* Prepares step (a conv2d) on engine, as Winograd where `winograd` (the
 * session's choice, winograd_choice.h) and the conv allow it (constant
 * weights). *out is
 * NULL, with DFG_OK, when the step is not for oneDNN or its workspace is
 * too small for it. */
dfg_status dfg_dnnl_conv_create(dnnl_engine_t engine,
                                const dfg_kernel_args *step, int winograd,
                                const dfg_allocator *allocator,
                                dfg_dnnl_conv **out);
dfg_status dfg_dnnl_conv_run(const dfg_dnnl_conv *conv, dnnl_stream_t stream);
/* The implementation oneDNN chose ("jit:avx2", ...), for reports. */
const char *dfg_dnnl_conv_impl(const dfg_dnnl_conv *conv);
/* Drops the pages of the plain weights again, if they may go
 * (dfg_kernel_args.droppable_inputs), once every conv of the session has been prepared (reading a
 * neighbour's bytes brought some of them back). */
void dfg_dnnl_conv_drop_plain(const dfg_dnnl_conv *conv);
void dfg_dnnl_conv_destroy(dfg_dnnl_conv *conv, const dfg_allocator *allocator);

#endif
