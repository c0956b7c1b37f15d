/* The training pass (passes/training/training.c): turns a graph with a loss into
 * one training step (include/dfg/training.h). */
#ifndef DFG_TRAINING_PASS_H
#define DFG_TRAINING_PASS_H

#include "dfg/training.h"
#include "passes/pass.h"

/* Appends the backward pass (passes/training/autodiff.c), the persistent optimizer
 * state and the optimizer updates to graph; marks every value's training
 * role. DFG_ERR_INVALID_ARGUMENT for bad options or a loss that reaches
 * no weight. */
dfg_status dfg_pass_training(dfg_graph *graph,
                             const dfg_training_options *options,
                             dfg_pass_report *report);

/* Moves optimizer_tick and each live update among the nodes from
 * backward_end on (the training pass records them after the backward
 * pass) to just after the last node before backward_end that its update
 * waits for: its gradient's producer and its weight's last reader
 * (passes/training/training_order.c says why). Renumbers node indices. */
dfg_status dfg_training_order_updates(dfg_graph *graph, int32_t backward_end);

/* An op's training form (passes/training/training_forms.c): applies says whether
 * node is replaced; append records its replacement, taking the same
 * place, and hands out the output that takes the place of the old node's
 * first output. ctx is the form's, passed back to both. */
typedef struct dfg_training_form {
    int (*applies)(const dfg_graph *graph, const dfg_ir_node *node,
                   const void *ctx);
    dfg_status (*append)(dfg_graph *graph, int32_t node, const void *ctx,
                         int32_t *first_output);
    const void *ctx;
} dfg_training_form;

/* Replaces every live node form applies to by its training form, at the
 * same place of the order; its first output takes the old one's readers,
 * graph outputs and name. Renumbers node indices. */
dfg_status dfg_training_replace_forms(dfg_graph *graph,
                                      const dfg_training_form *form);

/* Turns every live batch_norm into batch_norm_train (src/ir/ops.def) in the
 * same place of the order: batch statistics, running statistics updated
 * in place (passes/training/training_batch_norm.c). */
dfg_status dfg_training_batch_norm_mode(dfg_graph *graph);

/* The running statistics' default momentum, in ONNX's convention
 * (PyTorch's 0.1). */
#define DFG_BATCH_NORM_RUNNING_MOMENTUM 0.9f

/* The momentum with which a training step updates an inference
 * batch_norm's running statistics: its attrs.alpha (ONNX's convention,
 * running = alpha running + (1 - alpha) batch; the ONNX importer sets it
 * from a training-mode node), or the default when alpha is 1,
 * dfg_attrs_init's value, as for every batch_norm recorded without one. */
float dfg_batch_norm_momentum(const dfg_attrs *batch_norm);

/* Turns every live dropout with a drop probability above 0 into
 * dropout_train (src/ir/ops.def), its state {seed, 0} a new weight; seed
 * and the dropout's place among the graph's dropouts make its stream
 * (passes/training/training_dropout.c). */
dfg_status dfg_training_dropout_mode(dfg_graph *graph, uint64_t seed);

/* Mixed precision's half after autodiff appended the backward nodes
 * (from n_forward on; passes/training/mixed_precision.c): each backward reader of
 * a weight's narrow copy reads a fresh copy made just before it, so that
 * the forward's copy dies in the forward pass; and each of
 * grads[0..n_grads) that autodiff widened from a narrow gradient is
 * replaced by that narrow gradient, which the optimizer update reads as
 * it is (no f32 copy of a weight's gradient in the arena). Nothing to do
 * in an f32 graph. */
dfg_status dfg_mixed_precision_backward(dfg_graph *graph, int32_t n_forward,
                                        int32_t *grads, int32_t n_grads);

/* After autodiff appended the backward nodes (from n_forward on): the
 * conv2d_grad_input products of a conv made in slices of its output
 * channels (a kernel's outer-dim slices that partition it), added one
 * after the other into one gradient, become one product of the slices'
 * output gradients concatenated, added once; a gradient of
 * grads[0..n_grads) that was the last add's is the new sum's
 * (passes/training/sliced_input_grad.c). */
dfg_status dfg_training_merge_sliced_input_grads(dfg_graph *graph,
                                                 int32_t n_forward,
                                                 int32_t *grads,
                                                 int32_t n_grads);

/* A persistent weight named "<base><suffix>" (the training step's own
 * state) holding data (zeros if NULL), with a role; its index in *out. */
dfg_status dfg_training_persistent(dfg_graph *g, const char *base,
                                   const char *suffix, const dfg_type *type,
                                   const void *data, dfg_training_role role,
                                   int32_t *out);

/* The plan's tensor kind of a value with that training role. */
dfg_tensor_kind dfg_training_tensor_kind(dfg_training_role role);

#endif
