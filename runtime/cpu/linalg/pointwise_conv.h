/* A 1x1 conv2d over plain NCHW tensors as oneDNN's matrix product, read
 * and written where they lie: each image's y [cout, h * w] is the
 * filters [cout, cin] times its x [cin, h * w]. oneDNN's own conv would
 * reorder x into its format and y back out of it within the step (on
 * AVX-512 its brgemm convs want nhwc; the layout pass leaves plain the
 * tensors whose channels fill no whole block, as shufflenet's 58 and
 * 116); the product reads the plain bytes directly. The filters are
 * read in place: no copy of the weights. The bias is written into y
 * first, per output channel, and the product adds to it (a sum
 * post-op), then the step's fused activations run as its post-ops (a
 * trailing silu as dfg's loop after the product, dfg_dnnl_post_op_left).
 *
 * Which convs (dfg_pointwise_takes, the same at compile time and at
 * session creation, from the operands alone): f32, 1x1, stride 1, no
 * padding, one group, x and y plain, no residual, images of at least
 * DFG_POINTWISE_MIN_PIXELS pixels (on smaller ones the reorders cost less
 * than the product's short rows), constant filters, and a product that
 * oneDNN runs on a library kernel (not its reference).
 *
 * Scratch: the product's scratchpad lies in the step's planned workspace
 * (dfg_pointwise_workspace_bytes).
 *
 * Lifetime: made by dfg_pointwise_conv_create with the session's
 * allocator, points into the step's regions, freed by
 * dfg_pointwise_conv_destroy. */
#ifndef DFG_CPU_POINTWISE_CONV_H
#define DFG_CPU_POINTWISE_CONV_H

#include <dnnl.h>
#include "dfg/allocator.h"
#include "runtime/cpu/kernels.h"

#define DFG_POINTWISE_MIN_PIXELS (14 * 14)

typedef struct dfg_pointwise_conv dfg_pointwise_conv;

/* 1 if the conv2d of these operands is one for the product (its shape
 * and layouts; oneDNN's kernel is dfg_pointwise_workspace_bytes's to
 * check). */
int dfg_pointwise_takes(const dfg_attrs *attrs, const dfg_type *in,
                        int32_t n_in, const dfg_type *out);

/* Bytes of workspace it needs on engine (at least 1), or 0 if it does
 * not take the conv or oneDNN has no library kernel for the product. */
int64_t dfg_pointwise_workspace_bytes(dnnl_engine_t engine,
                                      const dfg_attrs *attrs,
                                      const dfg_type *in, int32_t n_in,
                                      const dfg_type *out);

/* Prepares step (a conv2d with constant weights); *out is NULL, with
 * DFG_OK, when it is not one for the product or its workspace is too
 * small. */
dfg_status dfg_pointwise_conv_create(dnnl_engine_t engine,
                                     const dfg_kernel_args *step,
                                     const dfg_allocator *allocator,
                                     dfg_pointwise_conv **out);
dfg_status dfg_pointwise_conv_run(const dfg_pointwise_conv *conv,
                                  dnnl_stream_t stream);
/* "pointwise + " the product's oneDNN implementation, for reports. */
const char *dfg_pointwise_conv_impl(const dfg_pointwise_conv *conv);
void dfg_pointwise_conv_destroy(dfg_pointwise_conv *conv,
                                const dfg_allocator *allocator);

#endif
