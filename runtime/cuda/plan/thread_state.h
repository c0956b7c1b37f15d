/* What the CUDA runtime keeps per host thread, which a session must not
 * trust: the current device and the last error.
 *
 * - A session's stream, handle and memory belong to the device current at
 *   its creation; each of its calls makes that device current and gives the
 *   caller's back afterwards, so a session runs from any thread.
 * - The last error is whatever any call on the thread left (an
 *   out-of-memory of another session, another library's failure) until
 *   someone reads it; a launch's check (cudaGetLastError after <<<>>>)
 *   would report it as its own. Before queuing work a session takes it: an
 *   error that reading clears was handled elsewhere and is dropped; one
 *   that stays is sticky (the context is lost, every later call fails) and
 *   is reported.
 *
 * The CUDA calls come as function pointers returning cudaError_t as int,
 * so that the CPU tests run this with fakes. */
#ifndef DFG_CUDA_THREAD_STATE_H
#define DFG_CUDA_THREAD_STATE_H

typedef struct dfg_cuda_thread_calls {
    int (*get_device)(int *device);  /* cudaGetDevice */
    int (*set_device)(int device);   /* cudaSetDevice */
    int (*get_last_error)(void);     /* cudaGetLastError */
} dfg_cuda_thread_calls;

/* Makes `device` current, *previous receiving the thread's device for
 * dfg_cuda_device_leave. Returns the CUDA error (0: success). */
int dfg_cuda_device_enter(const dfg_cuda_thread_calls *calls, int device,
                          int *previous);
void dfg_cuda_device_leave(const dfg_cuda_thread_calls *calls, int device,
                           int previous);

/* Takes the thread's pending error: 0 when there was none or reading
 * cleared it, else the sticky error's code. */
int dfg_cuda_take_pending_error(const dfg_cuda_thread_calls *calls);

#endif
