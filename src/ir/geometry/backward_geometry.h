/* Shapes of the backward ops, shared by their shape rules, workspace rules
 * and kernels.
 *
 * A backward op that does not take some forward operand (a conv's input or
 * weights, a pool's or slice's input, gather's data) carries its shape in
 * attrs.shape. The conv2d backward ops see the forward conv as
 * x [N,C,H,W], w [M,C/g,kh,kw] and dy [N,M,OH,OW]; dy must be exactly what
 * conv2d(x, w) makes with the same attributes, so the forward geometry and
 * its bounded im2col chunks (conv_geometry.h) apply unchanged. */
#ifndef DFG_BACKWARD_GEOMETRY_H
#define DFG_BACKWARD_GEOMETRY_H

#include "ir/geometry/conv_geometry.h"

/* attrs->shape (rank attrs->n_shape) as a type of like's dtype. */
dfg_status dfg_type_from_attrs_shape(const dfg_attrs *attrs,
                                     const dfg_type *like, dfg_type *out);

/* DFG_ERR_SHAPE, naming what, unless got has want's rank and dims. */
dfg_status dfg_check_same_dims(const char *what, const dfg_type *got,
                               const dfg_type *want);

/* Fills *g for the forward conv (x, w) -> dy. */
dfg_status dfg_conv_grad_geometry(const dfg_attrs *attrs, const dfg_type *x,
                                  const dfg_type *w, const dfg_type *dy,
                                  dfg_conv_geometry *g);

/* The backward convs multiply over the columns of the whole batch, the
 * flattened (image, output pixel) axis of N * pixels columns, in chunks
 * of the forward's size (conv_geometry.h): part of an image when an image
 * is larger than the budget, else whole images side by side, as many as
 * make DFG_CONV_GRAD_CHUNK_COLUMNS columns, at most `slots` (the bundled
 * CNN's 8x8 images would give products of 64 columns, too small for BLAS
 * to run well; its 50% budget holds a weight gradient's workspace of two
 * of them beside three of its block's tensors, not of four). Per group,
 * a chunk holds the im2col columns [k, chunk], as the forward's, and
 * dy's columns [M/group, chunk], gathered out of [N, M, pixels] so that a
 * chunk spanning several images is one matrix. */
#define DFG_CONV_GRAD_CHUNK_COLUMNS 128
int64_t dfg_conv_grad_chunk(const dfg_conv_geometry *g);

/* Bytes of a backward conv's workspace: 0 for a direct conv (its products
 * run on x and dx as they are), else (M/group + k) * chunk floats. The
 * CUDA kernels walk the forward's per-image chunk, k * g->chunk floats,
 * which this always covers. */
int64_t dfg_conv_grad_workspace_bytes(const dfg_conv_geometry *g);

/* The least backward workspace the CPU kernels work with (conv_geometry.h):
 * 0 for a direct conv, else (M/group + k) floats per column of a least
 * chunk (one output row, at most the full chunk). */
int64_t dfg_conv_grad_least_workspace_bytes(const dfg_conv_geometry *g);

/* conv2d_grad_input may write dx over dy (dfg_op_may_write_over_input)
 * when they have one type: stride 1, C == M, the same padding on both
 * sides. dx's image n is then written over dy's, so the kernels keep the
 * one image whose dy a chunk has not read whole yet (its group's
 * channels, M/group * pixels elements of dy's dtype) at the start of the
 * workspace, before the column chunks; 0 bytes when the types differ
 * (never in place). Rounded up to 64 bytes, so the columns stay aligned. */
int64_t dfg_conv_grad_input_saved_bytes(const dfg_conv_geometry *g,
                                        const dfg_type *dy,
                                        const dfg_type *dx);

/* Columns of the chunks that op_bytes of workspace hold (between the
 * least and the full workspace): 1 to dfg_conv_grad_chunk(g). */
int64_t dfg_conv_grad_chunk_within(const dfg_conv_geometry *g,
                                   int64_t op_bytes);

#endif
