/* Rematerialization's shared machinery (passes/remat/remat.c), used by its two
 * strategies: single saved activations (remat.c) and checkpoint segments
 * (passes/remat/checkpoint.c). Every function works on a graph after the
 * training pass; none keeps a pointer past its return. */
#ifndef DFG_REMAT_H
#define DFG_REMAT_H

#include "training/training.h"

/* 1 if v is a saved activation that a recomputation can make: a forward
 * value backward reads, from a deterministic single-output op that is not
 * a view (or output 0 of batch_norm_train). */
int dfg_remat_recomputable(const dfg_graph *g, int32_t v);

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

/* g's recomputable saved activations, cheapest first (*n of them; the
 * array is g's allocator's, NULL when out of memory). */
dfg_remat_candidate *dfg_remat_candidates(const dfg_graph *g, int32_t *n);

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

/* Recomputes the n_set values of set (each dfg_remat_recomputable) once,
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

/* Recomputes, in backward, each saved activation that a cheap
 * elementwise chain remakes from operands kept anyway (at most 4 FLOPs
 * per byte freed), where that shrinks the arena (passes/remat/remat_cheap.c).
 * Every training step does. */
dfg_status dfg_remat_cheap(dfg_graph *g, const dfg_compile_options *o);

/* Fuses conv weight gradients that only their optimizer update reads
 * into the update, which then computes them in slices of output channels
 * (passes/remat/fuse_weight_update.c), each where a trial plan's arena does not
 * grow; *arena receives the arena after them, *n_fused how many. */
dfg_status dfg_fuse_weight_updates(dfg_graph *g, const dfg_compile_options *o,
                                   int64_t *arena, int32_t *n_fused);

/* relu's gradients where(greater(y, 0), dy, 0) become relu_grad(y, dy)
 * (passes/remat/relu_grad.c) when a trial plan's arena is below *arena, which
 * is updated; *n_rewritten: how many (0 when not kept). */
dfg_status dfg_relu_grads(dfg_graph *g, const dfg_compile_options *o,
                          int64_t *arena, int32_t *n_rewritten);

/* Fused updates (dfg_fuse_weight_updates) run before their conv's input
 * gradient, which reads a copy of the weight made where it was, where the
 * weight is smaller than the conv's input; kept when a trial plan's arena
 * is below *arena (or equal, with keep_equal), which is updated. */
dfg_status dfg_update_before_input_gradients(dfg_graph *g,
                                            const dfg_compile_options *o,
                                            int keep_equal, int64_t *arena);

/* What a recomputation may cost: chains of at most max_chain ops, at most
 * max_flops_per_byte FLOPs per byte freed (0: any); keep_equal: kept when
 * the arena stays the same (it may take several to move a peak). */
typedef struct dfg_remat_limits {
    int32_t max_chain;
    double max_flops_per_byte;
    int keep_equal;
} dfg_remat_limits;

/* Recomputes v on a copy of *work (when dfg_remat_recomputable and within
 * limits); the copy replaces *work when its trial arena is below *arena
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

/* Where the budget is still missed: recomputed copies alive at the
 * plan's peak made a second time for their later readers
 * (passes/remat/remat_split.c), each kept where a trial plan's arena shrinks;
 * report->arena, report->recomputed and *extra (FLOPs) are updated. */
dfg_status dfg_remat_split_copies(dfg_graph *g, const dfg_compile_options *o,
                                  dfg_remat_report *report, int64_t *extra);

/* Where the budget is missed after that: the same with each copy's
 * recomputed operands made again too, and the later recomputations that
 * are then the same as an earlier one dropped for it (its readers read
 * the earlier; passes/remat/remat_split.c). */
dfg_status dfg_remat_split_chains(dfg_graph *g, const dfg_compile_options *o,
                                  dfg_remat_report *report, int64_t *extra);

/* Where the budget is missed after that: recomputed copies alive at the
 * plan's peak made image by image from the graph input, through chains
 * of per-image ops, into the slots of a concat along the batch
 * (passes/remat/remat_per_image.c), each kept where a trial plan's arena
 * shrinks; report->arena, report->recomputed and *extra are updated. */
dfg_status dfg_remat_per_image(dfg_graph *g, const dfg_compile_options *o,
                               dfg_remat_report *report, int64_t *extra);

/* Checkpoint segments (passes/remat/checkpoint.c), found on copies of a graph
 * and then applied to the graph itself: the forward's recomputable saved
 * activations, in forward order, cut into segments of about
 * segment_bytes each (the last value of a segment is its checkpoint and
 * stays), and the cheapest n_taken segments (FLOPs per byte) recomputed. */
typedef struct dfg_checkpoint_plan {
    int64_t segment_bytes;
    int32_t n_taken;
    int64_t arena;        /* planned arena; 0 when nothing was tried */
    int64_t extra_flops;
    int32_t recomputed;   /* saved activations in the taken segments */
} dfg_checkpoint_plan;

/* Tries segment sizes and, for each, the segments cheapest first with a
 * trial plan after each, and keeps in *best the choice that fits budget
 * with the fewest extra FLOPs, or else the one with the smallest arena.
 * g is not changed. */
dfg_status dfg_checkpoint_search(const dfg_graph *g,
                                 const dfg_compile_options *o, int64_t budget,
                                 dfg_checkpoint_plan *best);

/* Applies plan (from dfg_checkpoint_search on this graph) to g;
 * *extra_flops receives the recomputations' FLOPs. */
dfg_status dfg_checkpoint_apply(dfg_graph *g, const dfg_checkpoint_plan *plan,
                                int64_t *extra_flops);

/* 1 if node is a live recomputation of v (passes/remat/remat_merge.c). */
int dfg_remat_is_copy_of(const dfg_graph *g, const dfg_ir_node *node,
                         int32_t v);

/* Drops the recomputations no node reads (and then what only they read);
 * *flops receives their FLOPs. */
dfg_status dfg_remat_drop_unread(dfg_graph *g, int64_t *flops);

/* Where the budget is met: each recomputed copy, most FLOPs saved first
 * (at least 0.5% of the step's), replaced for its readers by the nearest
 * earlier copy of the same value (or the value itself), kept where a
 * trial plan still fits report->budget, if need be with saved
 * activations alive at its peak recomputed too, for fewer FLOPs than the
 * merge saves (passes/remat/remat_merge.c);
 * report->arena, report->recomputed and *extra (FLOPs) are updated. */
dfg_status dfg_remat_merge_copies(dfg_graph *g, const dfg_compile_options *o,
                                  dfg_remat_report *report, int64_t *extra);

/* A lower bound on any arena recomputation reaches for g: the bytes a
 * batch-norm backward reads at once (passes/remat/remat_floor.c); *node
 * receives that node (-1 when g has none, and the floor is 0). */
int64_t dfg_remat_operand_floor(const dfg_graph *g, int32_t *node);

/* Slices the first conv (of a graph input) -> batch_norm [-> relu]
 * [-> max_pool] chain of a forward graph, before the training pass, into
 * chains over slices of the output channels joined by a concat
 * (passes/remat/remat_sliced_stem.c); *n_slices is 0 where none matches. */
dfg_status dfg_slice_stem(dfg_graph *g, int32_t *n_slices);

#endif
