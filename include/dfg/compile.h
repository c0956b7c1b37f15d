/* Compiling a graph into a program, and re-planning a program's arena with
 * every planner.
 *
 * dfg_compile() runs the passes on a private copy of the graph (the caller's
 * graph is not changed and may be freed or compiled again) and returns an
 * immutable, self-contained program (include/dfg/program.h). */
#ifndef DFG_COMPILE_H
#define DFG_COMPILE_H

#include <stdint.h>
#include "dfg/allocator.h"
#include "dfg/graph.h"
#include "dfg/program.h"
#include "dfg/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dfg_compile_options {
    dfg_planner planner;        /* DFG_PLANNER_SMALLEST */
    uint64_t alignment;         /* offset alignment in bytes, power of 2: 256 */
    int fold_constants;         /* 1 */
    int eliminate_dead_code;    /* 1 */
    int reuse_inputs_in_place;  /* elementwise ops may write over a dying
                                   input: 1 */
    /* For the program and all the compiler's working memory (passes,
     * planners, verifiers: none calls malloc & co. itself,
     * tests/ir/test_compiler_allocator.c); NULL: malloc. */
    const dfg_allocator *allocator;
    /* NULL: an inference program; else a training step
     * (include/dfg/training.h), read during dfg_compile only. */
    const struct dfg_training_options *training;
    /* Scratch added to the planned workspace of every matmul, gemm and
     * conv2d step, for the BLAS library of a device backend: the CUDA
     * backend hands it to cuBLAS (cublasSetWorkspace), so cuBLAS works in
     * the arena and never allocates. 0 (the CPU needs none); at most
     * DFG_MAX_BLAS_WORKSPACE. */
    uint64_t blas_workspace_bytes;
    /* The rule of the backend the program is for
     * (dfg_backend_workspace_rule): what it returns for a matmul, gemm or
     * conv2d step, beyond the op's own scratch, is planned into that
     * step's workspace, so that the backend's library (oneDNN on the CPU)
     * works in the arena; a step the rule gives to the library with no
     * scratch gets a workspace of 0 bytes, which marks it so. A step the
     * rule gives -1, or that finds less planned, runs the backend's
     * reference kernel. The CPU backend's by default (convolutions on
     * oneDNN); NULL: none (every step on the reference kernels). A
     * training step plans, with the CPU backend's rule, only its
     * convolutions' and their gradients' scratch, the weights reordered
     * at every run (they change, so no copy made once could follow); with
     * another backend's rule, or under a memory budget, none. */
    dfg_backend_workspace_fn backend_workspace;
    /* The dtype activations (and in a training step their gradients) are
     * stored in: DFG_F32 (the default) or DFG_BF16, with weights,
     * optimizer state and the loss kept in f32 and the CPU kernels
     * computing in f32 (passes/training/mixed_precision.c). For inference
     * on a target with dfg_target.half_inference (the CUDA backend's):
     * DFG_F16 or DFG_BF16 store every float tensor, weights included,
     * 16-bit, products on 16-bit operands accumulating in f32, other
     * kernels computing in f32 (docs/precision.md); recorded in the
     * program. DFG_F16 is refused elsewhere. */
    dfg_dtype precision;
    /* Inference only, on a target that runs it (dfg_target.tf32: the
     * CUDA backend's): f32 products (matmul, gemm, conv2d) may round
     * their inputs to TF32 on tensor cores, accumulating in f32 (dfgc
     * --precision tf32); recorded in the program. 0 (the default): f32
     * products are strict FP32, as the CPU's. */
    int allow_tf32;
    /* The name of the backend whose rule backend_workspace is ("cpu"),
     * recorded in the program: that backend, and no other, finds its
     * scratch in the workspaces. Required with backend_workspace. */
    const char *backend_workspace_for;
    /* Inference only: fuse a conv2d's activations and residual add into
     * its post-ops, and decomposed layer norms and GELUs into one op each
     * (passes/fusion/fuse_*.c, docs/ops.md): 1. The CPU and CUDA backends run
     * them (a target without dfg_target.fused_post_ops turns it off).
     * On a target with dfg_target.transposed_operands, also in training:
     * transposes of the last two dims read by a matmul or gemm fold into
     * its trans flags (passes/transpose_views.c). */
    int fuse_operators;
    /* With fuse_operators: matmul, scale, mask add, softmax and matmul
     * into one attention op (passes/fusion/fuse_attention.c) where the target
     * takes it (dfg_target.fused_attention: the CUDA backend's; not the
     * CPU's defaults): 1. */
    int fuse_attention;
    /* Inference with fuse_operators only: keep activations between
     * convolutions in the layout their backend wants, with reorder steps
     * at the boundaries (passes/layout_assign.c): with the CPU backend's
     * rule (dfg_cpu_step_workspace), the blocked layout oneDNN wants on
     * this CPU (the program then records the CPU features it needs,
     * docs/program-format.md); for a target with conv_layout (CUDA), the
     * layout it names (nhwc for 16-bit convs, docs/precision.md): 1. */
    int assign_layouts;
    /* The backend the program is for (dfg_compile_options_for sets it):
     * dfg_compile refuses, naming them, ops it has no kernel for. NULL:
     * no backend in particular. */
    const dfg_target *target;
    /* Upper bound on the planned arena in bytes: a plan that needs more
     * (a Reshape or Expand to 2^34 elements) is refused by dfg_compile
     * with DFG_ERR_PLAN naming this limit, before any session tries to
     * allocate it. DFG_DEFAULT_MAX_ARENA_BYTES (32 GiB) by default, 0 for
     * none. */
    uint64_t max_arena_bytes;
    /* Inference only: weights and constants equal to another byte for
     * byte, or (2-D) to another's transpose, are held once; the products
     * that read a transposed copy read the kept one transposed
     * (passes/share_weights.c), and (with fuse_operators) a batch_norm
     * alone reading a conv's output is folded into that conv's weights
     * and bias (passes/fusion/fold_batch_norm.c): 1. A program whose weights
     * will be replaced by a training step's (dfg_session_copy_weights)
     * needs 0: weights equal when compiled (zero biases) may differ after
     * training, and folded ones would not take the new values. */
    int share_weights;
    /* Inference only: memory before speed. The order and the arena are
     * planned at the lower bound without library scratch (each step with
     * only its own kernel's least workspace); a step whose backend wants
     * scratch past that (oneDNN's, with backend_workspace) gets it only
     * where it fits under that bound, and elsewhere runs the kernel that
     * needs none. Blocked layouts (assign_layouts) only where they cost
     * nothing: their copies at the boundaries, and the scratch of the
     * steps between them that only the library runs, can sit above that
     * bound, so the graph is compiled both plain and with them (and, with
     * in_place_depthwise, plain with depthwise convs written over their
     * inputs, which take dfg's kernel, never the library's), each also
     * tiled (tiling; a tiled program whose tighter bound leaves a conv
     * off Winograd also with that conv's Winograd scratch kept, its arena
     * above its own bound). Of these programs, 1 (memory first) keeps the
     * smallest arena among those that cost at most 10% more to run than
     * the fastest (untiled, blocked): the cost is the FLOPs, a product
     * (conv, matmul) that dfg's kernels run in place of the library's
     * counting six times, and for a tiled program the steps and copies
     * its bands add to the untiled one (a call, the bytes a copy moves,
     * a filter read again), once per thread a session of this process
     * runs on (OpenMP's: the arithmetic shares out over the threads,
     * these do not, so fewer bands where more threads run them);
     * and of arenas within 1/16
     * of the smallest of them, the cheaper program.
     * DFG_PREFER_SMALLEST (2): the
     * smallest arena whatever kernels run it (dfg's weigh as the
     * library's; tiling still at most 10% more FLOPs), slower where it
     * leaves the library. 0: the scratch and layouts are kept wherever
     * the backend wants them (faster; the summary states the extra per
     * step). */
    int prefer_memory;
    /* 1 (the default): a depthwise conv of stride 1 may write its output
     * over its dying input (with reuse_inputs_in_place) where its step
     * runs dfg's kernel anyway (no library scratch planned for it, or
     * prefer_memory) and that holds the lower bound down; only for a
     * target that has that kernel (dfg_target.in_place_depthwise). 0:
     * never. */
    int in_place_depthwise;
    /* 1 (the default): with prefer_memory, CPU inference may run the
     * first layers of an image model band by band of rows (tiled
     * execution, passes/tiling/tile_spatial.h) where that lowers the arena, at
     * most 10% more FLOPs (the halo rows two bands compute, and the rows
     * a region computes twice to cross a squeeze-excite block,
     * passes/tiling/tile_squeeze.h); the plan
     * reports the op-by-op lower bound beside its own (dfg_plan_stats).
     * Bands keep the blocked layouts of the convs around them (their row
     * slices and joins move rows of channel blocks). Not without
     * prefer_memory: the bands' convs run on smaller shapes, slower, and
     * the join copies the bands' rows. 0: never (dfgc --no-tiling). */
    int tiling;
} dfg_compile_options;

#define DFG_DEFAULT_MAX_ARENA_BYTES ((uint64_t)32 << 30)

/* dfg_compile_options.prefer_memory: the smallest arena memory first
 * finds, whatever its cost (dfgc --prefer smallest). */
#define DFG_PREFER_SMALLEST 2

void dfg_compile_options_init(dfg_compile_options *options);

/* Makes options (from dfg_compile_options_init and the caller's choices)
 * compile programs for a backend, as `dfgc compile --device` does, from
 * what it needs (dfg_backend_target, include/dfg/session.h): its workspace
 * rule in place of the CPU's when options->backend_workspace is set, no
 * blocked layouts or fused post-ops where it runs none, its BLAS scratch
 * unless blas_workspace_bytes is set, and options->target, so that ops it
 * has no kernel for are refused at compile time. DFG_ERR_INVALID_ARGUMENT,
 * options unchanged, for an alignment below what it runs;
 * DFG_ERR_UNSUPPORTED for a precision it does not run (allow_tf32 where
 * dfg_target.tf32 is 0; f16 or bf16 for training where f32_storage_only;
 * f16 without half_inference); DFG_ERR_INVALID_ARGUMENT for tf32 with f16
 * or bf16. */
dfg_status dfg_compile_options_for(dfg_compile_options *options,
                                   const dfg_target *target);

/* options may be NULL for the defaults. */
dfg_status dfg_compile(const dfg_graph *graph,
                       const dfg_compile_options *options,
                       dfg_program **out);

/* A simulated PyTorch CUDA caching allocator replaying the arena's
 * allocations and frees in step order (docs/plan-visuals.md gives the
 * policy). Peaks are maxima over the replay; the allocator never returns a
 * segment, so its reserved bytes only grow. */
typedef struct dfg_caching_stats {
    uint64_t reserved_peak_bytes;   /* segments obtained from the device */
    uint64_t allocated_peak_bytes;  /* blocks handed out (rounded sizes) */
    uint64_t requested_peak_bytes;  /* bytes the tensors asked for */
    /* allocated bytes just after the last segment was obtained: what was
     * in use when the cache could not serve a request */
    uint64_t allocated_at_reserved_peak;
    int32_t small_segments;         /* 2 MiB segments */
    int32_t large_segments;         /* 20 MiB or exact-size segments */
} dfg_caching_stats;

/* The same buffers (the program's arena tensors that own their bytes),
 * lifetimes and order, placed every way dfg knows. */
typedef struct dfg_plan_comparison {
    int32_t n_buffers;
    uint64_t alignment;
    uint64_t no_reuse_bytes;
    uint64_t lower_bound_bytes;
    uint64_t planner_arena_bytes[DFG_PLANNER_COUNT]; /* each re-planned and
                                                        verified */
    dfg_planner compiled_planner;   /* the program's own plan */
    uint64_t compiled_arena_bytes;
    dfg_caching_stats caching;
} dfg_plan_comparison;

/* Re-plans the program's arena buffers with every planner (each plan
 * verified) and replays them through the caching allocator. */
dfg_status dfg_plan_compare(const dfg_program *program,
                            dfg_plan_comparison *out);

#ifdef __cplusplus
}
#endif
#endif
