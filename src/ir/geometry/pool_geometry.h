/* The checks and geometry of max_pool, average_pool and their gradients,
 * written once for every backend (the window arithmetic itself is
 * math/pool_window.h, usable from CUDA). */
#ifndef DFG_POOL_GEOMETRY_H
#define DFG_POOL_GEOMETRY_H

#include "dfg/attrs.h"
#include "dfg/status.h"
#include "ir/tensor_type.h"
#include "math/pool_window.h"

/* Fills *g for pooling x [N,C,H,W] into y [N,C,OH,OW] with attrs; op names
 * the op in messages. DFG_ERR_SHAPE when x and y are not [N,C,..] of the
 * same N, C and dtype, DFG_ERR_INVALID_ARGUMENT when a kernel, stride or
 * dilation is not positive or a pad negative. */
dfg_status dfg_pool_geometry_make(const char *op, const dfg_attrs *attrs,
                                  const dfg_type *x, const dfg_type *y,
                                  dfg_pool_geometry *g);

#endif
