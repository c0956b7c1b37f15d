/* Joining the ranks and checking that they run one program (ranks.h). */
#include "runtime/mpi/ranks.h"

#include <stdlib.h>
#include "program/program_format.h"
#include "util/crc32.h"
#include "util/error.h"

/* MPI_Comm_dup, the first collective call over comm, waited for under the
 * watchdog's timeout (w has no control communicator yet: no pings), so
 * that a rank that never joins fails the start instead of hanging it;
 * the copy returns MPI errors. */
static dfg_status dup_in_time(const dfg_watchdog *w, MPI_Comm comm,
                              MPI_Comm *out)
{
    MPI_Request request;
    int code = MPI_Comm_idup(comm, out, &request);
    if (code != MPI_SUCCESS)
        return dfg_mpi_error(code, "joining the ranks");
    dfg_status st = dfg_watchdog_wait(w, &request, "joining the ranks");
    if (st != DFG_OK) {
        *out = MPI_COMM_NULL; /* not made: nothing to free */
        return st;
    }
    code = MPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN);
    return code == MPI_SUCCESS ? DFG_OK
                               : dfg_mpi_error(code, "joining the ranks");
}

dfg_status dfg_mpi_join(MPI_Comm comm, MPI_Comm *data, dfg_watchdog *w,
                        int *initialized)
{
    int ready = 0;
    MPI_Initialized(&ready);
    if (!ready && comm != MPI_COMM_NULL)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "data-parallel: a communicator but MPI is not "
                         "initialised");
    if (!ready) {
        int provided;
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) !=
            MPI_SUCCESS)
            return dfg_error(DFG_ERR_DEVICE, "data-parallel: MPI_Init failed");
        *initialized = 1;
    }
    if (comm == MPI_COMM_NULL)
        comm = MPI_COMM_WORLD;
    /* Our own communicators: their error handler is ours to set, and
     * pings never mix with the caller's messages. */
    w->control = MPI_COMM_NULL;
    MPI_Comm control = MPI_COMM_NULL;
    dfg_status st = dup_in_time(w, comm, data);
    if (st == DFG_OK)
        st = dup_in_time(w, *data, &control);
    w->control = control;
    if (st != DFG_OK)
        return st;
    int code = MPI_Comm_rank(*data, &w->rank);
    if (code == MPI_SUCCESS)
        code = MPI_Comm_size(*data, &w->size);
    return code == MPI_SUCCESS ? DFG_OK
                               : dfg_mpi_error(code, "joining the ranks");
}

dfg_status dfg_mpi_check_same_program(const dfg_watchdog *w, MPI_Comm data,
                                      const dfg_program *program)
{
    uint8_t *bytes = NULL;
    size_t size = 0;
    dfg_status st = dfg_program_serialize(program, NULL, &bytes, &size);
    if (st != DFG_OK)
        return st;
    unsigned long long mine[2] = {dfg_crc32(bytes, size), size};
    free(bytes);
    int n = w->size;
    unsigned long long *all = calloc((size_t)n * 2, sizeof *all);
    if (!all)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "data-parallel: %d ranks", n);
    MPI_Request request;
    int code = MPI_Iallgather(mine, 2, MPI_UNSIGNED_LONG_LONG, all, 2,
                              MPI_UNSIGNED_LONG_LONG, data, &request);
    st = code == MPI_SUCCESS
             ? dfg_watchdog_wait(w, &request, "the program check at start")
             : dfg_mpi_error(code, "the program check at start");
    for (int r = 1; r < n && st == DFG_OK; r++)
        if (all[2 * r] != all[0] || all[2 * r + 1] != all[1])
            st = dfg_error(DFG_ERR_INVALID_ARGUMENT,
                           "data-parallel: rank %d runs a different program "
                           "(hash %08llx, %llu bytes) than rank 0 (hash "
                           "%08llx, %llu bytes): refused", r, all[2 * r],
                           all[2 * r + 1], all[0], all[1]);
    free(all);
    return st;
}
