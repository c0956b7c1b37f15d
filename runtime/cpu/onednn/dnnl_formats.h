/* What the oneDNN steps on blocked tensors share (dnnl_conv.c,
 * dnnl_pool.c): dfg's layouts as oneDNN formats, and
 * primitive descriptors that run with no scratch at all. */
#ifndef DFG_CPU_DNNL_FORMATS_H
#define DFG_CPU_DNNL_FORMATS_H

#include <dnnl.h>
#include "tensor_type.h"

/* The descriptor of a 4-D f32 tensor of dims laid out as layout
 * (dfg_layout); -1 for an unknown layout or one oneDNN refuses. */
int dfg_dnnl_layout_md(dnnl_memory_desc_t *md, const dnnl_dims_t dims,
                       int32_t layout);

/* The primitive descriptor of op_desc on engine (user scratchpad mode),
 * or NULL when oneDNN has none or it would need a scratchpad (nobody
 * planned one for the step). The caller destroys it. */
dnnl_primitive_desc_t dfg_dnnl_unscratched_desc(const void *op_desc,
                                                dnnl_engine_t engine);

#endif
