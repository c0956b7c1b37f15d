/* The calling thread's CUDA device and last error (see thread_state.h). */
#include "runtime/cuda/plan/thread_state.h"

int dfg_cuda_device_enter(const dfg_cuda_thread_calls *calls, int device,
                          int *previous)
{
    int e = calls->get_device(previous);
    if (e != 0) {
        *previous = device;
        return e;
    }
    return *previous == device ? 0 : calls->set_device(device);
}

void dfg_cuda_device_leave(const dfg_cuda_thread_calls *calls, int device,
                           int previous)
{
    if (previous != device)
        calls->set_device(previous);
}

int dfg_cuda_take_pending_error(const dfg_cuda_thread_calls *calls)
{
    if (calls->get_last_error() == 0)
        return 0;
    return calls->get_last_error();
}
