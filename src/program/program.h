/* The compiled program: the contract between the compiler (passes/), the
 * reports, the program files and the runtime. runtime/ includes this header
 * and the op table, never the graph or the passes.
 *
 * Everything a program points to is owned by it and allocated with
 * program->allocator, except the bytes of its weights region: those lie in
 * shared blocks (the graph's weight buffers, a mapped program file) that
 * the program holds a reference to. dfg_program_destroy() frees what it
 * owns and drops its references. A program is immutable once built
 * (dfg_compile or dfg_program_load). */
#ifndef DFG_PROGRAM_INTERNAL_H
#define DFG_PROGRAM_INTERNAL_H

#include "dfg/program.h"
#include "ir/op_table.h"
#include "ir/tensor_type.h"
#include "util/shared_bytes.h"

typedef enum dfg_region {
    DFG_REGION_ARENA = 0,   /* activations, inputs, outputs, workspaces */
    DFG_REGION_WEIGHTS = 1, /* weights and constants, read-only; a training
                               program's optimizer ops update its weights,
                               optimizer state and gradient accumulators
                               here in place (each session owns a copy) */
    DFG_REGION_COUNT
} dfg_region;

/* New kinds go at the end: the value is stored in program files. */
typedef enum dfg_tensor_kind {
    DFG_TENSOR_INPUT = 0,
    DFG_TENSOR_OUTPUT,
    DFG_TENSOR_ACTIVATION,
    DFG_TENSOR_WORKSPACE,
    DFG_TENSOR_WEIGHT,
    DFG_TENSOR_CONSTANT,
    DFG_TENSOR_VIEW,
    DFG_TENSOR_GRADIENT,             /* training: computed by the backward pass */
    DFG_TENSOR_GRADIENT_ACCUMULATOR, /* training: persistent, weights region */
    DFG_TENSOR_OPTIMIZER_STATE,      /* training: persistent, weights region */
    DFG_TENSOR_SAVED_ACTIVATION,     /* training: a forward value the backward
                                        pass reads */
    DFG_TENSOR_KIND_COUNT
} dfg_tensor_kind;

/* "input", "output", ... as in the plan JSON; "?" if invalid. */
const char *dfg_tensor_kind_name(dfg_tensor_kind kind);

typedef struct dfg_program_tensor {
    char *name;
    dfg_type type;
    int64_t bytes;        /* dfg_type_bytes(type) */
    dfg_tensor_kind kind;
    dfg_region region;
    int64_t offset;       /* from the region's base, aligned */
    int32_t first_step;   /* first step at which the bytes hold this tensor */
    int32_t last_step;    /* last step that reads it */
    int32_t alias_of;     /* tensor whose bytes it shares, or -1 */
    /* Weights region only: the tensor's bytes on the host, read-only,
     * inside one of program->held (a training program's zero accumulators
     * and optimizer state compiled in the process: zero pages,
     * dfg_shared_bytes_zeros); NULL means zeros. Arena tensors: NULL. */
    const uint8_t *data;
} dfg_program_tensor;

typedef struct dfg_program_step {
    dfg_op op;
    char *name;           /* the graph node's name */
    dfg_attrs attrs;
    /* dfg_op_label's for op and attrs ("conv2d+relu"), for dfg_step_info;
     * set with dfg_program_step_label */
    char label[DFG_OP_LABEL_BYTES];
    int32_t n_inputs;
    int32_t *inputs;      /* tensor indices, -1 for an absent optional input */
    int32_t n_outputs;
    int32_t *outputs;     /* tensor indices */
    int32_t workspace;    /* workspace tensor index, or -1 */
    int64_t flops;
} dfg_program_step;

/* Room for a backend's name in dfg_program.workspace_rule, NUL included. */
#define DFG_PROGRAM_RULE_NAME_BYTES 16

struct dfg_program {
    dfg_allocator allocator;
    int32_t n_tensors;
    dfg_program_tensor *tensors;
    int32_t n_steps;
    dfg_program_step *steps;
    int32_t n_inputs;
    int32_t *inputs;      /* tensor indices of the graph inputs, in order */
    int32_t n_outputs;
    int32_t *outputs;     /* tensor indices of the graph outputs, in order */
    int64_t region_bytes[DFG_REGION_COUNT];
    /* The blocks the tensors' data point into, one reference each. */
    int32_t n_held, held_capacity;
    dfg_shared_bytes **held;
    dfg_plan_stats stats;
    /* The backend whose workspace rule planned its scratch into the steps'
     * workspaces (dfg_compile_options.backend_workspace_for, "cpu"), or ""
     * for none: only that backend finds its scratch there. */
    char workspace_rule[DFG_PROGRAM_RULE_NAME_BYTES];
    /* The CPU features its blocked layouts and primitives were chosen for
     * (oneDNN's ISA name, "avx2", "avx512_core", ...; file version 5), ""
     * when every tensor is plain: a CPU backend refuses the program on a
     * CPU without them (runtime/cpu/onednn/dnnl_steps.c). */
    char layout_isa[DFG_PROGRAM_RULE_NAME_BYTES];
    /* 1: its f32 products may run in TF32 (dfg_compile_options.allow_tf32;
     * file version 5's plan section, 0 in files without it). */
    int allow_tf32;
    /* DFG_F16 or DFG_BF16: compiled for 16-bit inference
     * (dfg_pass_half_inference: every float tensor but the inputs and
     * outputs stored so, products on 16-bit operands); DFG_F32: not.
     * File version 5's math flags (bits 1 and 2). */
    dfg_dtype half_products;
    /* 1 once a session took the program over (dfg_session_create_owning):
     * the weight pages its kernels read from copies in another layout may
     * have left memory, so the program is neither saved nor given to
     * another session. */
    int weights_released;
};

/* An empty program with zeroed arrays of the given sizes and a weights
 * region of weights_bytes (its bytes come from tensors' data); NULL on
 * failure (out of memory). Steps' input/output arrays are left NULL. */
dfg_program *dfg_program_alloc(const dfg_allocator *allocator,
                               int32_t n_tensors, int32_t n_steps,
                               int32_t n_inputs, int32_t n_outputs,
                               int64_t weights_bytes);

/* Sets step->label from its op and attrs. */
void dfg_program_step_label(dfg_program_step *step);

/* Takes a reference to bytes, which tensors' data will point into. */
dfg_status dfg_program_hold(dfg_program *program, dfg_shared_bytes *bytes);

/* 1 if data lies in a block of the program's that is a file mapping. */
int dfg_program_bytes_mapped(const dfg_program *program, const void *data);
/* 1 if data lies in a block of the program's that nothing else holds (no
 * graph, no other program): bytes whose fate the program alone decides. */
int dfg_program_bytes_alone(const dfg_program *program, const void *data);

/* Writes the weights region as the plan lays it out into dst
 * (region_bytes[DFG_REGION_WEIGHTS] bytes): each tensor's data at its
 * offset, zeros elsewhere. */
void dfg_program_gather_weights(const dfg_program *program, uint8_t *dst);

#endif
