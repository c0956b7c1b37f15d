/* Joining the ranks and checking that they run one program
 * (runtime/mpi/ranks.c): the start shared by the MPI and NCCL
 * collectives. */
#ifndef DFG_MPI_RANKS_H
#define DFG_MPI_RANKS_H

#include <mpi.h>
#include "program/program.h"
#include "runtime/mpi/watchdog.h"

/* Initialises MPI if nobody has (then *initialized = 1; comm must be
 * MPI_COMM_NULL), duplicates comm (MPI_COMM_NULL: MPI_COMM_WORLD) into
 * *data and w->control, both with MPI_ERRORS_RETURN, and fills w's rank
 * and size. Each duplicate (a collective call) is waited for within w's
 * timeout, which must be set: a rank that never joins is an error. */
dfg_status dfg_mpi_join(MPI_Comm comm, MPI_Comm *data, dfg_watchdog *w,
                        int *initialized);

/* Every rank's (CRC-32, bytes) of its serialised program against rank
 * 0's; DFG_ERR_INVALID_ARGUMENT naming the first rank that differs. */
dfg_status dfg_mpi_check_same_program(const dfg_watchdog *w, MPI_Comm data,
                                      const dfg_program *program);

#endif
