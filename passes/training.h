/* The training pass (passes/training.c): turns a graph with a loss into
 * one training step (include/dfg/training.h). */
#ifndef DFG_TRAINING_PASS_H
#define DFG_TRAINING_PASS_H

#include "dfg/training.h"
#include "pass.h"

/* Appends the backward pass (passes/autodiff.c), the persistent optimizer
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
 * (passes/training_order.c says why). Renumbers node indices. */
dfg_status dfg_training_order_updates(dfg_graph *graph, int32_t backward_end);

/* Applies order (new position -> old node index, a permutation of every
 * node) to graph: nodes move, each value's producer and the node name
 * table follow. scratch holds n_nodes nodes. */
dfg_status dfg_training_renumber_nodes(dfg_graph *graph, const int32_t *order,
                                       dfg_ir_node *scratch);

/* The same, with scratch allocated here. */
dfg_status dfg_training_reorder_nodes(dfg_graph *graph, const int32_t *order);

/* Turns every live batch_norm into batch_norm_train (src/ops.def) in the
 * same place of the order: batch statistics, running statistics updated
 * in place (passes/training_batch_norm.c). */
dfg_status dfg_training_batch_norm_mode(dfg_graph *graph);

/* What rematerialization did (passes/remat.c). */
typedef struct dfg_remat_report {
    int64_t unconstrained_arena, budget, arena;
    int32_t recomputed;          /* saved activations recomputed */
    double extra_flops_percent;  /* of the step's FLOPs before */
    /* The arenas each strategy reached (0: not tried). */
    int64_t single_value_arena, segment_arena;
} dfg_remat_report;

/* With a memory budget in t, recomputes saved activations in backward,
 * cheapest FLOPs per byte freed first, until a plan of graph (with o's
 * planner) fits; when single values cannot, checkpoint segments
 * (passes/checkpoint.c). DFG_ERR_PLAN naming the smallest arena reached
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
