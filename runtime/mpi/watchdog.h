/* Waiting for an MPI request with a deadline (runtime/mpi/watchdog.c). */
#ifndef DFG_MPI_WATCHDOG_H
#define DFG_MPI_WATCHDOG_H

#include <mpi.h>
#include "dfg/status.h"

typedef struct dfg_watchdog {
    /* A duplicate for pings, never for data; MPI_COMM_NULL while the
     * ranks join (a timeout then names no rank). */
    MPI_Comm control;
    int rank, size;
    double timeout_seconds;
} dfg_watchdog;

/* Waits for *request. While waiting it answers other ranks' pings; past
 * the timeout it pings every rank and fails with DFG_ERR_DEVICE naming
 * those that do not answer. `what` names the operation in messages. An
 * MPI error is returned with MPI's own text. */
dfg_status dfg_watchdog_wait(const dfg_watchdog *w, MPI_Request *request,
                             const char *what);

/* An MPI error code as a dfg error naming `what`. */
dfg_status dfg_mpi_error(int code, const char *what);

#endif
