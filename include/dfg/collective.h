/* The communication behind a data-parallel training program's all-reduce
 * steps (docs/data-parallel.md).
 *
 * A program compiled with dfg_training_options.data_parallel has, per
 * bucket of gradients, an all_reduce_start step (right after the bucket's
 * last gradient is computed) and an all_reduce_wait step (before the
 * bucket's optimizer updates). A session runs them through the
 * dfg_collective it is given; without one they do nothing, which is the
 * average over one process. libdfg_mpi (include/dfg/mpi.h) provides one
 * over MPI; a host program may provide its own. */
#ifndef DFG_COLLECTIVE_H
#define DFG_COLLECTIVE_H

#include <stddef.h>
#include <stdint.h>
#include "dfg/session.h"
#include "dfg/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* `queue` is the backend's queue the step is issued on: NULL on the CPU,
 * where a call does its work on the host (MPI); the session's
 * cudaStream_t on CUDA, where a call only enqueues its work there in
 * stream order (NCCL), since the CUDA backend issues its steps once into a
 * CUDA graph and replays that. */
typedef struct dfg_collective {
    void *context; /* handed to both calls, owned by the caller */
    /* Starts replacing the `count` f32 at `data` (region memory of the
     * session: device memory on a device backend) by their average over
     * the ranks. `bucket` numbers the buckets of the program from 0. The
     * bytes are not touched by the program until the matching wait. */
    dfg_status (*all_reduce_start)(void *context, int32_t bucket, float *data,
                                   int64_t count, void *queue);
    /* Returns (or, on a queue, makes the queue wait) once the bucket's
     * average is in place; or an error. */
    dfg_status (*all_reduce_wait)(void *context, int32_t bucket, void *queue);
    /* For a program with a sharded optimizer (its buckets' all-reduce
     * steps have attrs.group = ranks > 1; docs/data-parallel.md); NULL
     * (and 0) otherwise, and such a program's steps then fail. */
    int32_t rank, ranks;
    /* Starts replacing the first `shard` f32 at `data` by the sum over the
     * ranks of floats [rank * shard, (rank + 1) * shard) of their `data`
     * (ranks x shard floats); the matching all_reduce_wait divides them
     * by the ranks. */
    dfg_status (*reduce_scatter_start)(void *context, int32_t bucket,
                                       float *data, int64_t shard,
                                       void *queue);
    /* Fills `data` (ranks x shard f32) with every rank's floats [r * shard,
     * (r + 1) * shard) of its own `data`, and returns when done. */
    dfg_status (*all_gather)(void *context, int32_t bucket, float *data,
                             int64_t shard, void *queue);
    /* Optional: called by the CPU backend after each step, so that the
     * communication in flight advances while the rest of backward runs
     * (MPI progresses non-blocking collectives only inside MPI calls). */
    void (*progress)(void *context);
    /* Optional: called once when the session lets go of this collective,
     * either replaced (dfg_session_set_collective) or with the session
     * destroyed while it is still set. A context that refers back to the
     * session (include/dfg/mpi.h, nccl.h) forgets it here, so that
     * nothing touches a destroyed session whatever the order of the
     * two destroys. */
    void (*detach)(void *context);
} dfg_collective;

/* Makes session's all-reduce steps call *collective (copied; its context
 * must outlive the session's runs); NULL removes it. The collective set
 * before, if any, has its detach called first. A backend that recorded
 * the steps' work (the CUDA backend's graph) records it again here, after
 * a warm-up run outside capture that makes the collective's first calls
 * (as NCCL wants): every rank calls this at the same point. */
dfg_status dfg_session_set_collective(dfg_session *session,
                                      const dfg_collective *collective);

/* The session's own weights region: its address (region memory) and size.
 * Training runs update it in place; a data-parallel start broadcasts it. */
dfg_status dfg_session_weights_region(dfg_session *session, void **data,
                                      size_t *bytes);

#ifdef __cplusplus
}
#endif
#endif
