/* The compiler's internal pass interface: one file per pass in passes/,
 * ordered by passes/pipeline.c.
 *
 * Each pass is one function over the graph (a private clone made by
 * dfg_compile, never the caller's) plus a dfg_pass_report of what it did.
 * Graph passes (verify, fold, dce) change only the graph. The planning
 * passes build plain arrays indexed by value, node or step:
 *
 *   schedule  execution order and every value's own first/last step
 *   alias     which values share another value's bytes (views, in place)
 *   liveness  lifetime of every byte owner and the planner's buffers
 *   lower     graph + the above + placement -> dfg_program
 *
 * Every array a planning pass fills is allocated with the allocator it is
 * given and freed by the matching *_free() function, which is safe on a
 * zeroed or partly filled struct. A failing pass leaves a message
 * (dfg_last_error()) naming the node and op, and frees what it made. */
#ifndef DFG_PASS_H
#define DFG_PASS_H

#include <stdint.h>
#include "dfg/allocator.h"
#include "dfg/compile.h"
#include "dfg/program.h"
#include "dfg/training.h"
#include "ir/graph.h"
#include "passes/memory_plan.h"
#include "program/program.h"

/* What a pass did; counts it does not use stay 0. */
typedef struct dfg_pass_report {
    const char *pass;        /* "verify", "fold", ... (static string) */
    int32_t nodes_folded;    /* fold: nodes evaluated at compile time */
    int32_t nodes_removed;   /* dce: nodes marked dead */
    int32_t values_removed;  /* dce: weights/constants no longer read */
    int32_t views;           /* alias: values sharing their source's bytes */
    int32_t in_place;        /* alias: outputs written over a dying input */
    int32_t materialised;    /* alias: view ops kept as copies (outputs) */
    int32_t concat_parts;    /* alias: concat inputs written into its output,
                                prefix concats into a longer one's */
    int32_t nodes_fused;     /* fuse_*: nodes merged into another */
    int32_t values_blocked;  /* layouts: values given a blocked layout */
    int32_t reorders;        /* layouts: reorder nodes added */
    int32_t weights_shared;  /* share_weights: stored tensors no longer
                                read, their readers reading an equal or
                                transposed one */
    int32_t nodes_tiled;     /* tile_spatial: region nodes replaced by
                                their bands' copies */
} dfg_pass_report;

/* Checks that the graph is well formed: every live node's inputs exist and
 * are leaves or outputs of earlier live nodes, re-running its shape rule
 * gives its recorded output types, and there is at least one output, each
 * of them live. DFG_ERR_INVALID_ARGUMENT / DFG_ERR_SHAPE otherwise. */
dfg_status dfg_pass_verify(const dfg_graph *graph, dfg_pass_report *report);

/* Evaluates every live node whose inputs are all constants on the CPU
 * backend and turns its outputs into constants (the node is marked dead).
 * Nodes producing a graph output, or an output larger than
 * DFG_FOLD_MAX_BYTES, are left to run time. */
#define DFG_FOLD_MAX_BYTES ((int64_t)64 << 20)
dfg_status dfg_pass_fold(dfg_graph *graph, dfg_pass_report *report);

/* Marks dead every node none of whose outputs is read by a live node or is
 * a graph output. */
dfg_status dfg_pass_dce(dfg_graph *graph, dfg_pass_report *report);

/* Inference, after fold and dce: a weight or constant equal to another,
 * byte for byte, or to another's transpose (2-D) is read as that one,
 * products reading a transposed copy read the kept one with a transposed
 * operand (passes/share_weights.c); the copies are no longer read. */
dfg_status dfg_pass_share_weights(dfg_graph *graph, dfg_pass_report *report);

/* Inference fusion (passes/fusion/fuse_*.c), after fold and dce. Decomposed
 * layer norms (reduce_mean, sub, pow 2, reduce_mean, add eps, sqrt, div,
 * mul scale, add bias over the last axis) become one layer_norm node, and
 * decomposed GELUs (x * (erf(x / sqrt 2) + 1) * 0.5, and the tanh form
 * as PyTorch exports it) one gelu node, x * sigmoid(x) one silu node and
 * x * clip(x / 6 + 1 / 2, 0, 1) one hardswish node. */
/* Inference, after fuse_patterns (whose patterns it would break up), before
 * the other fusion passes: a transpose or reshape
 * whose one reader is element-wise (one input, or two moved alike) runs
 * after it, a transpose after a concat of transposes alike and after a pad
 * that a transpose reads, and a
 * transpose of a transpose is one (none, a view, where they cancel):
 * composed ops' moves meet their inverses, and activations their convs
 * (passes/fusion/sink_transposes.c). */
dfg_status dfg_pass_sink_transposes(dfg_graph *graph, dfg_pass_report *report);
/* Folds each inference batch_norm that alone reads a conv2d's output into
 * that conv's weights and bias (passes/fusion/fold_batch_norm.c). */
dfg_status dfg_pass_fold_batch_norm(dfg_graph *graph, dfg_pass_report *report);
dfg_status dfg_pass_fuse_patterns(dfg_graph *graph, dfg_pass_report *report);
/* A conv2d takes what follows it as post-ops (dfg_attrs.post_ops): relu,
 * clip, sigmoid, hardsigmoid (clip(x * a + b, 0, 1)), silu, hardswish,
 * gelu, and first an add of a tensor of its output's
 * type (the residual, its input 3), each only when the conv's output (and
 * every intermediate) has no other reader and is no graph output. The
 * fused node is named after its nodes, joined by '+'. */
dfg_status dfg_pass_fuse_conv(dfg_graph *graph, dfg_pass_report *report);
/* Before fuse_conv: a 1x1 conv2d at stride 1 with no padding whose
 * output only an average pool with no padding reads runs after the pool
 * instead (passes/pool_first.c: the two commute), on the fewer pixels,
 * where the pool shrinks the plane. Inference, with the fusion passes. */
dfg_status dfg_pass_pool_first(dfg_graph *graph, dfg_pass_report *report);
/* Before pool_first: a pad of zeros on the rows and columns of a 4-D f32
 * value (each side less than the window) whose output only an average
 * pool with no padding and no ceil_mode reads becomes that pool's padding,
 * counted (count_include_pad): the same output without the padded copy
 * (passes/pool_first.c). Inference, with the fusion passes. */
dfg_status dfg_pass_pad_into_pool(dfg_graph *graph, dfg_pass_report *report);
/* Before fuse_conv: a pad of zeros on the rows and columns of an f32
 * value (each side at most the dilated kernel's extent less one) that
 * only a conv2d reads, maybe through the unsqueeze of a 1-D conv, becomes
 * that conv's padding (passes/fusion/pad_into_conv.c). Inference, with the
 * fusion passes. */
dfg_status dfg_pass_pad_into_conv(dfg_graph *graph, dfg_pass_report *report);
/* A batch_norm takes the activations that follow it (fuse_conv's, no
 * add) as post-ops under the same conditions and names: one pass over y
 * instead of two. For backends whose batch_norm kernel applies them (the
 * CPU's; dfg_compile_options, passes/pipeline.c). */
dfg_status dfg_pass_fuse_norm_activation(dfg_graph *graph,
                                         dfg_pass_report *report);
/* A matmul or gemm takes an add of a row of N values after it as its bias
 * (a matmul's input 2, a gemm's C with beta 1, where it has none), then
 * post-ops as a conv2d's (a gemm takes no residual); the same conditions
 * and names. */
dfg_status dfg_pass_fuse_matmul(dfg_graph *graph, dfg_pass_report *report);
/* Before fuse_matmul, where the target runs it (dfg_compile_options.
 * fuse_attention): matmul(q, kt), a scale by a scalar, an optional mask
 * add, softmax over the last axis and matmul(.., v) become one attention
 * node (passes/fusion/fuse_attention.c); the same conditions and names. */
dfg_status dfg_pass_fuse_attention(dfg_graph *graph,
                                   dfg_pass_report *report);
/* A transpose that only moves dims of size 1 becomes a reshape (a view:
 * no step, no copy). Inference, with the fusion passes. */
dfg_status dfg_pass_transpose_views(dfg_graph *graph,
                                    dfg_pass_report *report);
/* A transpose of the last two dims (perm [0, .., r-1, r-2]) whose one
 * reader is a matmul or gemm (as input 0 or 1) folds into it: the product
 * reads the transpose's input with its trans_a / trans_b flipped, and
 * the transpose's copy goes. With fuse_operators, inference and training
 * (autodiff's matmul gradients, g . b^T and a^T . g), on a target whose
 * products take transposed operands (dfg_target.transposed_operands:
 * cuBLAS's transa / transb). */
dfg_status dfg_pass_transpose_operands(dfg_graph *graph,
                                       dfg_pass_report *report);

/* Inference after fusion: activations between convolutions keep the
 * layout their backend wants, with reorder nodes at the boundaries
 * (passes/layout_assign.c): with target NULL (or one without
 * conv_layout) the blocked layout oneDNN wants on this CPU, else the one
 * target->conv_layout names (the CUDA backend's nhwc). Tensors that stay
 * plain are left alone; a graph with no such conv is unchanged. */
dfg_status dfg_pass_assign_layouts(dfg_graph *graph, const dfg_target *target,
                                   dfg_pass_report *report);

/* DFG_ERR_INVALID_ARGUMENT or DFG_ERR_UNSUPPORTED, naming what, where o
 * cannot be compiled with (planner, alignment, allocator, precision,
 * workspaces; compile_options.c). */
dfg_status dfg_compile_options_check(const dfg_compile_options *o);

/* Whether options' precision (f32, f16 or bf16, with allow_tf32) runs on
 * target (NULL: the CPU backend's rules): f16 and bf16 with every tensor
 * 16-bit for inference on a target with half_inference; bf16 activations
 * beside f32 weights (mixed precision) where f32_storage_only is 0; f16
 * nowhere else. The error names the precision, the backend and caller. */
dfg_status dfg_check_precision(const dfg_compile_options *options,
                               const dfg_target *target, const char *caller);

/* DFG_ERR_UNSUPPORTED, naming the first, if a live node's op has no
 * kernel on target (dfg_compile_options.target; NULL: none refused). The
 * graph's final ops: run after every rewriting pass. */
dfg_status dfg_pass_check_target(const dfg_graph *graph,
                                 const dfg_target *target);

/* Concats that run no step: their inputs are written straight into their
 * output, or their output is the first bytes of a longer concat's output
 * that holds the same first inputs (passes/concat_views.c). */
enum {
    DFG_CONCAT_COPIES = 0,      /* runs a step */
    DFG_CONCAT_HOLDS_PARTS = 1, /* its inputs are parts of its output */
    DFG_CONCAT_IS_PREFIX = 2    /* its output is a part (at offset 0) of a
                                   longer concat's output */
};
typedef struct dfg_concat_views {
    uint8_t *elided;      /* [n_nodes] DFG_CONCAT_*: nonzero runs no step */
    int32_t *part_of;     /* [n_values] the concat output holding v's bytes
                             (a part, or a prefix concat's output), or -1 */
    int64_t *part_offset; /* [n_values] where, in bytes */
    int32_t n_elided;
} dfg_concat_views;

/* Which tensors read by several concats become parts (dfg_compile scores
 * each policy and keeps the smallest lower bound). */
typedef enum dfg_concat_policy {
    DFG_CONCAT_LAST_READER = 0, /* a part of the last concat reading it
                                   (and of that concat's prefixes) */
    DFG_CONCAT_ONE_FAMILY = 1,  /* only if every concat reading it is in one
                                   family */
    DFG_CONCAT_POLICIES = 2
} dfg_concat_policy;

dfg_status dfg_pass_concat_views(const dfg_graph *graph,
                                 dfg_concat_policy policy,
                                 const dfg_allocator *allocator,
                                 dfg_concat_views *out);
void dfg_concat_views_free(dfg_concat_views *concat,
                           const dfg_allocator *allocator);

/* dfg_compile_options.prefer_memory inside the pipeline only: memory
 * first (1), its convs on blocked operands that Winograd takes keeping
 * their Winograd scratch (dfg_node_costs_fit_convs): a tiled program
 * whose tighter bound would otherwise leave them on the direct primitive,
 * offered beside it (passes/pipeline.c). */
#define DFG_PREFER_MEMORY_PRODUCTS 3

/* Per live node, from its op's rules: the bytes of its step's workspace
 * (blas_workspace_bytes, or the backend's rule for its library's scratch,
 * included; 0 for none), what of it the backend's library runs it in,
 * and its FLOP count. Built
 * once per compilation; every order scored and the program read it. */
typedef struct dfg_node_costs {
    int64_t *workspace;   /* [n_nodes] */
    int64_t *flops;       /* [n_nodes] */
    /* [n_nodes] the workspace liveness plans: workspace itself, or after
     * dfg_node_costs_fit_convs the least a conv works with */
    int64_t *workspace_least;
    /* [n_nodes] after dfg_node_costs_fit_convs with prefer_memory: for a
     * step that can run without its backend's library or BLAS scratch,
     * the op's own full workspace, maybe 0 (it takes its whole workspace
     * only where that fits under the bound, else grows up to this); -1
     * elsewhere */
    int64_t *workspace_own;
    /* [n_nodes] after dfg_node_costs_in_place: the workspace of the step
     * written over its input 0 by its kernel's in-place form
     * (dfg_op_in_place_workspace), where that step runs dfg's kernel
     * (no library scratch it needs) on a target that has the form; -1
     * where the alias pass may not plan it so */
    int64_t *in_place_workspace;
    /* [n_nodes] the least workspace the backend's library runs the step
     * in, by the backend's rule: the whole workspace, or after
     * dfg_node_costs_fit_convs with prefer_memory, for a step only the
     * library runs (blocked operands), the least its rule gives; -1
     * where the library does not run the step. Where it is 0 the step
     * keeps a workspace even of 0 bytes, which marks it for the library
     * in the program (runtime/cpu/onednn/dnnl_steps.c); a step that
     * may go without the library (workspace_own) and gets less than
     * this runs dfg's kernel */
    int64_t *library_workspace;
} dfg_node_costs;

dfg_status dfg_node_costs_build(const dfg_graph *graph,
                                int64_t blas_workspace_bytes,
                                dfg_backend_workspace_fn backend_workspace,
                                const dfg_allocator *allocator,
                                dfg_node_costs *out);
void dfg_node_costs_free(dfg_node_costs *costs, const dfg_allocator *allocator);
/* Lowers workspace_least to the least workspace of every conv step that
 * holds no backend scratch (dfg_op_least_workspace), for
 * dfg_plan_fitting_workspaces to grow where there is room: inference
 * programs only (passes/workspace_fit.c says why). With prefer_memory
 * (dfg_compile_options), also of every step on plain operands that the
 * backend's library runs or whose workspace holds BLAS scratch: the
 * bound is then the one without library scratch, and such a step keeps
 * the scratch only where it fits under it; a step on blocked operands,
 * which only the library runs, plans from the least scratch least_rule
 * (the backend's, or NULL: none) gives it, and takes its whole
 * workspace only where that fits; but with DFG_PREFER_MEMORY_PRODUCTS a
 * conv on blocked operands that Winograd's shape rule takes keeps its
 * whole workspace (Winograd's scratch), the bound rising for it where it
 * must. */
dfg_status dfg_node_costs_fit_convs(const dfg_graph *graph, int prefer_memory,
                                    dfg_backend_workspace_fn least_rule,
                                    const dfg_allocator *allocator,
                                    dfg_node_costs *costs);

/* Fills costs->in_place_workspace (all -1 unless allowed). An in-place
 * depthwise conv lowers the arena but runs dfg's plain kernel, never a
 * library's, so it is planned only where the step would run that kernel
 * anyway or may go without its library's scratch: no backend rule, no
 * scratch from it (oneDNN does not take the conv), or prefer_memory
 * (dfg_node_costs_fit_convs); target_has_it: the target runs the form
 * (dfg_target.in_place_depthwise). */
dfg_status dfg_node_costs_in_place(const dfg_graph *graph, int target_has_it,
                                   const dfg_allocator *allocator,
                                   dfg_node_costs *costs);

/* Execution order and each value's own lifetime. A value is in the
 * program ("lowered") if it is a graph input, a graph output, an output of
 * a live node, or a weight/constant read by a live node. */
typedef struct dfg_schedule {
    int32_t n_steps;
    int32_t *step_node;   /* [n_steps] node index of each step */
    int32_t *node_step;   /* [n_nodes] step of a live node, -1 if dead */
    int32_t *first;       /* [n_values] step writing it (leaves: 0), -1 if
                             not lowered */
    int32_t *last;        /* [n_values] last step reading it; graph outputs:
                             the last step; never read: first */
} dfg_schedule;

/* order: every live node once, in a topological order (NULL: recorded
 * order); concat: NULL, or the concats that run no step. */
dfg_status dfg_pass_schedule(const dfg_graph *graph, const int32_t *order,
                             const dfg_concat_views *concat,
                             const dfg_allocator *allocator,
                             dfg_schedule *out);

/* Fills order with every live node once, in a topological order that
 * also keeps every node touching a weight or constant that some op writes
 * in place (optimizer updates) in recorded order, chosen greedily to keep
 * few bytes alive: at each step the ready node that frees the most and
 * allocates the least runs next; ties go to the node recorded first
 * (depth_first 0) or readied last (1). The ready nodes wait in a heap:
 * O((nodes + edges) log nodes) (passes/schedule_order.c). */
dfg_status dfg_schedule_by_memory(const dfg_graph *graph,
                                  const dfg_concat_views *concat,
                                  int depth_first,
                                  const dfg_allocator *allocator,
                                  int32_t *order);
void dfg_schedule_free(dfg_schedule *schedule, const dfg_allocator *allocator);

/* How each value gets its bytes. root[v] is the value that owns the bytes
 * v lives in (v itself if it owns them) and offset[v] the byte offset of v
 * within root[v]. how[v] says why v shares: DFG_ALIAS_VIEW (a view op),
 * DFG_ALIAS_INPLACE (written over a dying input), DFG_ALIAS_NONE (owner). */
typedef struct dfg_alias_plan {
    int32_t *root;          /* [n_values] */
    int64_t *offset;        /* [n_values] */
    dfg_alias_kind *how;    /* [n_values] */
} dfg_alias_plan;

/* costs: NULL, or costs->in_place_workspace says which steps may write
 * over their input 0 where that needs a workspace of its own (a conv2d
 * over x); with NULL none does. */
dfg_status dfg_pass_alias(const dfg_graph *graph,
                          const dfg_schedule *schedule,
                          const dfg_concat_views *concat, int reuse_in_place,
                          const dfg_node_costs *costs,
                          const dfg_allocator *allocator, dfg_alias_plan *out,
                          dfg_pass_report *report);
void dfg_alias_plan_free(dfg_alias_plan *alias, const dfg_allocator *allocator);

/* 1 if a value lives in the weights region (a weight or constant). */
int dfg_value_is_stored(const dfg_graph *graph, int32_t value);

/* Lifetimes of byte owners and the planner's input: one dfg_buffer per
 * arena root (graph inputs and node outputs that own bytes), then one per
 * step that needs a workspace. */
typedef struct dfg_liveness {
    int32_t *root_first;     /* [n_values] for roots: first step of the
                                bytes (over the root and all that share) */
    int32_t *root_last;      /* [n_values] ... last step */
    int32_t n_buffers;
    dfg_buffer *buffers;     /* [n_buffers] offsets written by a planner */
    int32_t *root_buffer;    /* [n_values] buffer of an arena root, or -1 */
    uint8_t *step_in_place;  /* [n_steps] 1 where the step writes over its
                                input 0 with its own in-place workspace
                                (dfg_node_costs.in_place_workspace), which
                                is never grown */
    int32_t *step_workspace; /* [n_steps] buffer of the step's workspace,
                                or -1 */
} dfg_liveness;

dfg_status dfg_pass_liveness(const dfg_graph *graph,
                             const dfg_schedule *schedule,
                             const dfg_alias_plan *alias,
                             const dfg_node_costs *costs,
                             const dfg_allocator *allocator,
                             dfg_liveness *out);
void dfg_liveness_free(dfg_liveness *liveness, const dfg_allocator *allocator);

/* Splits the buffer of each concat output that no step writes into cells,
 * a rigid group whose cells live from their own part's producer on
 * (passes/concat_cells.c); l->buffers is reallocated, root_buffer names
 * each group's base cell. */
dfg_status dfg_pass_concat_cells(const dfg_graph *graph,
                                 const dfg_schedule *schedule,
                                 const dfg_alias_plan *alias,
                                 int64_t alignment,
                                 const dfg_allocator *allocator,
                                 dfg_liveness *l);

/* The operand types of a node, inputs then outputs (n_inputs + n_outputs
 * entries; rank -1 for an absent optional input), in an array allocated
 * with allocator that the caller frees; NULL when out of memory. */
dfg_type *dfg_node_types(const dfg_graph *graph, int32_t node,
                         const dfg_allocator *allocator);
/* Workspace bytes a node needs (its op's workspace rule; 0 for none) and
 * its FLOP count, from operand types made by dfg_node_types. */
int64_t dfg_node_workspace_bytes(const dfg_graph *graph, int32_t node,
                                 const dfg_type *types);
int64_t dfg_node_flops(const dfg_graph *graph, int32_t node,
                       const dfg_type *types);

/* An execution order with its aliasing and lifetimes
 * (passes/schedule_choice.c). */
typedef struct dfg_planned_order {
    dfg_concat_views concat;
    dfg_schedule schedule;
    dfg_alias_plan alias;
    dfg_liveness liveness;
    int64_t lower_bound;          /* of this order */
    int64_t recorded_lower_bound; /* of the recorded order (with the
                                     best of the concat policies) */
} dfg_planned_order;

typedef struct dfg_order_inputs {
    const dfg_node_costs *costs;
    int reuse_in_place;
    int64_t alignment;
} dfg_order_inputs;

/* Plans the recorded order and the memory-aware ones, each with every
 * dfg_concat_policy, and keeps in *best the one with the smallest lower
 * bound (on a tie the first: recorded order, LAST_READER). Free with
 * dfg_planned_order_free. */
dfg_status dfg_choose_order(const dfg_graph *graph, const dfg_order_inputs *in,
                            const dfg_allocator *allocator,
                            dfg_planned_order *best);
void dfg_planned_order_free(dfg_planned_order *order,
                            const dfg_allocator *allocator);

/* live[t]: the aligned bytes of l's buffers live at step t, for every
 * step of n_steps or of a buffer; *bound receives the largest (the lower
 * bound). NULL when out of memory; free with dfg_free. */
int64_t *dfg_live_bytes(const dfg_liveness *l, int32_t n_steps,
                        int64_t alignment, const dfg_allocator *allocator,
                        int64_t *bound);

/* Grows each step's workspace buffer in l from its least size
 * (workspace_least) towards its full one (workspace) as far as the lower
 * bound allows, then places l's buffers with planner
 * (DFG_PLANNER_SMALLEST: the smallest of every planner); keeps the least
 * sizes if those give the smaller arena (passes/workspace_fit.c). Sizes
 * and offsets in l->buffers, the arena in *arena_bytes, the planner in
 * *winner. With DFG_PLANNER_SMALLEST, an arena above target (bytes; 0:
 * none) whose lower bound is not gets a longer hill climb. */
dfg_status dfg_plan_fitting_workspaces(dfg_planner planner,
                                       const dfg_schedule *schedule,
                                       const dfg_node_costs *costs,
                                       int64_t alignment, int64_t target,
                                       const dfg_allocator *allocator,
                                       dfg_liveness *l, int64_t *arena_bytes,
                                       dfg_planner *winner);

/* A graph planned as dfg_compile plans it (passes/graph_plan.c): node
 * costs, the order with the smallest lower bound and its buffers placed
 * by o's planner (winner: the planner that made the arena, for
 * DFG_PLANNER_SMALLEST the smallest one). Free with dfg_graph_plan_free,
 * after an error too. */
typedef struct dfg_graph_plan {
    dfg_node_costs costs;
    dfg_planned_order order;
    int64_t arena_bytes;
    dfg_planner winner;
} dfg_graph_plan;

dfg_status dfg_plan_graph(const dfg_graph *graph, const dfg_compile_options *o,
                          const dfg_allocator *allocator, dfg_graph_plan *out);
void dfg_graph_plan_free(dfg_graph_plan *plan, const dfg_allocator *allocator);
/* The arena dfg_plan_graph places the buffers for: a training step's
 * memory budget in bytes (0: none, or a percentage not resolved yet). */
int64_t dfg_plan_target(const dfg_compile_options *o);
/* o with t as its training options and the budget resolved to `budget`
 * bytes (copies in *with and *in_bytes), so that the budget search's trial
 * plans and the program's plan take the same target; returns with. */
const dfg_compile_options *dfg_options_with_budget(
    const dfg_compile_options *o, const dfg_training_options *t,
    int64_t budget, dfg_compile_options *with, dfg_training_options *in_bytes);

/* Builds the program from the placed buffers; stats.verified is left 0.
 * arena_bytes is the planner's arena size. */
dfg_status dfg_pass_lower(const dfg_graph *graph, const dfg_schedule *schedule,
                          const dfg_alias_plan *alias,
                          const dfg_liveness *liveness,
                          const dfg_node_costs *costs, int64_t arena_bytes,
                          const dfg_compile_options *options,
                          dfg_program **out);

/* 1 if a library's kernel runs step `step` of p, a product (conv2d,
 * matmul, gemm: dfg_op_uses_blas), as the backend p's workspace rule
 * names decides at session creation, from p alone: on the CPU, a step on
 * blocked operands, or one whose planned workspace holds oneDNN's least
 * scratch and that writes over none of its inputs
 * (runtime/cpu/onednn/dnnl_steps.c); on another backend, every product;
 * with no rule, none. 0 for every other op. */
int dfg_program_step_on_library(const dfg_program *p, int32_t step);

/* What running p costs, in FLOPs weighted by what runs them, for memory
 * first's choice among its programs (passes/pipeline.c): a product step
 * that no library's kernel runs (dfg_program_step_on_library) counts
 * dfg_kernel_weight times its FLOPs, but for a conv on dfg's few-filter
 * kernel (dfg_cpu_step_few_filters), every other step its FLOPs. */
uint64_t dfg_program_cost(const dfg_program *p, int dfg_kernel_weight);

/* What a step costs beside its arithmetic, in FLOPs of one thread:
 * DFG_STEP_FLOPS for running it at all, DFG_MOVED_BYTE_FLOPS per byte of
 * its outputs when it only moves data (no FLOPs: slices, concats,
 * reorders), and DFG_WEIGHT_BYTE_FLOPS per byte of the weight a product
 * reads (a conv's filter, a matmul's matrix), which each call streams
 * through the cache again; counted once per thread a session runs on
 * (dfg_cpu_threads): the arithmetic shares out over the threads, these
 * costs do not. Tiled execution weighs its bands and carried halos so
 * (passes/tiling/tile_spatial.h): a band's step on a few rows costs its call
 * and the reads of its filter again, so a conv in many bands with a
 * large filter (resnet50's 256-channel stage) costs more than one with
 * a small filter (a depthwise conv's). */
#define DFG_STEP_FLOPS 400000
#define DFG_MOVED_BYTE_FLOPS 4
#define DFG_WEIGHT_BYTE_FLOPS 8

/* That cost of one step: weight_bytes, the weight it reads as a product
 * (0 for another op), and moved_bytes, the outputs it writes computing
 * nothing. The program's count (dfg_program_overhead) and tiling's
 * estimate of a graph (tile_estimate.c) both weigh a step so. */
uint64_t dfg_step_overhead(int64_t weight_bytes, int64_t moved_bytes);

/* The sum of that over p's steps, which memory first adds to a
 * program's cost (passes/pipeline.c): a program in many bands of rows
 * runs many more steps and copies than one untiled. */
uint64_t dfg_program_overhead(const dfg_program *p);

/* What a conv's FLOPs cost more, in percent, on oneDNN's direct
 * primitive than on a faster product, counted for each FLOP a tiled
 * program runs direct that its untiled variant ran faster: Winograd is up
 * to about twice as fast on the 3x3 convs it takes. */
#define DFG_DIRECT_CONV_EXTRA_PCT 100

/* The FLOPs of p's conv steps that run a product faster than oneDNN's
 * direct primitive by the CPU's rule (0 on another backend): one takes
 * the step's shape and its planned workspace holds the room it asks.
 * Memory first counts DFG_DIRECT_CONV_EXTRA_PCT of what a tiled program
 * has less of them than its variant's untiled program: a band's few
 * rows, or the lower peak its workspace is planned under, can leave a
 * conv that ran as Winograd untiled on the direct primitive. */
uint64_t dfg_program_product_flops(const dfg_program *p);

#endif
