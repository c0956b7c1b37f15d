/* 'dfgc train --data-parallel' over MPI (tools/training/data_parallel_cli.c, built
 * when MPI is found; docs/data-parallel.md). */
#ifndef DFGC_DATA_PARALLEL_CLI_H
#define DFGC_DATA_PARALLEL_CLI_H

#include "tools/training/digits_training.h"

/* Initialises MPI and waits for every rank at a first barrier, ending
 * the process with a message naming the deadline if that takes longer
 * than startup_seconds (startup_deadline.h); sets c's rank, ranks,
 * attach (which attaches the training session to MPI_COMM_WORLD) and
 * detach (which destroys that before the session, keeping its
 * statistics). 0, or -1 with a message printed. */
int dfgc_data_parallel_begin(dfgc_train_config *c, double startup_seconds);
/* Prints the all-reduce statistics (rank 0) and finalizes MPI, unless the
 * run failed (a lost rank would never join the finalization). */
void dfgc_data_parallel_end(dfgc_train_config *c, int failed);

#endif
