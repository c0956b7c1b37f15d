/* Training that stops on a non-finite step (docs/training.md).
 *
 * One NaN in the data, or a learning rate that overflows, makes every
 * weight NaN after one optimizer update, and training would go on with
 * them for good. dfg_finite_guard_run runs one training step like
 * dfg_session_run and refuses a step whose results are not finite,
 * keeping the weights of the last step that was.
 *
 * How: before the run it copies the session's weights region (weights,
 * optimizer state, gradient accumulators, step counter) into the guard's
 * backup; after the run it checks every f32 element of every f32 output
 * of the program: the loss, and training.update_sq_norms, which a
 * non-finite gradient or update makes non-finite (include/dfg/training.h).
 * A NaN or an infinity there restores the region from the backup.
 *
 * Cost: one more weights region in host memory (for Adam three times the
 * weights' bytes), and one copy of it per run, which is about what the
 * optimizer's updates themselves read and write; the outputs' scan is
 * negligible. Host-memory backends (the CPU) only.
 *
 * The guard holds no pointer to a session: the session is passed to each
 * call, and either may be destroyed first. */
#ifndef DFG_FINITE_TRAINING_H
#define DFG_FINITE_TRAINING_H

#include <stddef.h>
#include <stdint.h>
#include "dfg/allocator.h"
#include "dfg/session.h"
#include "dfg/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dfg_finite_guard {
    void *backup;            /* the weights region before the last run */
    size_t bytes;            /* its size: the session's weights region's */
    int64_t steps;           /* finite steps run so far */
    dfg_allocator allocator; /* of backup */
} dfg_finite_guard;

/* Sizes *guard's backup for session's weights region (the sessions it
 * later runs must have one of that size) and sets steps to 0.
 * DFG_ERR_UNSUPPORTED on a device backend. On failure *guard needs no
 * free. */
dfg_status dfg_finite_guard_init(dfg_finite_guard *guard,
                                 dfg_session *session,
                                 const dfg_allocator *allocator);
/* Frees the backup; harmless on a zeroed or freed guard. */
void dfg_finite_guard_free(dfg_finite_guard *guard);

/* Step guard->steps + 1: dfg_session_run(session, inputs, outputs), then
 * the check. A finite step counts in guard->steps. A non-finite one
 * leaves the session's weights region as it was before the run and
 * returns DFG_ERR_NOT_FINITE, naming the step, the output and what it
 * holds ("step 12: 'loss' is NaN; the weights of step 11 are kept"); the outputs copied to `outputs` are the failed step's.
 * Any other error of the run is returned as it is (the region is then
 * not restored). */
dfg_status dfg_finite_guard_run(dfg_finite_guard *guard, dfg_session *session,
                                const void *const *inputs,
                                void *const *outputs);

#ifdef __cplusplus
}
#endif
#endif
