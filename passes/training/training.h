/* The training pass (passes/training/training.c): turns a graph with a loss into
 * one training step (include/dfg/training.h). */
#ifndef DFG_TRAINING_PASS_H
#define DFG_TRAINING_PASS_H

#include "dfg/training.h"
#include "pass.h"

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

/* Applies order (new position -> old node index, a permutation of every
 * node) to graph: nodes move, each value's producer and the node name
 * table follow. scratch holds n_nodes nodes. */
dfg_status dfg_training_renumber_nodes(dfg_graph *graph, const int32_t *order,
                                       dfg_ir_node *scratch);

/* The same, with scratch allocated here. */
dfg_status dfg_training_reorder_nodes(dfg_graph *graph, const int32_t *order);

/* Moves the nodes appended after the first n_original, in their order,
 * each to just before the original node before[k] names (the k-th
 * appended one; before[] never decreases but for trailing -1s, which
 * stay after every node). */
dfg_status dfg_training_place_appended(dfg_graph *graph, int32_t n_original,
                                       const int32_t *before);

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

/* Turns every live batch_norm into batch_norm_train (src/ops.def) in the
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
 * dropout_train (src/ops.def), its state {seed, 0} a new weight; seed
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

/* What rematerialization did (passes/remat/remat.c). */
typedef struct dfg_remat_report {
    int64_t unconstrained_arena, budget, arena;
    int32_t recomputed;          /* saved activations recomputed */
    int32_t fused_updates;       /* weight gradients fused with updates */
    int32_t relu_gradients;      /* relu's gradients from its output */
    double extra_flops_percent;  /* of the step's FLOPs before */
    /* The arenas each strategy reached (0: not tried). */
    int64_t single_value_arena, segment_arena;
} dfg_remat_report;

/* With a memory budget in t, recomputes saved activations in backward,
 * cheapest FLOPs per byte freed first, until a plan of graph (with o's
 * planner) fits; when single values cannot, checkpoint segments
 * (passes/remat/checkpoint.c). DFG_ERR_PLAN naming the smallest arena reached
 * and what is alive at its peak when neither fits. Nothing without a
 * budget. */
dfg_status dfg_pass_remat(dfg_graph *graph, const dfg_compile_options *o,
                          const dfg_training_options *t,
                          dfg_remat_report *report);

/* A persistent weight named "<base><suffix>" (the training step's own
 * state) holding data (zeros if NULL), with a role; its index in *out. */
dfg_status dfg_training_persistent(dfg_graph *g, const char *base,
                                   const char *suffix, const dfg_type *type,
                                   const void *data, dfg_training_role role,
                                   int32_t *out);

/* The plan's tensor kind of a value with that training role. */
dfg_tensor_kind dfg_training_tensor_kind(dfg_training_role role);

#endif
