/* The compiled program (made by dfg_compile, include/dfg/compile.h) and
 * program files.
 *
 * A program is immutable and self-contained: the steps in order, every
 * tensor with its region, offset, size and lifetime, the region sizes and
 * the weights. A program may be shared read-only by many sessions on many
 * threads. */
#ifndef DFG_PROGRAM_H
#define DFG_PROGRAM_H

#include <stdint.h>
#include "dfg/allocator.h"
#include "dfg/graph.h"
#include "dfg/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dfg_program dfg_program;

struct dfg_type;
/* Bytes of scratch a backend's library wants for one step of op (a
 * dfg_op) with these attributes and operand types (internal,
 * src/ir/tensor_type.h), 0 where it wants none, or -1 where the library
 * does not run the step (the backend's reference kernel does):
 * dfg_backend_workspace_rule (include/dfg/session.h) gives a backend's,
 * dfg_compile_options.backend_workspace (include/dfg/compile.h) plans it. */
typedef int64_t (*dfg_backend_workspace_fn)(int32_t op,
                                            const dfg_attrs *attrs,
                                            const struct dfg_type *in,
                                            int32_t n_in,
                                            const struct dfg_type *out,
                                            int32_t n_out);

/* What a backend's programs need from the compiler: dfg_backend_target
 * (include/dfg/session.h) gives each backend's, dfg_compile_options_for
 * (include/dfg/compile.h) makes compile options follow one. Static. */
typedef struct dfg_target {
    const char *backend;                     /* its name: "cpu", "cuda" */
    dfg_backend_workspace_fn workspace_rule; /* its kernels' scratch per
                                                step; NULL: none */
    uint64_t min_alignment;        /* the least offset alignment it runs */
    uint64_t blas_workspace_bytes; /* its BLAS library's scratch per
                                      product step; 0: none planned */
    int blocked_layouts; /* 1: it runs blocked layouts (reorder steps) */
    int fused_post_ops;  /* 1: it runs conv2d / matmul post-ops and fused
                            biases (the inference fusion passes') */
    int fused_attention; /* 1: the fusion passes make attention ops for
                            it (dfg_compile_options.fuse_attention); 0:
                            they leave attention's separate steps */
    int tf32;            /* 1: its f32 products can run in TF32
                            (dfg_compile_options.allow_tf32) */
    int f32_storage_only; /* 1: it refuses bf16 activations beside f32
                             weights (dfg_compile_options.precision bf16
                             on the CPU's mixed-precision terms): its
                             products take operands of one dtype */
    int half_inference;   /* 1: it runs inference with every float tensor,
                             weights included, in f16 or bf16
                             (dfg_compile_options.precision): products on
                             16-bit operands accumulating in f32 */
    int transposed_operands; /* 1: its matmul and gemm read an operand
                                transposed (trans_a, trans_b), so that the
                                inference fusion passes fold a transpose
                                of the last two dims into its product */
    int in_place_depthwise; /* 1: its depthwise conv2d kernel writes y
                               over x (stride 1, same type), so the
                               compiler may plan it so */
    /* 1 if it has a kernel for op (a dfg_op); NULL: every op. */
    int (*supports_op)(int32_t op);
    /* The layout (a dfg_layout) its conv2d with these attributes and
     * operand types (internal, src/ir/tensor_type.h) runs fastest in, for
     * x, y and the filter alike: the layout pass
     * (dfg_compile_options.assign_layouts) keeps chains of such convs in
     * it. NULL: plain only (the CPU's blocked layouts have their own
     * rule). */
    int32_t (*conv_layout)(const dfg_attrs *attrs, const struct dfg_type *in,
                           int32_t n_in, const struct dfg_type *out);
} dfg_target;

/* The largest blas_workspace_bytes, and what dfgc uses for --device cuda
 * (cuBLAS asks for 4 MiB on Ampere, 32 MiB on Hopper for its best
 * kernels; 4 MiB keeps the arena small and is enough for most). */
#define DFG_MAX_BLAS_WORKSPACE ((uint64_t)256 << 20)
#define DFG_DEFAULT_BLAS_WORKSPACE ((uint64_t)4 << 20)

typedef enum dfg_planner {
    DFG_PLANNER_NO_REUSE = 0,    /* every tensor its own bytes: the baseline */
    DFG_PLANNER_GREEDY_SIZE,     /* largest first, smallest fitting gap */
    DFG_PLANNER_GREEDY_BREADTH,  /* step by step, largest tensors first */
    DFG_PLANNER_HILL_CLIMB,      /* greedy by size, then better orders tried */
    DFG_PLANNER_SMALLEST,        /* every planner above, the smallest verified
                                    arena (the plan names the one that won) */
    DFG_PLANNER_COUNT
} dfg_planner;

/* "no_reuse", "greedy_size", "greedy_breadth", "hill_climb", "smallest";
 * NULL if invalid. */
const char *dfg_planner_name(dfg_planner planner);
int dfg_planner_from_name(const char *name, dfg_planner *out);

void dfg_program_destroy(dfg_program *program);

/* Program files (docs/program-format.md). Loading validates everything and
 * fails with DFG_ERR_FORMAT on a malformed file. dfg_program_load maps the
 * file and keeps the mapping until the program is destroyed: its weights
 * are the file's pages, read in place by CPU inference sessions (replace
 * a program file by renaming a new one over it, never by rewriting it in
 * place; dfg_program_save does so: include/dfg/atomic_file.h). The save
 * writes the weights from where the program holds them (the graph's
 * buffers, a mapped file), with no copy of them in memory.
 * dfg_program_load_memory copies the weights out of data. A path that is
 * not a regular file (a FIFO) is refused (include/dfg/regular_file.h). */
dfg_status dfg_program_save(const dfg_program *program, const char *path);
dfg_status dfg_program_load(const char *path, const dfg_allocator *allocator,
                            dfg_program **out);
dfg_status dfg_program_load_memory(const void *data, size_t size,
                                   const dfg_allocator *allocator,
                                   dfg_program **out);

/* What the memory plan achieved. */
typedef struct dfg_plan_stats {
    uint64_t arena_bytes;       /* size of the one activation arena */
    uint64_t lower_bound_bytes; /* max over steps of live bytes, in the
                                   execution order dfg_compile chose */
    uint64_t recorded_lower_bound_bytes; /* the same in the order the ops
                                   were recorded: never below the above */
    uint64_t no_reuse_bytes;    /* sum of every arena tensor, aligned */
    uint64_t weights_bytes;     /* size of the weights region */
    uint64_t alignment;
    dfg_planner planner;
    int verified;               /* the plan verifier accepted the plan */
    int32_t n_steps;
    int32_t n_tensors;
    /* Tiled execution (dfg_compile_options.tiling), known for a program
     * compiled in this process (0 for one loaded from a file): the
     * regions run band by band, one after the other (0: untiled), the
     * bands of rows of the last, the lower bound of the untiled program
     * (the op-by-op bound), and the FLOPs the halo rows add. */
    int32_t tiled_regions;
    int32_t tiles;
    uint64_t op_by_op_lower_bound_bytes;
    int64_t tiling_extra_flops;
} dfg_plan_stats;

void dfg_program_stats(const dfg_program *program, dfg_plan_stats *out);
/* DFG_F16 or DFG_BF16 for a program compiled for 16-bit inference
 * (dfg_compile_options.precision on a target with half_inference: it runs
 * only on such a backend), else DFG_F32. */
dfg_dtype dfg_program_half_products(const dfg_program *program);

int32_t dfg_program_num_inputs(const dfg_program *program);
int32_t dfg_program_num_outputs(const dfg_program *program);
/* info->name points into the program. */
dfg_status dfg_program_input_info(const dfg_program *program, int32_t index,
                                  dfg_tensor_info *info);
dfg_status dfg_program_output_info(const dfg_program *program, int32_t index,
                                   dfg_tensor_info *info);

/* One step of the program, in execution order. Strings point into the
 * program. */
typedef struct dfg_step_info {
    const char *name; /* the graph node's name; a fused step's is its
                         nodes' names joined by '+' */
    const char *op;   /* dfg's op name, "conv2d", with a fused step's
                         post-ops: "conv2d+add+relu" */
    int64_t flops;
} dfg_step_info;
dfg_status dfg_program_step_info(const dfg_program *program, int32_t index,
                                 dfg_step_info *info);

/* Checks the program's memory plan with the independent verifier: no two
 * tensors live at the same step share bytes unless one aliases the other,
 * and every tensor lies inside its region. */
dfg_status dfg_program_verify(const dfg_program *program);

#ifdef __cplusplus
}
#endif
#endif
