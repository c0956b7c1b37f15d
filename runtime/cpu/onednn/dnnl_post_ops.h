/* The fused post-ops of a conv2d, matmul or gemm step
 * (dfg_attrs.post_ops) as a oneDNN primitive attribute's: eltwise
 * post-ops for the activations (a HardSigmoid as linear then clip), a sum
 * (scale 1) for the residual, which the primitive adds to what its
 * destination holds. */
#ifndef DFG_CPU_DNNL_POST_OPS_H
#define DFG_CPU_DNNL_POST_OPS_H

#include <dnnl.h>
#include "dfg/attrs.h"
#include "ir/tensor_type.h"

/* Sets attr's post-ops to attrs's, if any; -1 on failure (a kind oneDNN
 * lacks). */
int dfg_dnnl_post_ops_set(dnnl_primitive_attr_t attr, const dfg_attrs *attrs);

/* The post-op a primitive (a conv, a matmul or gemm) leaves to dfg, which
 * runs it over the destination after the primitive (dfg_dnnl_left): a
 * trailing silu, whose exp oneDNN's jit kernels compute at several times
 * the cost of dfg's loop over the output; -1 when oneDNN takes them all.
 * A trailing GELU stays oneDNN's: its post-op costs less than a second
 * pass over the output computing erf to f32's precision. It reads attrs
 * only, so that the workspace rule and the session, on either door, make
 * the same primitive. */
int32_t dfg_dnnl_post_op_left(const dfg_attrs *attrs);
/* attrs's post-ops after a sum (scale 1) of what the destination holds
 * where sum is 1, without the post-op dfg_dnnl_post_op_left names; -1 on
 * failure. */
int dfg_dnnl_post_ops_set_leaving(dnnl_primitive_attr_t attr,
                                  const dfg_attrs *attrs, int sum);

/* The left post-op of a step, bound to its destination at session
 * creation (y, n floats, points into the step's region; zeroed: none). */
typedef struct dfg_dnnl_left {
    float *y;
    int64_t n;
} dfg_dnnl_left;

/* Binds the post-op dfg_dnnl_post_op_left(attrs) names to y, of type
 * y_type (f32); 1 if there is one, else 0 (left zeroed). */
int dfg_dnnl_left_bind(dfg_dnnl_left *left, const dfg_attrs *attrs, void *y,
                       const dfg_type *y_type);

/* Runs the bound post-op over its destination, if any. */
void dfg_dnnl_left_run(const dfg_dnnl_left *left);

/* " + silu", or "" where none is bound: what a step's kernel name adds
 * for it. */
const char *dfg_dnnl_left_name(const dfg_dnnl_left *left);

#endif
