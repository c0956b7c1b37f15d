/* One step as a backend runs it (dfg_kernel_args, runtime/backend.h's
 * dfg_step_args): the op, its attributes (pointing into the program), its
 * operands' types and their addresses in the session's regions (region
 * base + planned offset, resolved once at session creation), its
 * workspace, and what the program says about its inputs. Device-neutral:
 * every backend's kernels take it. */
#ifndef DFG_RUNTIME_STEP_ARGS_H
#define DFG_RUNTIME_STEP_ARGS_H

#include <stdint.h>
#include "dfg/collective.h"
#include "ir/op_table.h"
#include "ir/tensor_type.h"

typedef struct dfg_kernel_args {
    dfg_op op;
    const dfg_attrs *attrs;
    int32_t n_inputs;
    const dfg_type *in_types;  /* rank -1 for an absent optional input */
    const void *const *in;     /* NULL for an absent optional input */
    int32_t n_outputs;
    const dfg_type *out_types;
    void *const *out;
    void *workspace;           /* the step's planned scratch (maybe of 0
                                  bytes), or NULL: none planned */
    int64_t workspace_bytes;
    /* The session's communicator for the all-reduce ops (its functions
     * NULL when it has none); owned by the session. */
    const dfg_collective *collective;
    /* Bit j set: input j (j < 32) holds the same bytes at every run (a
     * weight of a program that never updates its weights), so a backend
     * may keep a copy of it in another layout, made once. */
    uint32_t constant_inputs;
    /* Bit j set: input j is the program's bytes, read in place by every
     * session of it and outliving them all, so a backend may share its
     * copy in another layout among them (runtime/cpu/onednn/dnnl_weights.h). */
    uint32_t shared_inputs;
    /* Bit j set: and those bytes may leave the resident set once the step
     * holds its own copy of them: pages of a mapped file (read again, they
     * come back), or bytes of a program its session took over that no
     * other step reads (dfg_session_create_owning; never read again). */
    uint32_t droppable_inputs;
    /* Bit j set: another step reads input j's weight bytes too, as they
     * are (a tied weight): a copy in another layout would add to them
     * rather than replace them. */
    uint32_t tied_inputs;
    /* 1 if the program was compiled with this backend's workspace rule
     * (it records which), so the step's workspace holds the backend's
     * scratch past the op's own. */
    int backend_workspace;
    /* The CPU features the program's blocked layouts were chosen for
     * (dfg_program.layout_isa; "" if it has none); the program's. */
    const char *layout_isa;
    /* 1: f32 products may run in TF32 (dfg_program.allow_tf32); the
     * program's. */
    int allow_tf32;
} dfg_kernel_args;

#endif
