/* Sliding-window attributes shared by Conv and the pools (onnx_window.c).
 * dfg's window ops are 2-D; a 1-D window runs as 2-D on an input with a
 * unit height (axis 2). */
#ifndef DFG_ONNX_WINDOW_H
#define DFG_ONNX_WINDOW_H

#include "onnx_import.h"

/* Fills strides, dilations and pads of a (top, left, bottom, right) from
 * the node's attributes. in and kernel are the 2-D (height, width) input
 * size and kernel, height 1 for a 1-D window (n_spatial == 1). */
dfg_status dfg_onnx_window_attrs(dfg_onnx_importer *im, int32_t n_spatial,
                                 const int64_t in[2], const int64_t kernel[2],
                                 dfg_attrs *a);
/* [N,C,L] -> [N,C,1,L]; a rank-4 entry is passed through. */
dfg_status dfg_onnx_to_2d(dfg_onnx_importer *im, int32_t x, int32_t *out);
/* Undoes dfg_onnx_to_2d on a result when n_spatial == 1. */
dfg_status dfg_onnx_from_2d(dfg_onnx_importer *im, int32_t n_spatial,
                            int32_t y, int32_t *out);

#endif
