/* 'dfgc train --data-parallel' (data_parallel_cli.h). */
#include "tools/training/data_parallel_cli.h"

#include "dfg/mpi.h"
#include "tools/startup_deadline.h"

static dfg_data_parallel *attached;
static dfg_data_parallel_stats stats; /* attached's, kept by detach */

static dfg_status attach(void *context, dfg_session *session,
                         const dfg_program *program)
{
    (void)context;
    return dfg_data_parallel_create(session, program, MPI_COMM_WORLD, NULL,
                                    &attached);
}

/* Before the training session goes: the data-parallel object writes into
 * it when destroyed. */
static void detach(void *context)
{
    (void)context;
    if (!attached)
        return;
    dfg_data_parallel_get_stats(attached, &stats);
    dfg_data_parallel_destroy(attached);
    attached = NULL;
}

int dfgc_data_parallel_begin(dfgc_train_config *c, double startup_seconds)
{
    int provided, rank = 0, ranks = 1;
    /* MPI_Init and the first collective wait for every rank, and nothing
     * interrupts them: a rank stopped before them would hang the job. */
    dfgc_startup_deadline deadline;
    if (dfgc_startup_deadline_start(&deadline, startup_seconds,
                                    "MPI start-up (MPI_Init and a first "
                                    "barrier over the ranks)") != 0)
        return -1;
    int started =
        MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) ==
            MPI_SUCCESS &&
        MPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS &&
        MPI_Comm_size(MPI_COMM_WORLD, &ranks) == MPI_SUCCESS &&
        MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS;
    dfgc_startup_deadline_met(&deadline);
    if (!started) {
        fprintf(stderr, "dfgc train: MPI could not start\n");
        return -1;
    }
    c->rank = rank;
    c->ranks = ranks;
    c->attach = attach;
    c->detach = detach;
    return 0;
}

void dfgc_data_parallel_end(dfgc_train_config *c, int failed)
{
    const dfg_data_parallel_stats *s = &stats;
    if (c->rank == 0 && !failed)
        printf("data-parallel: %d ranks, %lld bucket all-reduces, %lld bytes, "
               "%.3f s blocked in waits, %.3f s in weight all-gathers\n",
               (int)c->ranks, (long long)s->all_reduces, (long long)s->bytes,
               s->wait_seconds, s->gather_seconds);
    /* After a failure a lost rank may never join MPI_Finalize (a
     * collective call): the process exits with its error instead. */
    if (failed)
        return;
    MPI_Finalize();
}
