/* The warm-up before a CUDA graph capture (see warm_up.h). */
#include "runtime/cuda/plan/warm_up.h"

dfg_status dfg_cuda_warm_up(const dfg_cuda_warm_up_calls *c)
{
    dfg_status st = c->save_inplace_writes(c->ctx);
    if (st == DFG_OK)
        st = c->enqueue_steps(c->ctx);
    /* Even after a failed enqueue, what was queued finishes before the
     * saved bytes go back. */
    dfg_status waited = c->wait(c->ctx);
    if (st == DFG_OK)
        st = waited;
    if (st == DFG_OK)
        st = c->clear_status(c->ctx);
    dfg_status restored = c->restore_inplace_writes(c->ctx);
    return st != DFG_OK ? st : restored;
}
