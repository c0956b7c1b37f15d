/* The fused post-ops of a conv2d, matmul or gemm step
 * (dfg_attrs.post_ops) as a oneDNN primitive attribute's: eltwise
 * post-ops for the activations (a HardSigmoid as linear then clip), a sum
 * (scale 1) for the residual, which the primitive adds to what its
 * destination holds. */
#ifndef DFG_CPU_DNNL_POST_OPS_H
#define DFG_CPU_DNNL_POST_OPS_H

#include <dnnl.h>
#include "dfg/attrs.h"

/* Sets attr's post-ops to attrs's, if any; -1 on failure (a kind oneDNN
 * lacks). */
int dfg_dnnl_post_ops_set(dnnl_primitive_attr_t attr, const dfg_attrs *attrs);
/* The same after a sum (scale 1) of what the destination holds where sum
 * is 1. */
int dfg_dnnl_post_ops_set_after_sum(dnnl_primitive_attr_t attr,
                                    const dfg_attrs *attrs, int sum);

/* The post-op a primitive leaves to dfg, which runs it over the
 * destination after the primitive (elementwise/silu_vector.h): a trailing
 * silu, whose exp oneDNN's jit kernels compute at several times the cost
 * of dfg's loop over the output; -1 when oneDNN takes them all. */
int32_t dfg_dnnl_post_op_left(const dfg_attrs *attrs);
/* dfg_dnnl_post_ops_set_after_sum without the post-op
 * dfg_dnnl_post_op_left names; -1 on failure. */
int dfg_dnnl_post_ops_set_leaving(dnnl_primitive_attr_t attr,
                                  const dfg_attrs *attrs, int sum);

#endif
