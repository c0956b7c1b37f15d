/* Data-parallel training on GPUs with NCCL: libdfg_nccl
 * (docs/data-parallel.md). Built where CUDA, NCCL and MPI are found; not
 * verified on hardware (there was no GPU where it was written).
 *
 * The same as include/dfg/mpi.h for a CUDA session: MPI (comm) starts the
 * ranks, checks that they run one program and hands out NCCL's unique id;
 * NCCL then broadcasts rank 0's weights region (device memory) and
 * averages each bucket with ncclAllReduce (ncclAvg) on the session's
 * stream, in stream order (so the CUDA graph the session replays holds
 * the all-reduces too). Each rank must have chosen its GPU
 * (cudaSetDevice) before creating its session. */
#ifndef DFG_NCCL_H
#define DFG_NCCL_H

#include <mpi.h>
#include "dfg/dfg.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dfg_nccl dfg_nccl;

/* Collective over comm (MPI initialised by the caller). The program is
 * read here only; the session and *out may be destroyed in either order
 * (as dfg_data_parallel_create says). */
dfg_status dfg_nccl_create(dfg_session *session, const dfg_program *program,
                           MPI_Comm comm, dfg_nccl **out);
void dfg_nccl_destroy(dfg_nccl *nccl);

#ifdef __cplusplus
}
#endif
#endif
