/* The CUDA backend's runs (see backend.c): the steps prepared once, the
 * warm-up and the CUDA graph capture, a run's launch, and the one
 * synchronisation that ends it and reads the status word.
 *
 * The status word: every run (the captured graph included) clears it
 * first and copies it last into pinned host memory (c->status_host), so
 * that synchronize() only waits for the stream and reads that copy. */
#include <stdlib.h>

#include "runtime/cuda/backend_context.h"
#include "util/error.h"
#include "runtime/cuda/plan/graph_option.h"
#include "runtime/cuda/plan/lt_mapping.h"
#include "util/memory.h"
#include "runtime/cuda/plan/warm_up.h"

static dfg_status wait_stream(void *opaque)
{
    dfg_backend_context *c = opaque;
    cudaError_t e = cudaStreamSynchronize(c->stream);
    return e == cudaSuccess ? DFG_OK : dfg_cuda_error(e, "running the steps");
}

/* After the warm-up: what it raised says nothing about real inputs. */
static dfg_status clear_status(void *opaque)
{
    dfg_backend_context *c = opaque;
    if (!c->status)
        return DFG_OK;
    cudaError_t e = cudaMemsetAsync(c->status, 0, sizeof *c->status, c->stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(c->stream);
    *c->status_host = 0;
    return e == cudaSuccess ? DFG_OK
                            : dfg_cuda_error(e, "clearing the status word");
}

/* Waits for the stream, then reads (and clears) the run's copy of the
 * status word: one synchronisation. */
dfg_status dfg_cuda_synchronize_here(dfg_backend_context *c)
{
    dfg_status st = wait_stream(c);
    if (st != DFG_OK || *c->status_host == 0)
        return st;
    int32_t step = (int32_t)*c->status_host - 1;
    *c->status_host = 0;
    return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                     "cuda backend: run step %d (%s): an index or label is out "
                     "of range for its axis (what it names is 0 or left as "
                     "it was)",
                     (int)step,
                     step >= 0 && step < c->n_plans
                         ? dfg_op_get(c->plans[step].args->op)->name : "?");
}

dfg_status dfg_cuda_synchronize(dfg_backend_context *c)
{
    return dfg_cuda_on_device(c, dfg_cuda_synchronize_here);
}

/* One run's queue: the status word cleared, every step, the word copied
 * to the pinned host. */
static dfg_status enqueue_run(void *opaque)
{
    dfg_backend_context *c = opaque;
    cudaError_t e = cudaSuccess;
    if (c->status)
        e = cudaMemsetAsync(c->status, 0, sizeof *c->status, c->stream);
    if (e != cudaSuccess)
        return dfg_cuda_error(e, "clearing the status word");
    dfg_status st = dfg_cuda_enqueue_all(c);
    if (st != DFG_OK || !c->status)
        return st;
    e = cudaMemcpyAsync(c->status_host, c->status, sizeof *c->status,
                        cudaMemcpyDeviceToHost, c->stream);
    return e == cudaSuccess ? DFG_OK
                            : dfg_cuda_error(e, "reading the status word");
}

/* The bytes steps write in place, saved on the host before the warm-up
 * (c->saved, kept only when every byte was saved) and copied back after
 * it. */
static dfg_status save_inplace_writes(void *opaque)
{
    dfg_backend_context *c = opaque;
    void *at[DFG_CUDA_MAX_INPLACE_WRITES];
    size_t bytes[DFG_CUDA_MAX_INPLACE_WRITES], total = 0;
    for (int32_t i = 0; i < c->n_plans; i++) {
        int32_t n = dfg_cuda_inplace_writes(c->plans[i].args, at, bytes);
        for (int32_t k = 0; k < n; k++)
            total += bytes[k];
    }
    if (total == 0)
        return DFG_OK;
    char *saved = dfg_alloc(&c->allocator, total), *into = saved;
    if (!saved)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "cuda backend: out of memory "
                         "for %zu bytes of optimizer state", total);
    for (int32_t i = 0; i < c->n_plans; i++) {
        int32_t n = dfg_cuda_inplace_writes(c->plans[i].args, at, bytes);
        for (int32_t k = 0; k < n; into += bytes[k], k++) {
            cudaError_t e = cudaMemcpyAsync(into, at[k], bytes[k],
                                            cudaMemcpyDeviceToHost, c->stream);
            if (e == cudaSuccess)
                e = cudaStreamSynchronize(c->stream);
            if (e != cudaSuccess) {
                dfg_free(&c->allocator, saved);
                return dfg_cuda_error(e, "saving the optimizer state");
            }
        }
    }
    c->saved = saved;
    return DFG_OK;
}

static dfg_status restore_inplace_writes(void *opaque)
{
    dfg_backend_context *c = opaque;
    if (!c->saved)
        return DFG_OK;
    void *at[DFG_CUDA_MAX_INPLACE_WRITES];
    size_t bytes[DFG_CUDA_MAX_INPLACE_WRITES];
    const char *from = c->saved;
    cudaError_t e = cudaSuccess;
    for (int32_t i = 0; i < c->n_plans && e == cudaSuccess; i++) {
        int32_t n = dfg_cuda_inplace_writes(c->plans[i].args, at, bytes);
        for (int32_t k = 0; k < n && e == cudaSuccess; from += bytes[k], k++)
            e = cudaMemcpyAsync(at[k], from, bytes[k], cudaMemcpyHostToDevice,
                                c->stream);
    }
    /* The saved bytes are freed only once the copies have read them. */
    cudaError_t waited = cudaStreamSynchronize(c->stream);
    if (e == cudaSuccess)
        e = waited;
    dfg_free(&c->allocator, c->saved);
    c->saved = NULL;
    return e == cudaSuccess ? DFG_OK
                            : dfg_cuda_error(e, "restoring the optimizer state");
}

static int is_blas_kind(dfg_cuda_kind kind)
{
    return kind == DFG_CUDA_MATMUL || kind == DFG_CUDA_GEMM ||
           kind == DFG_CUDA_CONV2D || kind == DFG_CUDA_CONV_GRAD_INPUT ||
           kind == DFG_CUDA_CONV_GRAD_WEIGHT;
}

/* Captures the planned steps into a CUDA graph after a warm-up run that
 * leaves no trace (graphs on, and steps to run): the warm-up also makes
 * the first call of each library, NCCL's first collective included,
 * outside capture. Any graph captured before is dropped first. */
static dfg_status capture_steps(dfg_backend_context *c)
{
    dfg_cuda_graph_destroy(&c->graph);
    if (!dfg_cuda_graphs_enabled(getenv(DFG_CUDA_GRAPHS_ENV)) ||
        c->n_plans == 0)
        return DFG_OK;
    const dfg_cuda_warm_up_calls warm_up = {
        c, save_inplace_writes, enqueue_run, wait_stream, clear_status,
        restore_inplace_writes};
    dfg_status st = dfg_cuda_warm_up(&warm_up);
    if (st == DFG_OK)
        st = dfg_cuda_graph_capture(&c->graph, c->stream, enqueue_run, c);
    return st;
}

/* A product's cuBLAS workspace: the step's planned one when it is larger
 * than the session's, else the session's, which the handle holds from
 * the start (the default target plans 4 MiB, Hopper's session has 32). A
 * convolution cuDNN takes gets the larger of the step's whole workspace
 * and the session's (the stream runs one step at a time). */
static dfg_status take_libraries(dfg_backend_context *c,
                                 dfg_cuda_step_plan *p)
{
    if (!is_blas_kind(p->kind))
        return DFG_OK;
    if (p->blas_workspace_bytes <= c->blas_workspace_bytes)
        p->blas_workspace = NULL;
    dfg_cuda_blas_workspace_or_session(&p->blas_workspace,
                                       &p->blas_workspace_bytes,
                                       c->blas_workspace,
                                       c->blas_workspace_bytes);
    const dfg_step_args *a = p->args;
    int own = a->workspace && (size_t)a->workspace_bytes > c->blas_workspace_bytes;
    dfg_status st = dfg_cuda_lt_take(c->lt, &c->allocator, p);
    if (st == DFG_OK)
        st = dfg_cuda_dnn_take(c->dnn, &c->allocator, p,
                               own ? a->workspace : c->blas_workspace,
                               own ? (size_t)a->workspace_bytes
                                   : c->blas_workspace_bytes);
    if (st == DFG_OK && p->kind == DFG_CUDA_CONV2D && p->u.conv.nhwc &&
        !p->dnn)
        st = dfg_error(DFG_ERR_UNSUPPORTED, "conv2d (step %d) is nhwc, which "
                       "only cuDNN runs, and cuDNN does not take it here "
                       "(%s): compile with plain layouts (dfgc --no-layouts, "
                       "assign_layouts = 0)", (int)p->index,
                       p->dnn_why ? p->dnn_why
                                  : "no cuDNN in this build, or "
                                    "DFG_CUDA_CUDNN=0");
    dfg_cuda_step_runs_on(p, p->runs_on, sizeof p->runs_on);
    return st;
}

static void release_plans(dfg_backend_context *c, dfg_cuda_step_plan *plans,
                          int32_t n)
{
    for (int32_t i = 0; plans && i < n; i++) {
        dfg_cuda_dnn_release(&c->allocator, &plans[i]);
        dfg_cuda_lt_release(&c->allocator, &plans[i]);
    }
    dfg_free(&c->allocator, plans);
}

void dfg_cuda_free_plans(dfg_backend_context *c)
{
    release_plans(c, c->plans, c->n_plans);
    c->plans = NULL;
    c->n_plans = 0;
}

/* The new plans replace the old ones only once all are made: a prepare
 * that fails (after dfg_session_copy_weights) leaves the session as it
 * was. */
static dfg_status prepare_here(dfg_backend_context *c,
                               const dfg_step_args *steps, int32_t n_steps)
{
    dfg_cuda_step_plan *plans =
        dfg_calloc(&c->allocator, (size_t)n_steps + 1, sizeof *plans);
    if (!plans)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "cuda backend: out of memory for %d step plans",
                         (int)n_steps);
    void *session_workspace;
    size_t session_bytes;
    dfg_cuda_blas_workspace(c->blas_workspace, (int64_t)c->blas_workspace_bytes,
                            0, &session_workspace, &session_bytes);
    dfg_status st = dfg_cuda_blas_set_workspace(&c->blas, session_workspace,
                                                session_bytes);
    int32_t made = 0;
    for (; made < n_steps && st == DFG_OK; made++) {
        st = dfg_cuda_step_plan_make(&steps[made], made, &plans[made]);
        if (st == DFG_OK)
            st = take_libraries(c, &plans[made]);
        if (st != DFG_OK)
            st = dfg_error_prefix(st, "cuda backend, run step %d (%s)",
                                  (int)made, dfg_op_get(steps[made].op)->name);
    }
    if (st != DFG_OK) {
        release_plans(c, plans, made);
        return st;
    }
    dfg_cuda_graph_destroy(&c->graph);
    dfg_cuda_free_plans(c);
    c->plans = plans;
    c->n_plans = n_steps;
    return capture_steps(c);
}

dfg_status dfg_cuda_prepare(dfg_backend_context *c, const dfg_step_args *steps,
                            int32_t n_steps)
{
    int previous;
    dfg_status st = dfg_cuda_enter(c, &previous);
    if (st == DFG_OK) {
        st = prepare_here(c, steps, n_steps);
        dfg_cuda_leave(c, previous);
    }
    return st;
}

/* Queues one run (the graph, or the steps one by one) on the stream. */
dfg_status dfg_cuda_launch_run(dfg_backend_context *c, int32_t *failed_step)
{
    dfg_status st = c->graph.exec ? dfg_cuda_graph_launch(&c->graph, c->stream)
                                  : enqueue_run(c);
    *failed_step = st != DFG_OK && !c->graph.exec ? c->failed_step : 0;
    return st;
}

static dfg_status launch_here(dfg_backend_context *c)
{
    int32_t failed = 0;
    dfg_status st = dfg_cuda_launch_run(c, &failed);
    c->failed_step = failed;
    return st;
}

dfg_status dfg_cuda_run_all(dfg_backend_context *c, int32_t *failed_step)
{
    c->failed_step = 0;
    dfg_status st = dfg_cuda_on_device(c, launch_here);
    *failed_step = c->failed_step;
    return st;
}

/* One step alone, as a profile times it: the status word cleared before
 * the first step and read after the last, as a whole run does. */
static dfg_status run_step_here(dfg_backend_context *c, int32_t i)
{
    cudaError_t e = cudaSuccess;
    if (i == 0 && c->status)
        e = cudaMemsetAsync(c->status, 0, sizeof *c->status, c->stream);
    if (e != cudaSuccess)
        return dfg_cuda_error(e, "clearing the status word");
    dfg_status st = dfg_cuda_enqueue_step(c, i);
    if (st == DFG_OK && i == c->n_plans - 1 && c->status &&
        (e = cudaMemcpyAsync(c->status_host, c->status, sizeof *c->status,
                             cudaMemcpyDeviceToHost, c->stream)) != cudaSuccess)
        st = dfg_cuda_error(e, "reading the status word");
    return st == DFG_OK ? wait_stream(c) : st;
}

dfg_status dfg_cuda_run_step(dfg_backend_context *c, int32_t i)
{
    if (i < 0 || i >= c->n_plans)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "cuda backend: no "
                         "prepared step %d", (int)i);
    int previous;
    dfg_status st = dfg_cuda_enter(c, &previous);
    if (st != DFG_OK)
        return st;
    st = run_step_here(c, i);
    dfg_cuda_leave(c, previous);
    return st;
}

const char *dfg_cuda_step_library(dfg_backend_context *c, int32_t i)
{
    return i >= 0 && i < c->n_plans && c->plans[i].runs_on[0]
               ? c->plans[i].runs_on : NULL;
}

/* The collective steps queue the collective's work when enqueued, so a
 * graph captured before it was set holds none: capture again. */
dfg_status dfg_cuda_collective_changed(dfg_backend_context *c)
{
    return dfg_cuda_on_device(c, capture_steps);
}
