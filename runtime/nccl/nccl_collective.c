/* Data-parallel training on GPUs with NCCL (include/dfg/nccl.h). The
 * session's all-reduce steps call this collective with the session's
 * stream as the queue (runtime/cuda/backend.c): start enqueues
 * ncclAllReduce there, and the wait has nothing left to do, since the
 * optimizer updates after it run on the same stream. Unverified on
 * hardware. */
#include "dfg/nccl.h"

#include <cuda_runtime.h>
#include <nccl.h>
#include <stdlib.h>
#include "runtime/mpi/ranks.h"
#include "util/error.h"

struct dfg_nccl {
    dfg_session *session; /* NULL once the session lets go (session_gone) */
    MPI_Comm data;
    dfg_watchdog watchdog;
    ncclComm_t comm;
};

static dfg_status nccl_error(ncclResult_t r, const char *what)
{
    return dfg_error(DFG_ERR_DEVICE, "data-parallel (NCCL): %s failed: %s",
                     what, ncclGetErrorString(r));
}

static dfg_status start(void *context, int32_t bucket, float *data,
                        int64_t count, void *queue)
{
    dfg_nccl *n = context;
    if (!queue)
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "data-parallel (NCCL): bucket %d is not on a CUDA "
                         "stream; NCCL needs a CUDA session", (int)bucket);
    ncclResult_t r = ncclAllReduce(data, data, (size_t)count, ncclFloat,
                                   ncclAvg, n->comm, (cudaStream_t)queue);
    return r == ncclSuccess ? DFG_OK : nccl_error(r, "ncclAllReduce");
}

static dfg_status wait(void *context, int32_t bucket, void *queue)
{
    (void)context, (void)bucket, (void)queue; /* stream order */
    return DFG_OK;
}

/* NCCL's unique id from rank 0, then the communicator. */
static dfg_status open_comm(dfg_nccl *n)
{
    ncclUniqueId id;
    ncclResult_t r = ncclSuccess;
    if (n->watchdog.rank == 0)
        r = ncclGetUniqueId(&id);
    if (r != ncclSuccess)
        return nccl_error(r, "ncclGetUniqueId");
    MPI_Request request;
    int code = MPI_Ibcast(&id, (int)sizeof id, MPI_BYTE, 0, n->data, &request);
    dfg_status st = code == MPI_SUCCESS
                        ? dfg_watchdog_wait(&n->watchdog, &request,
                                            "handing out NCCL's id")
                        : dfg_mpi_error(code, "handing out NCCL's id");
    if (st == DFG_OK &&
        (r = ncclCommInitRank(&n->comm, n->watchdog.size, id,
                              n->watchdog.rank)) != ncclSuccess)
        st = nccl_error(r, "ncclCommInitRank");
    return st;
}

/* Rank 0's weights region (device memory) to every rank. */
static dfg_status broadcast_weights(dfg_nccl *n)
{
    void *region;
    size_t bytes;
    dfg_status st = dfg_session_weights_region(n->session, &region, &bytes);
    cudaStream_t stream;
    if (st != DFG_OK)
        return st;
    /* The session's uploads may still be in flight on its own stream. */
    if (cudaDeviceSynchronize() != cudaSuccess ||
        cudaStreamCreate(&stream) != cudaSuccess)
        return dfg_error(DFG_ERR_DEVICE, "data-parallel (NCCL): CUDA failed "
                         "before the weight broadcast");
    ncclResult_t r = ncclBroadcast(region, region, bytes, ncclChar, 0, n->comm,
                                   stream);
    cudaError_t e = r == ncclSuccess ? cudaStreamSynchronize(stream)
                                     : cudaSuccess;
    cudaStreamDestroy(stream);
    if (r != ncclSuccess)
        return nccl_error(r, "ncclBroadcast of the weights");
    return e == cudaSuccess ? DFG_OK
                            : dfg_error(DFG_ERR_DEVICE,
                                        "data-parallel (NCCL): the weight "
                                        "broadcast failed: %s",
                                        cudaGetErrorString(e));
}

/* The session's detach: destroyed, or its collective replaced. */
static void session_gone(void *context)
{
    ((dfg_nccl *)context)->session = NULL;
}

dfg_status dfg_nccl_create(dfg_session *session, const dfg_program *program,
                           MPI_Comm comm, dfg_nccl **out)
{
    if (!session || !program || !out || comm == MPI_COMM_NULL)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_nccl_create: session, program, comm and out "
                         "are needed");
    *out = NULL;
    dfg_nccl *n = calloc(1, sizeof *n);
    if (!n)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "data-parallel: out of memory");
    n->session = session;
    n->watchdog.timeout_seconds = 20.0;
    int initialized = 0;
    dfg_status st = dfg_mpi_join(comm, &n->data, &n->watchdog, &initialized);
    if (st == DFG_OK)
        st = dfg_mpi_check_same_program(&n->watchdog, n->data, program);
    if (st == DFG_OK)
        st = open_comm(n);
    if (st == DFG_OK)
        st = broadcast_weights(n);
    dfg_collective c = {.context = n,
                        .all_reduce_start = start,
                        .all_reduce_wait = wait,
                        .detach = session_gone};
    if (st == DFG_OK)
        st = dfg_session_set_collective(session, &c);
    if (st != DFG_OK) {
        /* After a failure the ranks may disagree on what comes next: leave
         * the communicators to the process's exit. */
        free(n);
        return st;
    }
    *out = n;
    return DFG_OK;
}

void dfg_nccl_destroy(dfg_nccl *n)
{
    if (!n)
        return;
    if (n->session)
        dfg_session_set_collective(n->session, NULL);
    ncclCommDestroy(n->comm);
    MPI_Comm_free(&n->watchdog.control);
    MPI_Comm_free(&n->data);
    free(n);
}
