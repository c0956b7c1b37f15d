/* Mixed precision (passes/training/mixed_precision.c): activations and their
 * gradients stored narrow (bf16), weights, optimizer state and the loss
 * in f32. */
#ifndef DFG_MIXED_PRECISION_H
#define DFG_MIXED_PRECISION_H

#include "passes/pass.h"

/* Stores every float value a node computes in `precision` (DFG_F32:
 * nothing to do; DFG_BF16; anything else DFG_ERR_UNSUPPORTED) but the
 * losses, batch norm's per-channel operands and conv weights, casting at the
 * boundaries; graph outputs keep their dtype. Runs on a forward graph,
 * before the training pass. */
dfg_status dfg_pass_mixed_precision(dfg_graph *graph, dfg_dtype precision,
                                    dfg_pass_report *report);

/* Inference for a backend whose products take 16-bit operands
 * (dfg_target.half_inference): every float value, weights and constants
 * included, stored in `precision` (DFG_F16 or DFG_BF16), the kernels
 * computing in f32; under f16, exp, pow and reduce_sum compute and
 * store f32. Graph inputs and outputs keep their dtype (casts at the
 * boundaries). Runs after the fusion passes. */
dfg_status dfg_pass_half_inference(dfg_graph *graph, dfg_dtype precision,
                                   dfg_pass_report *report);

/* dfg_mixed_precision_backward, its half run by the training pass after
 * autodiff, is declared in training.h. */

#endif
