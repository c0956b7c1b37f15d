/* A deadline on a start-up that no call can interrupt (tools/
 * startup_deadline.c): MPI_Init and the first collective block every rank
 * until all have joined, so a rank stopped or never started would hang
 * the whole job forever. */
#ifndef DFGC_STARTUP_DEADLINE_H
#define DFGC_STARTUP_DEADLINE_H

#include <pthread.h>

typedef struct dfgc_startup_deadline {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t done_changed;
    int done;          /* set by dfgc_startup_deadline_met */
    double seconds;
    const char *what;  /* a static string naming the start-up */
} dfgc_startup_deadline;

/* Starts the clock: unless dfgc_startup_deadline_met is called within
 * `seconds`, a thread prints "dfgc: error: <what> did not finish within
 * <seconds> s ..." and ends the process with status 1 (mpirun then ends
 * the job). 0, or -1 with a message printed. */
int dfgc_startup_deadline_start(dfgc_startup_deadline *d, double seconds,
                                const char *what);
/* Stops the clock and joins the thread. */
void dfgc_startup_deadline_met(dfgc_startup_deadline *d);

#endif
