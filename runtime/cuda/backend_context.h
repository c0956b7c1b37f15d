/* The CUDA backend's per-session state, shared by the files that make up
 * the backend: backend.c (the platform, the session, its regions and
 * copies), backend_steps.c (queuing the prepared steps), backend_run.c
 * (preparing, capturing, running, synchronising) and backend_staging.c
 * (the pinned staging of a run's inputs and outputs). Module-internal. */
#ifndef DFG_CUDA_BACKEND_CONTEXT_H
#define DFG_CUDA_BACKEND_CONTEXT_H

#include <cuda_runtime_api.h>

#include "runtime/backend.h"
#include "runtime/cuda/blas.h"
#include "runtime/cuda/blas_lt.h"
#include "runtime/cuda/dnn.h"
#include "runtime/cuda/graph_capture.h"
#include "runtime/cuda/plan/step_plan.h"

/* Bytes after each region: the status word, padded to keep alignment. */
#define DFG_CUDA_STATUS_TAIL_BYTES 256

struct dfg_backend_context {
    dfg_allocator allocator;
    int device;                 /* current at creation */
    cudaStream_t stream;
    dfg_cuda_blas blas;
    dfg_cuda_dnn *dnn;          /* cuDNN's handle, NULL without cuDNN */
    dfg_cuda_lt *lt;            /* cuBLASLt's, NULL without cuBLASLt */
    void *blas_workspace;       /* the session's, in the arena's tail: the
                                   handle's, set once; cuDNN's floor */
    size_t blas_workspace_bytes;
    unsigned int *status;       /* device memory, in the first region's tail */
    void *status_region;        /* that region */
    /* Pinned host memory (cudaHostAlloc), owned: the status word's copy
     * that every run reads back, then the staging of the inputs and
     * outputs (backend_staging.c). */
    unsigned int *status_host;
    char *staging;
    size_t staging_bytes;
    dfg_cuda_step_plan *plans;
    int32_t n_plans;
    int32_t failed_step;        /* of the last enqueue that failed */
    void *saved;                /* host copy of the in-place writes, held
                                   during the warm-up only */
    dfg_cuda_graph graph;
};

dfg_status dfg_cuda_error(cudaError_t e, const char *what);

/* Each call of a session runs with its device current and gives the
 * caller's back (thread_state.h). */
dfg_status dfg_cuda_enter(const dfg_backend_context *c, int *previous);
void dfg_cuda_leave(const dfg_backend_context *c, int previous);
/* work(c) between enter and leave. */
dfg_status dfg_cuda_on_device(dfg_backend_context *c,
                              dfg_status (*work)(dfg_backend_context *));
/* The pending sticky error of the calling thread, 0 if none. */
int dfg_cuda_pending_error(void);

/* Queues every prepared step on the stream (backend_steps.c); c->failed_step
 * names the one that failed. opaque is the context. */
dfg_status dfg_cuda_enqueue_all(void *opaque);

/* backend_run.c: the table's prepare, run_all, collective_changed and
 * synchronize. */
dfg_status dfg_cuda_prepare(dfg_backend_context *c, const dfg_step_args *steps,
                            int32_t n_steps);
dfg_status dfg_cuda_run_all(dfg_backend_context *c, int32_t *failed_step);
dfg_status dfg_cuda_collective_changed(dfg_backend_context *c);
dfg_status dfg_cuda_synchronize(dfg_backend_context *c);
/* synchronize() with the device already current. */
dfg_status dfg_cuda_synchronize_here(dfg_backend_context *c);
/* Queues one run (the graph, or the steps) with the device current. */
dfg_status dfg_cuda_launch_run(dfg_backend_context *c, int32_t *failed_step);
/* The table's run_step: prepared step i alone, waited for (profiling). */
dfg_status dfg_cuda_run_step(dfg_backend_context *c, int32_t i);
/* The table's step_library: what runs prepared step i when a library
 * does (lt_mapping.h, dfg_cuda_step_runs_on), else NULL. */
const char *dfg_cuda_step_library(dfg_backend_context *c, int32_t i);
/* Queues prepared step i (backend_steps.c). */
dfg_status dfg_cuda_enqueue_step(dfg_backend_context *c, int32_t i);
/* Releases the prepared steps (and what cuDNN and cuBLASLt hold for
 * them). */
void dfg_cuda_free_plans(dfg_backend_context *c);

/* backend_staging.c: the table's reserve_io and run_io. */
dfg_status dfg_cuda_reserve_io(dfg_backend_context *c, size_t bytes);
dfg_status dfg_cuda_run_io(dfg_backend_context *c,
                           const dfg_backend_transfer *inputs,
                           int32_t n_inputs,
                           const dfg_backend_transfer *outputs,
                           int32_t n_outputs, int32_t *failed_step);

#endif
