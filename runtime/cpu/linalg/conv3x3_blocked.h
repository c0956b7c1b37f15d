/* The operands both blocked 3x3 paths take, before each one's own shape
 * rule: Winograd (winograd_conv.h) and the columns conv
 * (columns_conv.h). */
#ifndef DFG_CPU_CONV3X3_BLOCKED_H
#define DFG_CPU_CONV3X3_BLOCKED_H

#include "ir/geometry/conv_geometry.h"

/* 0, with *g filled, if the conv2d of these operands is f32, 3x3,
 * dilation 1, one group, with x, y and the residual (if any) laid out as
 * the blocked `layout` (nChw8c, nChw16c) and its channels in whole
 * blocks; -1 otherwise. */
int dfg_conv3x3_blocked_geometry(const dfg_attrs *attrs, const dfg_type *in,
                                 int32_t n_in, const dfg_type *out,
                                 int32_t layout, dfg_conv_geometry *g);

#endif
