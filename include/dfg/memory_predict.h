/* The whole process's peak resident memory when it runs a program,
 * predicted before the first run (docs/memory-prediction.md): what the
 * process held before dfg did anything, the runtime's own cost, the
 * weights as the backend will hold them (read in place, copied, or
 * reordered into its library's layouts), the arena and the caller's input
 * and output buffers.
 *
 * The weights and the runtime's heap come from what the backend chose on
 * this machine (its layouts, kernels and primitives, made when a session
 * is created), never from figures of one CPU; the code the libraries run
 * and the worker threads' stacks are a calibration of this build
 * (DFG_RUNTIME_CODE_BYTES, DFG_THREAD_BYTES). */
#ifndef DFG_MEMORY_PREDICT_H
#define DFG_MEMORY_PREDICT_H

#include <stdint.h>
#include "dfg/program.h"
#include "dfg/session.h"
#include "dfg/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Code pages of libdfg and its libraries (oneDNN, OpenMP) that creating a
 * session and running it touch beyond those resident when libdfg is
 * loaded: a calibration of this build (bench/memory/predict.sh measures
 * it), not of a CPU: the kernels oneDNN generates for this CPU are heap
 * and are measured with the session (runtime_heap_bytes). */
#define DFG_RUNTIME_CODE_BYTES ((uint64_t)4608 << 10)
/* The same for a session no step of which runs on a library (oneDNN):
 * dfg's own kernels and OpenMP. */
#define DFG_RUNTIME_OWN_CODE_BYTES ((uint64_t)1536 << 10)
/* Resident bytes of each worker thread beyond the first (its stack's
 * touched pages and its allocator arena's first pages). */
#define DFG_THREAD_BYTES ((uint64_t)256 << 10)

typedef struct dfg_memory_prediction {
    /* resident when libdfg was loaded: the program's code, its libraries
     * and what the process held before (an interpreter, its modules) */
    uint64_t process_bytes;
    uint64_t runtime_code_bytes;  /* DFG_RUNTIME_CODE_BYTES, or
                                     DFG_RUNTIME_OWN_CODE_BYTES where no
                                     step runs on a library */
    uint64_t thread_bytes;        /* (threads - 1) * DFG_THREAD_BYTES */
    /* resident memory the session's creation took beside the weight
     * copies (step arguments, the library's primitives and generated
     * kernels, its threads), measured when it was created */
    uint64_t runtime_heap_bytes;
    /* the C library's heap in use when the session's creation began,
     * beyond what was in use when libdfg was loaded and the program's
     * weights there (counted in weights_bytes): the program's steps,
     * tensors and names, and what the caller built it with and keeps (an
     * imported graph, an interpreter's objects) */
    uint64_t held_heap_bytes;
    /* memory the process freed to its allocator and still holds (what
     * compiling or importing in the process left), measured when the
     * prediction is made */
    uint64_t freed_heap_bytes;
    /* resident weights: the program's bytes read in place or uploaded
     * (a training session's own region beside the program's), plus the
     * backend's copies, minus the plain bytes those copies replace */
    uint64_t weights_bytes;
    uint64_t weight_copy_bytes;     /* of which copies in other layouts */
    uint64_t replaced_plain_bytes;  /* plain bytes no longer held */
    uint64_t arena_bytes;           /* 0 on a device */
    /* held while the session was made, beside what stays (a weight's
     * plain bytes before its copy replaced them, a transform's staging):
     * the peak is the larger of it and the arena, which is resident only
     * once the steps run; where the session was made in this process
     * (reached_bytes) its creation's peak is measured in that instead */
    uint64_t creation_bytes;
    uint64_t io_bytes;              /* the caller's inputs and outputs */
    /* what the caller holds beside, which it adds (dfgc train: its copy
     * of the last finite weights, include/dfg/finite_training.h); 0 */
    uint64_t caller_bytes;
    /* the process's peak resident memory so far, when the prediction is
     * made (what importing, compiling and creating the session reached:
     * memory first's search of tilings, a weight's plain bytes beside its
     * copy, may reach more than running the program does); 0 for a
     * process of its own (dfg_memory_predict) */
    uint64_t reached_bytes;
    /* the sum of the above but reached_bytes (not the two "of which"
     * figures), with the larger of arena and creation_bytes (the arena
     * alone where reached_bytes is known); at least reached_bytes
     * (dfg_memory_prediction_total) */
    uint64_t peak_bytes;
    int threads;
} dfg_memory_prediction;

/* What running session's program will take, from what its creation did.
 * weights_dropped: the session may drop the plain pages of weights it
 * copied (a mapped .dfgp, dfg_session_create_owning); else both stay. */
dfg_status dfg_session_memory_predict(const dfg_session *session,
                                      int weights_dropped,
                                      dfg_memory_prediction *out);

/* The same for program on backend, as dfgc bench and run hold it (the
 * plain weights dropped as they are copied): creates a session (no step
 * runs) to learn what the backend chooses, then destroys it. */
dfg_status dfg_memory_predict(const dfg_program *program,
                              const dfg_backend *backend,
                              dfg_memory_prediction *out);

/* Sets m->peak_bytes from m's parts: their sum (the larger of arena and
 * creation_bytes; the arena alone where reached_bytes, which then holds
 * the creation's peak, is known), or reached_bytes where that is more. A caller that
 * changes a part calls it again. */
void dfg_memory_prediction_total(dfg_memory_prediction *m);

/* Resident bytes of this process now, and its peak so far (Linux /proc);
 * 0 where unknown. */
uint64_t dfg_process_resident_bytes(void);
uint64_t dfg_process_peak_resident_bytes(void);

/* A one-line split of prediction into buf ("peak 123.4 MiB = process
 * ... + weights ... + arena ..."). */
const char *dfg_memory_prediction_format(const dfg_memory_prediction *p,
                                         char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
