/* A run's inputs and outputs on the CUDA backend (backend_context.h):
 * staged through one pinned host buffer allocated at session creation, so
 * that every copy is asynchronous and the run ends with one
 * synchronisation: the inputs are copied into the buffer and queued to
 * the device, the run is queued (its graph copies the status word out
 * itself), the outputs are queued back, the stream is waited for once,
 * and the outputs are copied from the buffer to the caller. */
#include <string.h>

#include "runtime/cuda/backend_context.h"
#include "util/error.h"

dfg_status dfg_cuda_reserve_io(dfg_backend_context *c, size_t bytes)
{
    if (bytes <= c->staging_bytes)
        return DFG_OK;
    int previous;
    dfg_status st = dfg_cuda_enter(c, &previous);
    if (st != DFG_OK)
        return st;
    if (c->staging)
        cudaFreeHost(c->staging);
    c->staging = NULL;
    c->staging_bytes = 0;
    cudaError_t e = cudaHostAlloc((void **)&c->staging, bytes,
                                  cudaHostAllocDefault);
    dfg_cuda_leave(c, previous);
    if (e != cudaSuccess) {
        cudaGetLastError(); /* reported here, not by the next launch */
        c->staging = NULL;
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "cuda backend: %zu bytes of pinned staging for the "
                         "inputs and outputs: %s", bytes, cudaGetErrorString(e));
    }
    c->staging_bytes = bytes;
    return DFG_OK;
}

/* Queues the copies of n transfers through the staging from *at on. */
static cudaError_t queue_copies(dfg_backend_context *c,
                                const dfg_backend_transfer *t, int32_t n,
                                int inputs, size_t *at)
{
    for (int32_t i = 0; i < n; i++) {
        if (t[i].bytes == 0)
            continue;
        char *staged = c->staging + *at;
        *at += t[i].bytes;
        cudaError_t e;
        if (inputs) {
            memcpy(staged, t[i].host, t[i].bytes);
            e = cudaMemcpyAsync(t[i].region, staged, t[i].bytes,
                                cudaMemcpyHostToDevice, c->stream);
        } else {
            e = cudaMemcpyAsync(staged, t[i].region, t[i].bytes,
                                cudaMemcpyDeviceToHost, c->stream);
        }
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

static size_t total_bytes(const dfg_backend_transfer *t, int32_t n)
{
    size_t bytes = 0;
    for (int32_t i = 0; i < n; i++)
        bytes += t[i].bytes;
    return bytes;
}

static dfg_status run_here(dfg_backend_context *c,
                           const dfg_backend_transfer *inputs, int32_t n_inputs,
                           const dfg_backend_transfer *outputs,
                           int32_t n_outputs, int32_t *failed_step)
{
    *failed_step = 0;
    size_t in_bytes = total_bytes(inputs, n_inputs);
    if (in_bytes + total_bytes(outputs, n_outputs) > c->staging_bytes)
        return dfg_error(DFG_ERR_INTERNAL, "cuda backend: a run's inputs and "
                         "outputs exceed the %zu bytes reserved for them",
                         c->staging_bytes);
    size_t at = 0;
    cudaError_t e = queue_copies(c, inputs, n_inputs, 1, &at);
    if (e != cudaSuccess)
        return dfg_cuda_error(e, "copying the inputs");
    dfg_status st = dfg_cuda_launch_run(c, failed_step);
    if (st != DFG_OK)
        return st;
    if ((e = queue_copies(c, outputs, n_outputs, 0, &at)) != cudaSuccess)
        return dfg_cuda_error(e, "copying the outputs");
    if ((st = dfg_cuda_synchronize_here(c)) != DFG_OK)
        return st;
    const char *staged = c->staging + in_bytes;
    for (int32_t i = 0; i < n_outputs; staged += outputs[i].bytes, i++)
        if (outputs[i].bytes)
            memcpy(outputs[i].host, staged, outputs[i].bytes);
    return DFG_OK;
}

dfg_status dfg_cuda_run_io(dfg_backend_context *c,
                           const dfg_backend_transfer *inputs, int32_t n_inputs,
                           const dfg_backend_transfer *outputs,
                           int32_t n_outputs, int32_t *failed_step)
{
    int previous;
    dfg_status st = dfg_cuda_enter(c, &previous);
    if (st != DFG_OK)
        return st;
    st = run_here(c, inputs, n_inputs, outputs, n_outputs, failed_step);
    if (st != DFG_OK) /* no copy may still read the staging */
        cudaStreamSynchronize(c->stream);
    dfg_cuda_leave(c, previous);
    return st;
}
