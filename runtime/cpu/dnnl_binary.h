/* add and mul of a blocked [N, C, H, W] tensor and a per-channel
 * [N, C, 1, 1] one (a squeeze-excite scale) on oneDNN's binary
 * primitive, made once at session creation, no scratch (one that would
 * need some is not taken). Same-shape binaries run on the reference
 * kernels whatever their layout (layout_rule.h); this is for the
 * broadcast the layout pass keeps blocked (passes/layout_assign.c).
 *
 * Lifetime: made by dfg_dnnl_binary_create with the session's allocator,
 * owns its oneDNN objects, points into the step's regions (which must
 * outlive it), freed by dfg_dnnl_binary_destroy. */
#ifndef DFG_CPU_DNNL_BINARY_H
#define DFG_CPU_DNNL_BINARY_H

#include <dnnl.h>
#include "dfg/allocator.h"
#include "kernels.h"

typedef struct dfg_dnnl_binary dfg_dnnl_binary;

/* Prepares step (an add or mul) on engine; *out NULL, with DFG_OK, when
 * oneDNN does not take it. */
dfg_status dfg_dnnl_binary_create(dnnl_engine_t engine,
                                  const dfg_kernel_args *step,
                                  const dfg_allocator *allocator,
                                  dfg_dnnl_binary **out);
dfg_status dfg_dnnl_binary_run(const dfg_dnnl_binary *binary,
                               dnnl_stream_t stream);
const char *dfg_dnnl_binary_impl(const dfg_dnnl_binary *binary);
void dfg_dnnl_binary_destroy(dfg_dnnl_binary *binary,
                             const dfg_allocator *allocator);

#endif
