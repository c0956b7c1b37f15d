/* Rematerialization's shared machinery (passes/remat/remat_core.c) and
 * its trial plans (passes/remat/remat_trial.c): what the strategies of
 * remat.h build on. Nothing here calls a strategy or the driver. Every
 * function works on a graph after the training pass; none keeps a
 * pointer past its return. */
#ifndef DFG_REMAT_CORE_H
#define DFG_REMAT_CORE_H

#include "passes/training/training.h"

/* 1 if v is a saved activation that a recomputation can make: a forward
 * value backward reads, from a deterministic single-output op that is not
 * a view (or output 0 of batch_norm_train). */
int dfg_remat_recomputable(const dfg_graph *g, int32_t v);

/* 1 if v is a saved activation made by a view of a forward value that is
 * kept for it alone (no backward node reads that value, and no
 * recomputation may read it as it is): recomputing v makes that value
 * again too and frees its bytes (attention's context, a transpose that
 * the output projection's weight gradient reads through a reshape). */
int dfg_remat_view_recomputable(const dfg_graph *g, int32_t v);

/* No update writes an operand of node p before node index at. */
int dfg_remat_operands_unchanged_until(const dfg_graph *g,
                                       const dfg_ir_node *p, int32_t at);

/* 1 if node is a recomputation appended by dfg_remat_recompute (named
 * "<producer>/recompute_<n>", as the program's recomputing steps are). */
int dfg_remat_is_recomputation(const dfg_ir_node *node);

/* The length of a node's name up to any "/recompute_" in it: its
 * forward producer's name. */
size_t dfg_remat_base_length(const char *name);

/* "<base's forward name>/recompute_<n>" in name (DFG_REMAT_NAME_SIZE
 * bytes) for the node g adds next. */
#define DFG_REMAT_NAME_SIZE 300
void dfg_remat_copy_name(const dfg_graph *g, const char *base, char *name);

/* 1 if node reads v. */
int dfg_remat_reads(const dfg_ir_node *node, int32_t v);

/* The step of schedule s where the most bytes of l are live, and that
 * many in *live. */
int32_t dfg_remat_peak_step(const dfg_schedule *s, const dfg_liveness *l,
                            int64_t *live);

/* Plans g as dfg_compile would (*plan: free it with dfg_graph_plan_free,
 * also on an error) and finds the step of its plan where the most bytes
 * are live (*peak). */
dfg_status dfg_remat_plan_peak(const dfg_graph *g,
                               const dfg_compile_options *o,
                               dfg_graph_plan *plan, int32_t *peak);

/* 1 if v's bytes (its own, or those of the value it aliases: a relu
 * written over its batch norm's output) are live at step of plan. */
int dfg_remat_live_at(const dfg_graph_plan *plan, int32_t v, int32_t step);

/* The index of the first backward node: the nodes before it are the
 * forward pass (the training pass records the forward first). */
int32_t dfg_remat_first_backward(const dfg_graph *g);

/* A recomputable saved activation and its producer's FLOPs per byte. */
typedef struct dfg_remat_candidate {
    int32_t value;
    double cost;
} dfg_remat_candidate;

/* g's recomputable saved activations, with views is nonzero the views
 * of dfg_remat_view_recomputable too (their cost: the FLOPs of the chain
 * that makes the viewed value again, per byte), cheapest first (*n of
 * them; the array is g's allocator's, NULL when out of memory). */
dfg_remat_candidate *dfg_remat_candidates(const dfg_graph *g, int views,
                                          int32_t *n);

/* A node's FLOPs by its op's rule, and the sum over live nodes. */
int64_t dfg_remat_node_flops(const dfg_graph *g, int32_t node,
                             const dfg_allocator *allocator);
int64_t dfg_remat_total_flops(const dfg_graph *g);

/* Adds the recomputation of forward node p, named name, on operands in[]
 * (p->n_inputs of them; batch_norm_train's are rewritten: it recomputes
 * as the inference batch_norm from the batch statistics p returned, the
 * same y, the running statistics left alone); its output in *out. */
dfg_status dfg_remat_add_copy(dfg_graph *g, const dfg_ir_node *p,
                              int32_t *in, const char *name, int32_t *out);

/* Recomputes the n_set values of set (each dfg_remat_recomputable or
 * dfg_remat_view_recomputable) once,
 * just before the first backward node that reads any of them, from the
 * operands kept for backward; forward values between are recomputed too
 * (the chain, at most max_chain ops). Backward readers read the copies,
 * so the originals die with their last forward reader. *flops receives
 * the recomputation's FLOPs: 0 when nothing was done (the chain is too
 * long, or an update writes an operand before the recompute point).
 * Renumbers nodes; value numbers stay. */
dfg_status dfg_remat_recompute(dfg_graph *g, const int32_t *set,
                               int32_t n_set, int32_t max_chain,
                               int64_t *flops);

/* What a recomputation may cost: chains of at most max_chain ops, at most
 * max_flops_per_byte FLOPs per byte freed (0: any); keep_equal: kept when
 * the arena stays the same (it may take several to move a peak). */
typedef struct dfg_remat_limits {
    int32_t max_chain;
    double max_flops_per_byte;
    int keep_equal;
} dfg_remat_limits;

/* Recomputes v on a copy of *work (when dfg_remat_recomputable or
 * dfg_remat_view_recomputable, and within limits); the copy replaces *work when its trial arena is below *arena
 * (or equal, with keep_equal): *arena is updated and *flops receives the
 * recomputation's FLOPs. Otherwise the copy is dropped and *flops is 0. */
dfg_status dfg_remat_try_value(dfg_graph **work, const dfg_compile_options *o,
                               int32_t v, const dfg_remat_limits *limits,
                               int64_t *arena, int64_t *flops);

/* The arena dfg_compile would plan for g now. */
dfg_status dfg_remat_trial_arena(const dfg_graph *g,
                                 const dfg_compile_options *o,
                                 int64_t *arena);

/* The same, and in alive (size bytes) the step of its peak and the three
 * largest values live there, for an error. */
dfg_status dfg_remat_describe_peak(const dfg_graph *g,
                                   const dfg_compile_options *o,
                                   int64_t *arena, char *alive, size_t size);

/* 1 if node is a live recomputation of v (passes/remat/remat_merge.c). */
int dfg_remat_is_copy_of(const dfg_graph *g, const dfg_ir_node *node,
                         int32_t v);

/* Drops the recomputations no node reads (and then what only they read);
 * *flops receives their FLOPs. */
dfg_status dfg_remat_drop_unread(dfg_graph *g, int64_t *flops);


/* Marks in dropped[] (n_nodes) the recomputations no node would read,
 * given each value's readers in readers[] (counted down as they go),
 * and returns their FLOPs. g is not changed. */
int64_t dfg_remat_unread(const dfg_graph *g, int32_t *readers,
                         uint8_t *dropped);

#endif
