/* Rematerialization to a memory budget: the driver (passes/remat/remat.c)
 * and its strategies, one file each, which build on the shared machinery
 * of remat_core.h and call nothing else of rematerialization. Every
 * function works on a graph after the training pass (the stem slicing
 * before it); none keeps a pointer past its return. */
#ifndef DFG_REMAT_H
#define DFG_REMAT_H

#include "passes/remat/remat_core.h"

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

/* Where the budget is met: each recomputed copy, most FLOPs saved first
 * (at least 0.5% of step_flops, the step's), replaced for its readers by the nearest
 * earlier copy of the same value (or the value itself), kept where a
 * trial plan still fits report->budget, if need be with saved
 * activations alive at its peak recomputed too, for fewer FLOPs than the
 * merge saves (passes/remat/remat_merge.c);
 * report->arena, report->recomputed and *extra (FLOPs) are updated. */
dfg_status dfg_remat_merge_copies(dfg_graph *g, const dfg_compile_options *o,
                                  int64_t step_flops,
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

/* The same for the first conv -> batch_norm -> relu chain whose conv
 * reads a value the forward computes and whose relu only the next conv
 * reads (a residual block's first conv, bn and relu); the next conv reads
 * the concat whole. *n_slices is 0 where none matches. */
dfg_status dfg_slice_first_block(dfg_graph *g, int32_t *n_slices);

#endif
