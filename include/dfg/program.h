/* Compiling a graph into a program, and program files.
 *
 * dfg_compile() runs the passes on a private copy of the graph (the caller's
 * graph is not changed and may be freed or compiled again) and returns an
 * immutable, self-contained program: the steps in order, every tensor with
 * its region, offset, size and lifetime, the region sizes and the weights.
 * A program may be shared read-only by many sessions on many threads. */
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

typedef enum dfg_planner {
    DFG_PLANNER_NO_REUSE = 0,    /* every tensor its own bytes: the baseline */
    DFG_PLANNER_GREEDY_SIZE,     /* largest first, smallest fitting gap */
    DFG_PLANNER_GREEDY_BREADTH,  /* step by step, largest tensors first */
    DFG_PLANNER_COUNT
} dfg_planner;

/* "no_reuse", "greedy_size", "greedy_breadth"; NULL if invalid. */
const char *dfg_planner_name(dfg_planner planner);
int dfg_planner_from_name(const char *name, dfg_planner *out);

struct dfg_type;
/* Bytes of scratch a backend wants for one step of op (a dfg_op) with
 * these attributes and operand types (internal, src/tensor_type.h). */
typedef int64_t (*dfg_backend_workspace_fn)(int32_t op,
                                            const dfg_attrs *attrs,
                                            const struct dfg_type *in,
                                            int32_t n_in,
                                            const struct dfg_type *out,
                                            int32_t n_out);

typedef struct dfg_compile_options {
    dfg_planner planner;        /* DFG_PLANNER_GREEDY_SIZE */
    uint64_t alignment;         /* offset alignment in bytes, power of 2: 256 */
    int fold_constants;         /* 1 */
    int eliminate_dead_code;    /* 1 */
    int reuse_inputs_in_place;  /* elementwise ops may write over a dying
                                   input: 1 */
    const dfg_allocator *allocator; /* for the program; NULL: malloc */
    /* NULL: an inference program; else a training step
     * (include/dfg/training.h), read during dfg_compile only. */
    const struct dfg_training_options *training;
    /* Scratch added to the planned workspace of every matmul, gemm and
     * conv2d step, for the BLAS library of a device backend: the CUDA
     * backend hands it to cuBLAS (cublasSetWorkspace), so cuBLAS works in
     * the arena and never allocates. 0 (the CPU needs none); at most
     * DFG_MAX_BLAS_WORKSPACE. */
    uint64_t blas_workspace_bytes;
    /* NULL, or the rule of the backend the program is for
     * (dfg_backend_workspace_rule): what it returns for a matmul, gemm or
     * conv2d step, beyond the op's own scratch, is planned into that
     * step's workspace, so that the backend's library (oneDNN on the CPU)
     * works in the arena. A backend whose step finds less planned runs
     * its reference kernel. */
    dfg_backend_workspace_fn backend_workspace;
} dfg_compile_options;

/* The largest blas_workspace_bytes, and what dfgc uses for --device cuda
 * (cuBLAS asks for 4 MiB on Ampere, 32 MiB on Hopper for its best
 * kernels; 4 MiB keeps the arena small and is enough for most). */
#define DFG_MAX_BLAS_WORKSPACE ((uint64_t)256 << 20)
#define DFG_DEFAULT_BLAS_WORKSPACE ((uint64_t)4 << 20)

void dfg_compile_options_init(dfg_compile_options *options);

/* options may be NULL for the defaults. */
dfg_status dfg_compile(const dfg_graph *graph,
                       const dfg_compile_options *options,
                       dfg_program **out);
void dfg_program_destroy(dfg_program *program);

/* Program files (docs/program-format.md). Loading validates everything and
 * fails with DFG_ERR_FORMAT on a malformed file. */
dfg_status dfg_program_save(const dfg_program *program, const char *path);
dfg_status dfg_program_load(const char *path, const dfg_allocator *allocator,
                            dfg_program **out);
dfg_status dfg_program_load_memory(const void *data, size_t size,
                                   const dfg_allocator *allocator,
                                   dfg_program **out);

/* What the memory plan achieved. */
typedef struct dfg_plan_stats {
    uint64_t arena_bytes;       /* size of the one activation arena */
    uint64_t lower_bound_bytes; /* max over steps of live bytes */
    uint64_t no_reuse_bytes;    /* sum of every arena tensor, aligned */
    uint64_t weights_bytes;     /* size of the weights region */
    uint64_t alignment;
    dfg_planner planner;
    int verified;               /* the plan verifier accepted the plan */
    int32_t n_steps;
    int32_t n_tensors;
} dfg_plan_stats;

void dfg_program_stats(const dfg_program *program, dfg_plan_stats *out);

int32_t dfg_program_num_inputs(const dfg_program *program);
int32_t dfg_program_num_outputs(const dfg_program *program);
/* info->name points into the program. */
dfg_status dfg_program_input_info(const dfg_program *program, int32_t index,
                                  dfg_tensor_info *info);
dfg_status dfg_program_output_info(const dfg_program *program, int32_t index,
                                   dfg_tensor_info *info);

/* One step of the program, in execution order. Strings point into the
 * program (name) or into static storage (op). */
typedef struct dfg_step_info {
    const char *name; /* the graph node's name */
    const char *op;   /* dfg's op name, "conv2d" */
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
