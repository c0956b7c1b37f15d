/* The session's device made current around every call, and CUDA errors
 * as dfg's (backend_context.h): what backend.c and its run, staging and
 * step files share. Calls none of them, so that they call each other one
 * way. */
#include "runtime/cuda/backend_context.h"
#include "util/error.h"
#include "runtime/cuda/plan/thread_state.h"

dfg_status dfg_cuda_error(cudaError_t e, const char *what)
{
    return dfg_error(DFG_ERR_DEVICE, "cuda backend: %s: %s", what,
                     cudaGetErrorString(e));
}

static int get_device(int *device) { return (int)cudaGetDevice(device); }
static int set_device(int device) { return (int)cudaSetDevice(device); }
static int get_last_error(void) { return (int)cudaGetLastError(); }

static const dfg_cuda_thread_calls thread_calls = {get_device, set_device,
                                                   get_last_error};

dfg_status dfg_cuda_enter(const dfg_backend_context *c, int *previous)
{
    int e = dfg_cuda_device_enter(&thread_calls, c->device, previous);
    return e == 0 ? DFG_OK
                  : dfg_cuda_error((cudaError_t)e, "selecting the session's device");
}

void dfg_cuda_leave(const dfg_backend_context *c, int previous)
{
    dfg_cuda_device_leave(&thread_calls, c->device, previous);
}

dfg_status dfg_cuda_on_device(dfg_backend_context *c,
                              dfg_status (*work)(dfg_backend_context *))
{
    int previous;
    dfg_status st = dfg_cuda_enter(c, &previous);
    if (st == DFG_OK) {
        st = work(c);
        dfg_cuda_leave(c, previous);
    }
    return st;
}

int dfg_cuda_pending_error(void)
{
    return dfg_cuda_take_pending_error(&thread_calls);
}
