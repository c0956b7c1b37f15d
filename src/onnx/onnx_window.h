/* Sliding-window attributes shared by Conv and the pools (onnx_window.c).
 * dfg's window ops are 2-D; a 1-D window runs as 2-D on an input with a
 * unit height (axis 2). */
#ifndef DFG_ONNX_WINDOW_H
#define DFG_ONNX_WINDOW_H

#include "onnx/onnx_importer.h"

/* Fills strides, dilations and pads of a (top, left, bottom, right) from
 * the node's attributes. in and kernel are the 2-D (height, width) input
 * size and kernel, height 1 for a 1-D window (n_spatial == 1). */
dfg_status dfg_onnx_window_attrs(dfg_onnx_importer *im, int32_t n_spatial,
                                 const int64_t in[2], const int64_t kernel[2],
                                 dfg_attrs *a);
/* Reads ints attribute `name` of n_spatial * width entries (width 1:
 * strides; 2: begins then ends) into out, width groups of 2 whose last
 * n_spatial entries it fills (a 1-D window leaves the height's).
 * *present (may be NULL) gets the count read, -1 when absent. */
dfg_status dfg_onnx_window_ints(dfg_onnx_importer *im, const char *name,
                                int32_t n_spatial, int32_t width,
                                int64_t *out, int32_t *present);
/* MaxPool and AveragePool: the node's explicit pads (pads: n begins,
 * then n ends, as read) each below the kernel's size along its axis, as
 * ONNX Runtime requires: else a window could lie entirely in the padding
 * (a max of nothing, -inf; an average of nothing). DFG_ERR_FORMAT naming
 * the pad if not. Pads that auto_pad computes are not checked, as in
 * ONNX Runtime. */
dfg_status dfg_onnx_check_pool_pads(dfg_onnx_importer *im,
                                    const int64_t *pads, const int64_t *kernel,
                                    int32_t n);
/* ONNX's auto_pad SAME_*: the pads at the begin and end of one axis so
 * that out = ceil(in / stride); SAME_LOWER (lower) puts the odd one at
 * the begin. */
void dfg_onnx_same_pads(int64_t in, int64_t kernel, int64_t stride,
                        int64_t dilation, int lower, int64_t *begin,
                        int64_t *end);
/* Conv over a 3-D window (x [N,C,D,H,W], w [M,C/group,KD,KH,KW], b [M] or
 * -1), composed of 2-D convolutions (onnx_window_3d.c). */
dfg_status dfg_onnx_conv_3d(dfg_onnx_importer *im, int32_t x, int32_t w,
                            int32_t b, int64_t group, int32_t *out);
/* MaxPool (op "max_pool") or AveragePool ("average_pool") over a 3-D
 * window, composed of the 2-D pool and depth slices. */
dfg_status dfg_onnx_pool_3d(dfg_onnx_importer *im, const char *op, int32_t x,
                            int32_t *out);
/* [N,C,L] -> [N,C,1,L]; a rank-4 entry is passed through. */
dfg_status dfg_onnx_to_2d(dfg_onnx_importer *im, int32_t x, int32_t *out);
/* Undoes dfg_onnx_to_2d on a result when n_spatial == 1. */
dfg_status dfg_onnx_from_2d(dfg_onnx_importer *im, int32_t n_spatial,
                            int32_t y, int32_t *out);

#endif
