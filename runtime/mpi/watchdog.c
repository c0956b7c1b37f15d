/* The watchdog on waits (include/dfg/mpi.h): a rank that died or hangs
 * never completes its part of a collective, so a plain MPI_Wait would
 * block forever. Waits poll instead, and past the timeout the waiting
 * rank pings every other rank on a control communicator: live ranks
 * answer from their own polling loops (or from their own timeouts), so
 * the ranks that stay silent for a grace period are the lost ones. */
#include "runtime/mpi/watchdog.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "util/error.h"

enum { TAG_PING = 1, TAG_PONG = 2 };
#define GRACE_SECONDS 3.0

/* Between polls: give the core to whatever else may run (the other ranks
 * on an oversubscribed machine), and after a second of waiting, sleep a
 * little, so that a long hang does not burn a core. */
static void nap(double waited_seconds)
{
    if (waited_seconds < 1.0) {
        sched_yield();
        return;
    }
    struct timespec t = {0, 200000};
    nanosleep(&t, NULL);
}

dfg_status dfg_mpi_error(int code, const char *what)
{
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error %d", code);
    return dfg_error(DFG_ERR_DEVICE, "data-parallel: %s failed: %s", what,
                     text);
}

/* Answers every ping that has arrived. */
static void answer_pings(const dfg_watchdog *w)
{
    while (w->control != MPI_COMM_NULL) {
        int arrived = 0, token;
        MPI_Status status;
        if (MPI_Iprobe(MPI_ANY_SOURCE, TAG_PING, w->control, &arrived,
                       &status) != MPI_SUCCESS || !arrived)
            return;
        if (MPI_Recv(&token, 1, MPI_INT, status.MPI_SOURCE, TAG_PING,
                     w->control, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return;
        MPI_Request ignored;
        if (MPI_Isend(&w->rank, 1, MPI_INT, status.MPI_SOURCE, TAG_PONG,
                      w->control, &ignored) == MPI_SUCCESS)
            MPI_Request_free(&ignored);
    }
}

/* Pings every other rank and lists, in text, those silent for the grace
 * period. Requests to lost ranks are left pending: the process is about
 * to report a fault and exit. */
static int find_silent(const dfg_watchdog *w, char *text, size_t size)
{
    enum { MAX_RANKS = 4096 };
    static MPI_Request pongs[MAX_RANKS];
    static int answers[MAX_RANKS];
    int n = w->size < MAX_RANKS ? w->size : MAX_RANKS, silent = 0;
    for (int r = 0; r < n; r++) {
        pongs[r] = MPI_REQUEST_NULL;
        if (r == w->rank)
            continue;
        MPI_Request ping;
        if (MPI_Isend(&w->rank, 1, MPI_INT, r, TAG_PING, w->control, &ping) ==
            MPI_SUCCESS)
            MPI_Request_free(&ping);
        MPI_Irecv(&answers[r], 1, MPI_INT, r, TAG_PONG, w->control, &pongs[r]);
    }
    double end = MPI_Wtime() + GRACE_SECONDS;
    int pending = 1;
    while (pending && MPI_Wtime() < end) {
        pending = 0;
        for (int r = 0; r < n; r++) {
            int done = 0;
            if (pongs[r] != MPI_REQUEST_NULL &&
                (MPI_Test(&pongs[r], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS ||
                 !done))
                pending = 1;
        }
        answer_pings(w);
        nap(GRACE_SECONDS);
    }
    size_t used = 0;
    text[0] = '\0';
    for (int r = 0; r < n; r++)
        if (pongs[r] != MPI_REQUEST_NULL) {
            silent++;
            if (used < size)
                used += (size_t)snprintf(text + used, size - used, "%s%d",
                                         silent > 1 ? ", " : "", r);
        }
    return silent;
}

dfg_status dfg_watchdog_wait(const dfg_watchdog *w, MPI_Request *request,
                             const char *what)
{
    double began = MPI_Wtime(), deadline = began + w->timeout_seconds;
    for (;;) {
        int done = 0, code = MPI_Test(request, &done, MPI_STATUS_IGNORE);
        if (code != MPI_SUCCESS)
            return dfg_mpi_error(code, what);
        if (done)
            return DFG_OK;
        answer_pings(w);
        double now = MPI_Wtime();
        if (now > deadline)
            break;
        nap(now - began);
    }
    /* Joining the ranks: no control communicator to ping on yet. */
    if (w->control == MPI_COMM_NULL)
        return dfg_error(DFG_ERR_DEVICE,
                         "data-parallel: %s did not finish within %.0f s: a "
                         "rank did not join (it died, hangs or never "
                         "started)", what, w->timeout_seconds);
    char ranks[256];
    int silent = find_silent(w, ranks, sizeof ranks);
    if (silent > 0)
        return dfg_error(DFG_ERR_DEVICE,
                         "data-parallel: %s did not finish within %.0f s: lost "
                         "rank%s %s (no answer; it died or hangs)", what,
                         w->timeout_seconds, silent > 1 ? "s" : "", ranks);
    return dfg_error(DFG_ERR_DEVICE,
                     "data-parallel: %s did not finish within %.0f s, though "
                     "every rank answers (are they running the same steps?)",
                     what, w->timeout_seconds);
}
