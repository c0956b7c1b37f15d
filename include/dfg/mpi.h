/* Data-parallel training over MPI: libdfg_mpi (docs/data-parallel.md).
 *
 * Not included by dfg/dfg.h (it needs <mpi.h>). Every rank compiles the
 * same training program with dfg_training_options.data_parallel = 1,
 * creates a session, and attaches it here; then each session run is one
 * micro-batch of the rank's own rows, whose gradients are averaged across
 * the ranks bucket by bucket (include/dfg/collective.h), so every rank
 * applies the same update.
 *
 * Faults: MPI errors are returned (MPI_ERRORS_RETURN on the library's own
 * communicators), never fatal; every wait has a watchdog that ends it
 * with an error naming the ranks that stopped answering, joining the
 * ranks at the start included (a rank that never gets there). MPI_Init
 * itself, which waits for every rank and which nothing interrupts, is
 * not bounded here: a host program bounds it (dfgc train's
 * --startup-timeout ends the process). After such an
 * error the communicators are left as they are: the process should report
 * it and exit (dfg_data_parallel_destroy then does not finalize MPI). */
#ifndef DFG_MPI_H
#define DFG_MPI_H

#include <mpi.h>
#include "dfg/dfg.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dfg_data_parallel dfg_data_parallel;

typedef struct dfg_data_parallel_options {
    /* A wait longer than this is a fault: the error names the ranks that
     * do not answer (20 s; the whole report comes within 30 s). */
    double timeout_seconds;
    /* 1 (the default): test the all-reduces in flight after every step,
     * which is what makes them progress behind the rest of backward; 0
     * leaves them to the waits (for measuring what the overlap hides). */
    int32_t progress_between_steps;
} dfg_data_parallel_options;

void dfg_data_parallel_options_init(dfg_data_parallel_options *options);

/* Attaches session (of program) to the ranks of comm, or, with
 * MPI_COMM_NULL, to MPI_COMM_WORLD after initialising MPI if nobody has
 * (then destroy finalizes it). Collective over the ranks: checks that
 * every rank runs the same program (a hash of its bytes; a rank with
 * another is refused, naming it), broadcasts rank 0's weights region
 * (weights, optimizer state) to all, and sets the session's collective.
 * options may be NULL. The program is read here only. Either may be
 * destroyed first: *out before the session removes its collective from
 * it; the session before *out lets go of it (dfg_collective.detach), so
 * that destroying *out later touches no freed memory. */
dfg_status dfg_data_parallel_create(dfg_session *session,
                                    const dfg_program *program, MPI_Comm comm,
                                    const dfg_data_parallel_options *options,
                                    dfg_data_parallel **out);
void dfg_data_parallel_destroy(dfg_data_parallel *dp);

int dfg_data_parallel_rank(const dfg_data_parallel *dp);
int dfg_data_parallel_size(const dfg_data_parallel *dp);

/* What the all-reduces cost so far. */
typedef struct dfg_data_parallel_stats {
    int64_t all_reduces;    /* buckets started */
    int64_t bytes;          /* bytes all-reduced (each rank's share) */
    double wait_seconds;    /* time spent blocked in waits */
    /* With a sharded optimizer: time spent in the weight all-gathers
     * (blocking), whose bytes `bytes` counts too. */
    double gather_seconds;
} dfg_data_parallel_stats;

void dfg_data_parallel_get_stats(const dfg_data_parallel *dp,
                                 dfg_data_parallel_stats *out);

/* For benchmarks: the seconds one step's all-reduces take when nothing
 * overlaps them: the buckets of the last run, each all-reduced (or, with
 * a sharded optimizer, reduce-scattered; blocking, on scratch memory)
 * `repeats` times; the mean per step. Collective over
 * the ranks; call it after at least one run. */
dfg_status dfg_data_parallel_time_blocking(dfg_data_parallel *dp,
                                           int32_t repeats, double *seconds);

#ifdef __cplusplus
}
#endif
#endif
