/* Which layouts a step's operands may have (dfg_layout, tensor_type.h):
 * one rule, used by the layout-assignment pass (passes/layout_assign.c)
 * to decide and by the program validator to check a loaded file.
 *
 *   reorder  input any layout, output the layout attrs.layout names;
 *   conv2d   x, y and the residual any layout (oneDNN takes them as they
 *            are), the residual in y's; the bias plain, the weights plain
 *            unless x is nhwc: then the weights and y are nhwc too
 *            (cuDNN's channels-last convolution, KRSC filter);
 *   batch_norm x and y in one layout (plain, blocked for the CPU
 *            backend, nhwc for the CUDA one), the statistics plain;
 *   concat   along the channels of 4-D parts, every part and the output
 *            nhwc (the CUDA backend copies the parts per pixel), or as
 *            below;
 *   concat, slice and put_rows along the rows (dfg_op_layout_rows):
 *            every operand and output plain or in one blocked layout;
 *   layout-agnostic ops (dfg_op_layout_agnostic), max_pool,
 *            average_pool, global_average_pool and per-channel add and
 *            mul (dfg_layout_per_channel_full; the CPU backend runs a
 *            blocked one on oneDNN): every operand and output in one
 *            layout;
 *   any other op: every operand and output plain.
 * A blocked tensor is always a 4-D f32 [N, C, H, W] one; where C is not
 * a multiple of the block its last block is padded (dfg_layout_channels:
 * the padding is zero where oneDNN or a reorder writes it and finite
 * after any step the rule lets read it). An nhwc one is a 4-D f32, f16
 * or bf16 one. A concat along the channels is agnostic for blocked
 * layouts only (nhwc interleaves the parts per pixel: the concat clause
 * above), and only where every part fills whole blocks; an agnostic op
 * with padded operands only where it maps finite padding to finite
 * padding (dfg_op_pads_finitely). */
#ifndef DFG_LAYOUT_RULE_H
#define DFG_LAYOUT_RULE_H

#include "ir/op_table.h"

/* 1 if a tensor of type may have layout (plain always may; a blocked
 * one padded or not). */
int dfg_layout_fits(const dfg_type *type, int32_t layout);

/* 1 if a tensor of type may have layout with no padding: its channels
 * fill whole blocks (a blocked one's bytes are NCHW's). */
int dfg_layout_fills(const dfg_type *type, int32_t layout);

/* 1 if a tensor of type may have blocked layout with padding that costs
 * little: it fills whole blocks, or its padding is at most a quarter of
 * the channels it stores (24 or 28 of 32, 40 of 48 with nChw16c; not 3
 * or 8 of 16, 20 of 32). */
int dfg_layout_pads_cheaply(const dfg_type *type, int32_t layout);

/* 1 for an elementwise op that maps finite inputs to a finite output
 * (add, mul, relu, sigmoid, ...; not div, log, sqrt, reciprocal): one
 * that may run over a blocked tensor's padding, which the convs that
 * read it multiply by zero weights. */
int dfg_op_pads_finitely(dfg_op op);

/* 1 for a node of op whose kernel computes each output element from the
 * input elements at the same index, so that it runs unchanged on blocked
 * operands: unary elementwise ops, binary ones whose inputs have the
 * output's shape (no broadcast), and a concat of 4-D tensors along the
 * channels (a blocked part whose channels fill whole blocks lies in the
 * same bytes as in NCHW). */
int dfg_op_layout_agnostic(dfg_op op, const dfg_attrs *attrs,
                           const dfg_type *in, int32_t n_in,
                           const dfg_type *out);

/* 1 for a concat of 4-D tensors along the rows (axis 2), a slice of a
 * 4-D tensor along the rows only with step 1, or a put_rows: in a blocked
 * layout (not
 * nhwc) a row of a channel block is W * block contiguous elements, so
 * the kernel moves the rows of the [N, C / block, H, W * block] view as
 * it moves NCHW's (dfg_layout_rows_view). Tiled execution's bands and
 * joins (passes/tiling/tile_spatial.c). */
int dfg_op_layout_rows(dfg_op op, const dfg_attrs *attrs, int32_t rank);

/* type seen as the plain tensor its bytes hold for dfg_op_layout_rows:
 * a blocked [N, C, H, W] as [N, C' / block, H, W * block] (C' its stored
 * channels, dfg_layout_channels); any other
 * type unchanged. */
dfg_type dfg_layout_rows_view(const dfg_type *type);

/* For an add or mul of a 4-D f32 [N, C, H, W] tensor and a [N, C, 1, 1]
 * one (a per-channel scale or shift, in either order) into out: the
 * index of the full input; -1 for any other node. The CPU backend runs
 * a blocked one on oneDNN. */
int dfg_layout_per_channel_full(dfg_op op, const dfg_type *in, int32_t n_in,
                                const dfg_type *out);

/* DFG_OK if the operands' layouts follow the rule above; otherwise an
 * error naming the operand and its layout (the caller prefixes the step). */
dfg_status dfg_layout_check(dfg_op op, const dfg_attrs *attrs,
                            const dfg_type *in, int32_t n_in,
                            const dfg_type *out, int32_t n_out);

#endif
