/* A session's state, shared by the files that make up sessions:
 * executor.c (creation, runs, buffers, the collective) and
 * session_weights.c (weights copied between sessions, the weights
 * region). Internal to the runtime. */
#ifndef DFG_RUNTIME_SESSION_STATE_H
#define DFG_RUNTIME_SESSION_STATE_H

#include "dfg/collective.h"
#include "program/program.h"
#include "runtime/backend.h"

struct dfg_session {
    const dfg_program *program;
    const dfg_backend *backend;
    dfg_allocator allocator;
    dfg_backend_context *context;
    void *regions[DFG_REGION_COUNT];
    /* 1 while the session reads the program's weights in place (and has
     * no weights region of its own). */
    int shares_weights;
    /* The program the session took over (dfg_session_create_owning),
     * destroyed with it; NULL when the caller keeps the program. */
    dfg_program *owned_program;
    /* One allocation: steps[n_steps], then their types, their operand
     * pointers and the program step each came from (for messages). */
    void *block;
    dfg_step_args *steps;
    int32_t n_steps;
    int32_t *program_step;
    dfg_collective collective; /* every step's args point here */
    uint8_t *bool_staging; /* dfg_bool_inputs_bytes of it, or NULL */
    /* The copies of one run when the backend takes them all in one call
     * (run_io): the inputs', then the outputs'; NULL otherwise. */
    dfg_backend_transfer *transfers;
    /* Resident memory the step block and the backend's prepare took
     * beside the weight copies (dfg_runtime_resident_mark): its
     * primitives and generated kernels, for dfg_session_memory_predict. */
    uint64_t prepared_resident_bytes;
    /* The allocator's heap in use when the creation began
     * (dfg_heap_in_use_bytes): the program and what its caller holds,
     * for dfg_session_memory_predict. */
    uint64_t heap_before_bytes;
};

/* Where tensor lives for s's steps: the program's weight bytes when the
 * session reads them in place, else its region base plus the planned
 * offset (region memory, never dereferenced here). */
void *dfg_session_tensor_address(const dfg_session *s, int32_t tensor);

/* Gives a session that reads its program's weights in place a weights
 * region of its own (uploaded from them), so that they can be
 * overwritten; its steps' addresses follow. DFG_OK if it has one. */
dfg_status dfg_session_detach_weights(dfg_session *s);

/* The process's resident anonymous bytes now less the weight copies
 * s's backend holds and the resident pages of s's arena (on host memory),
 * plus the plain bytes the copies replaced when those are anonymous
 * memory a session drops (a program compiled in the process and taken
 * over): what a session's creation adds to it is its own cost (step
 * arguments, the library's primitives, their generated kernels, threads
 * started, and what the steps its backend runs once at preparation take
 * on their first call, runtime/cpu/backend.c). Wraps around when
 * unknown: only differences count (runtime/process_memory.c). */
uint64_t dfg_runtime_resident_mark(const dfg_session *s, int plain_anonymous);

/* Bytes of the C library's heap in use (its arenas and the blocks it
 * maps one by one), and freed but still held in its arenas (written, so
 * resident); 0 where unknown (runtime/process_memory.c). */
uint64_t dfg_heap_in_use_bytes(void);
uint64_t dfg_heap_free_bytes(void);

#endif
