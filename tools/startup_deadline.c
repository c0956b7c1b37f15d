/* A deadline on a blocking start-up (startup_deadline.h). */
#include "tools/startup_deadline.h"

#include <errno.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static void *watch(void *context)
{
    dfgc_startup_deadline *d = context;
    struct timespec end;
    clock_gettime(CLOCK_REALTIME, &end);
    end.tv_sec += (time_t)d->seconds;
    end.tv_nsec += (long)((d->seconds - (double)(time_t)d->seconds) * 1e9);
    if (end.tv_nsec >= 1000000000L) {
        end.tv_sec++;
        end.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&d->lock);
    int code = 0;
    while (!d->done && code != ETIMEDOUT)
        code = pthread_cond_timedwait(&d->done_changed, &d->lock, &end);
    int late = !d->done;
    pthread_mutex_unlock(&d->lock);
    if (late) {
        /* The main thread is blocked inside MPI: nothing to unwind. */
        fprintf(stderr, "dfgc: error: %s did not finish within %g s: a rank "
                "stopped or never started (--startup-timeout)\n", d->what,
                d->seconds);
        fflush(stderr);
        _exit(1);
    }
    return NULL;
}

int dfgc_startup_deadline_start(dfgc_startup_deadline *d, double seconds,
                                const char *what)
{
    d->done = 0;
    d->seconds = seconds;
    d->what = what;
    int locks = pthread_mutex_init(&d->lock, NULL) == 0;
    int conds = locks && pthread_cond_init(&d->done_changed, NULL) == 0;
    if (conds && pthread_create(&d->thread, NULL, watch, d) == 0)
        return 0;
    if (conds)
        pthread_cond_destroy(&d->done_changed);
    if (locks)
        pthread_mutex_destroy(&d->lock);
    fprintf(stderr, "dfgc: error: no thread for the deadline on %s\n", what);
    return -1;
}

void dfgc_startup_deadline_met(dfgc_startup_deadline *d)
{
    pthread_mutex_lock(&d->lock);
    d->done = 1;
    pthread_cond_signal(&d->done_changed);
    pthread_mutex_unlock(&d->lock);
    pthread_join(d->thread, NULL);
    pthread_cond_destroy(&d->done_changed);
    pthread_mutex_destroy(&d->lock);
}
