/* The warm-up run before a CUDA graph capture: it loads the modules and
 * lets cuBLAS pick its kernels, none of which may happen during a capture,
 * and must leave no trace. It runs every step on the zeroed arena, so what
 * a step computes from its inputs (an index out of range that raises the
 * status word) says nothing about real inputs: the status word is cleared,
 * not reported, and a program behaves the same with graphs on and off.
 * What steps write in place (a training program's weights and optimizer
 * state) is saved first and put back after, whatever happened.
 *
 * Plain C over the backend's device calls, so that the CPU tests run it
 * with fakes. */
#ifndef DFG_CUDA_WARM_UP_H
#define DFG_CUDA_WARM_UP_H

#include "dfg/status.h"

typedef struct dfg_cuda_warm_up_calls {
    void *ctx;
    dfg_status (*save_inplace_writes)(void *ctx);
    dfg_status (*enqueue_steps)(void *ctx);
    dfg_status (*wait)(void *ctx);          /* the stream is idle */
    dfg_status (*clear_status)(void *ctx);  /* the status word is 0 */
    /* Called whenever save was: it also frees what save kept. */
    dfg_status (*restore_inplace_writes)(void *ctx);
} dfg_cuda_warm_up_calls;

/* The first error of the calls, or DFG_OK. */
dfg_status dfg_cuda_warm_up(const dfg_cuda_warm_up_calls *calls);

#endif
