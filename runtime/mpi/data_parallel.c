/* Data-parallel training over MPI (include/dfg/mpi.h): the session's
 * collective (include/dfg/collective.h) as MPI_Iallreduce per bucket, in
 * place in the arena (the bucket's bytes are the gradients' own), and the
 * checks and broadcast at the start. */
#include "dfg/mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "program/program.h"
#include "runtime/mpi/ranks.h"
#include "runtime/mpi/watchdog.h"
#include "util/error.h"

typedef struct bucket_request {
    MPI_Request request;    /* MPI_REQUEST_NULL once complete */
    int in_flight;          /* started, not yet waited for */
    int sharded;            /* reduce-scattered: count is the shard's */
    float *data;
    int64_t count;
} bucket_request;

struct dfg_data_parallel {
    /* NULL once the session lets go of this object (session_gone): a
     * session destroyed first leaves nothing to detach from. */
    dfg_session *session;
    MPI_Comm data;          /* a duplicate of the caller's communicator */
    dfg_watchdog watchdog;
    int initialized_mpi, failed;
    int32_t n_buckets;
    bucket_request *buckets;
    dfg_data_parallel_stats stats;
};

void dfg_data_parallel_options_init(dfg_data_parallel_options *o)
{
    if (o) {
        o->timeout_seconds = 20.0;
        o->progress_between_steps = 1;
    }
}

static dfg_status fault(dfg_data_parallel *dp, dfg_status st)
{
    if (st != DFG_OK)
        dp->failed = 1;
    return st;
}

/* The request slot of `bucket` for `count` floats on the CPU, or an
 * error. */
static dfg_status slot(dfg_data_parallel *dp, int32_t bucket, int64_t count,
                       void *queue, bucket_request **out)
{
    if (queue)
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "data-parallel over MPI runs on the CPU backend; "
                         "device memory needs NCCL");
    if (bucket < 0 || bucket >= dp->n_buckets || count > INT32_MAX / 2)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "data-parallel: bucket %d of %lld floats (the "
                         "program has %d buckets)", (int)bucket,
                         (long long)count, (int)dp->n_buckets);
    *out = &dp->buckets[bucket];
    return DFG_OK;
}

static dfg_status start(void *context, int32_t bucket, float *data,
                        int64_t count, void *queue)
{
    dfg_data_parallel *dp = context;
    bucket_request *b = NULL;
    dfg_status st = slot(dp, bucket, count, queue, &b);
    if (st != DFG_OK)
        return st;
    b->data = data;
    b->count = count;
    int code = MPI_Iallreduce(MPI_IN_PLACE, data, (int)count, MPI_FLOAT,
                              MPI_SUM, dp->data, &b->request);
    b->in_flight = code == MPI_SUCCESS;
    if (code != MPI_SUCCESS)
        return fault(dp, dfg_mpi_error(code, "starting a bucket's all-reduce"));
    dp->stats.all_reduces++;
    dp->stats.bytes += count * (int64_t)sizeof(float);
    return DFG_OK;
}

/* The sharded optimizer's gradients: rank r's sum of floats [r * shard,
 * (r + 1) * shard) lands at data[0, shard) (MPI_IN_PLACE). */
static dfg_status reduce_scatter_start(void *context, int32_t bucket,
                                       float *data, int64_t shard, void *queue)
{
    dfg_data_parallel *dp = context;
    bucket_request *b = NULL;
    dfg_status st = slot(dp, bucket, shard * dp->watchdog.size, queue, &b);
    if (st != DFG_OK)
        return st;
    b->data = data;
    b->count = shard;
    b->sharded = 1;
    int code = MPI_Ireduce_scatter_block(MPI_IN_PLACE, data, (int)shard,
                                         MPI_FLOAT, MPI_SUM, dp->data,
                                         &b->request);
    b->in_flight = code == MPI_SUCCESS;
    if (code != MPI_SUCCESS)
        return fault(dp, dfg_mpi_error(code, "starting a bucket's "
                                             "reduce-scatter"));
    dp->stats.all_reduces++;
    dp->stats.bytes += shard * dp->watchdog.size * (int64_t)sizeof(float);
    return DFG_OK;
}

/* The sharded optimizer's updated weights: every rank's shard to all. */
static dfg_status all_gather(void *context, int32_t bucket, float *data,
                             int64_t shard, void *queue)
{
    dfg_data_parallel *dp = context;
    bucket_request *b = NULL;
    dfg_status st = slot(dp, bucket, shard * dp->watchdog.size, queue, &b);
    if (st != DFG_OK)
        return st;
    MPI_Request request;
    int code = MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data,
                              (int)shard, MPI_FLOAT, dp->data, &request);
    if (code != MPI_SUCCESS)
        return fault(dp, dfg_mpi_error(code, "gathering a bucket's weights"));
    char what[64];
    snprintf(what, sizeof what, "the weight all-gather of bucket %d",
             (int)bucket);
    double t0 = MPI_Wtime();
    st = dfg_watchdog_wait(&dp->watchdog, &request, what);
    dp->stats.gather_seconds += MPI_Wtime() - t0;
    dp->stats.bytes += shard * dp->watchdog.size * (int64_t)sizeof(float);
    return fault(dp, st);
}

static dfg_status wait(void *context, int32_t bucket, void *queue)
{
    (void)queue; /* start refused a queue */
    dfg_data_parallel *dp = context;
    if (bucket < 0 || bucket >= dp->n_buckets || !dp->buckets[bucket].in_flight)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "data-parallel: wait for bucket %d, not started",
                         (int)bucket);
    bucket_request *b = &dp->buckets[bucket];
    char what[64];
    snprintf(what, sizeof what, "the all-reduce of bucket %d", (int)bucket);
    double t0 = MPI_Wtime();
    dfg_status st = dfg_watchdog_wait(&dp->watchdog, &b->request, what);
    dp->stats.wait_seconds += MPI_Wtime() - t0;
    b->in_flight = 0;
    if (st != DFG_OK)
        return fault(dp, st);
    float scale = 1.0f / (float)dp->watchdog.size;
    for (int64_t i = 0; i < b->count; i++)
        b->data[i] *= scale;
    return DFG_OK;
}

/* Between steps: one MPI_Test per bucket in flight advances its
 * all-reduce (Open MPI's non-blocking collectives move only inside MPI
 * calls), so that it overlaps the rest of backward. An error here is
 * left to the bucket's wait, which reports it. */
static void progress(void *context)
{
    dfg_data_parallel *dp = context;
    for (int32_t i = 0; i < dp->n_buckets; i++) {
        bucket_request *b = &dp->buckets[i];
        int done = 0;
        if (b->in_flight && b->request != MPI_REQUEST_NULL)
            MPI_Test(&b->request, &done, MPI_STATUS_IGNORE);
    }
}

/* The session's detach: it is destroyed, or another collective replaces
 * this one. */
static void session_gone(void *context)
{
    dfg_data_parallel *dp = context;
    dp->session = NULL;
}

/* Rank 0's weights region (weights, optimizer state, counters) to all. */
static dfg_status broadcast_weights(dfg_data_parallel *dp)
{
    void *region;
    size_t bytes;
    dfg_status st = dfg_session_weights_region(dp->session, &region, &bytes);
    for (size_t at = 0; at < bytes && st == DFG_OK; at += (size_t)1 << 30) {
        size_t chunk = bytes - at < ((size_t)1 << 30) ? bytes - at
                                                      : (size_t)1 << 30;
        MPI_Request request;
        int code = MPI_Ibcast((char *)region + at, (int)chunk, MPI_BYTE, 0,
                              dp->data, &request);
        st = code == MPI_SUCCESS
                 ? dfg_watchdog_wait(&dp->watchdog, &request,
                                     "the weight broadcast at start")
                 : dfg_mpi_error(code, "the weight broadcast at start");
    }
    return st;
}

/* A program with a sharded optimizer must be compiled for these ranks. */
static dfg_status check_shards(const dfg_program *program, int ranks)
{
    for (int32_t i = 0; i < program->n_steps; i++) {
        const dfg_program_step *s = &program->steps[i];
        if (s->op == DFG_OP_ALL_REDUCE_START && s->attrs.group > 1 &&
            s->attrs.group != ranks)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "data-parallel: the program shards its optimizer "
                             "over %d ranks (step '%s'), but %d ranks run it",
                             (int)s->attrs.group, s->name, ranks);
    }
    return DFG_OK;
}

dfg_status dfg_data_parallel_create(dfg_session *session,
                                    const dfg_program *program, MPI_Comm comm,
                                    const dfg_data_parallel_options *options,
                                    dfg_data_parallel **out)
{
    if (!session || !program || !out)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_data_parallel_create: session, program and out "
                         "must not be NULL");
    *out = NULL;
    dfg_data_parallel_options defaults;
    dfg_data_parallel_options_init(&defaults);
    if (!options)
        options = &defaults;
    if (!(options->timeout_seconds > 0.0))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_data_parallel_create: the timeout must be "
                         "positive");
    dfg_data_parallel *dp = calloc(1, sizeof *dp);
    if (!dp)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "data-parallel: out of memory");
    dp->session = session;
    dp->data = dp->watchdog.control = MPI_COMM_NULL;
    dp->watchdog.timeout_seconds = options->timeout_seconds;
    for (int32_t i = 0; i < program->n_steps; i++)
        if (program->steps[i].op == DFG_OP_ALL_REDUCE_START)
            dp->n_buckets++;
    dp->buckets = calloc((size_t)dp->n_buckets + 1, sizeof *dp->buckets);
    for (int32_t i = 0; dp->buckets && i < dp->n_buckets; i++)
        dp->buckets[i].request = MPI_REQUEST_NULL;
    dfg_status st = dp->buckets ? dfg_mpi_join(comm, &dp->data, &dp->watchdog,
                                               &dp->initialized_mpi)
                                : dfg_error(DFG_ERR_OUT_OF_MEMORY,
                                            "data-parallel: out of memory");
    if (st == DFG_OK)
        st = dfg_mpi_check_same_program(&dp->watchdog, dp->data, program);
    if (st == DFG_OK)
        st = broadcast_weights(dp);
    dfg_collective c = {.context = dp,
                        .all_reduce_start = start,
                        .all_reduce_wait = wait,
                        .rank = dp->watchdog.rank,
                        .ranks = dp->watchdog.size,
                        .reduce_scatter_start = reduce_scatter_start,
                        .all_gather = all_gather,
                        .progress = options->progress_between_steps ? progress
                                                                    : NULL,
                        .detach = session_gone};
    if (st == DFG_OK)
        st = check_shards(program, dp->watchdog.size);
    if (st == DFG_OK)
        st = dfg_session_set_collective(session, &c);
    if (st != DFG_OK) {
        dp->session = NULL; /* never attached */
        dp->failed = 1;
        dfg_data_parallel_destroy(dp);
        return st;
    }
    *out = dp;
    return DFG_OK;
}

void dfg_data_parallel_destroy(dfg_data_parallel *dp)
{
    if (!dp)
        return;
    if (dp->session)
        dfg_session_set_collective(dp->session, NULL);
    /* After a fault, a lost rank never joins a collective call again
     * (freeing a communicator or finalizing is one), so leave MPI alone. */
    if (!dp->failed) {
        if (dp->watchdog.control != MPI_COMM_NULL)
            MPI_Comm_free(&dp->watchdog.control);
        if (dp->data != MPI_COMM_NULL)
            MPI_Comm_free(&dp->data);
        if (dp->initialized_mpi)
            MPI_Finalize();
    }
    free(dp->buckets);
    free(dp);
}

int dfg_data_parallel_rank(const dfg_data_parallel *dp)
{
    return dp ? dp->watchdog.rank : 0;
}

int dfg_data_parallel_size(const dfg_data_parallel *dp)
{
    return dp ? dp->watchdog.size : 1;
}

dfg_status dfg_data_parallel_time_blocking(dfg_data_parallel *dp,
                                           int32_t repeats, double *seconds)
{
    if (!dp || !seconds || repeats < 1)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_data_parallel_time_blocking: dp, seconds and "
                         "repeats >= 1 are needed");
    int64_t most = 0, size = dp->watchdog.size;
    for (int32_t b = 0; b < dp->n_buckets; b++) {
        const bucket_request *r = &dp->buckets[b];
        if (r->count * (r->sharded ? size : 1) > most)
            most = r->count * (r->sharded ? size : 1);
    }
    float *scratch = calloc((size_t)most + 1, sizeof *scratch);
    if (!scratch)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "data-parallel: %lld floats",
                         (long long)most);
    int code = MPI_Barrier(dp->data);
    double t0 = MPI_Wtime();
    for (int32_t r = 0; r < repeats && code == MPI_SUCCESS; r++)
        for (int32_t b = 0; b < dp->n_buckets && code == MPI_SUCCESS; b++)
            code = dp->buckets[b].sharded
                       ? MPI_Reduce_scatter_block(MPI_IN_PLACE, scratch,
                                                  (int)dp->buckets[b].count,
                                                  MPI_FLOAT, MPI_SUM, dp->data)
                       : MPI_Allreduce(MPI_IN_PLACE, scratch,
                                       (int)dp->buckets[b].count, MPI_FLOAT,
                                       MPI_SUM, dp->data);
    *seconds = (MPI_Wtime() - t0) / repeats;
    free(scratch);
    return code == MPI_SUCCESS
               ? DFG_OK
               : fault(dp, dfg_mpi_error(code, "timing the all-reduces"));
}

void dfg_data_parallel_get_stats(const dfg_data_parallel *dp,
                                 dfg_data_parallel_stats *out)
{
    if (out)
        *out = dp ? dp->stats : (dfg_data_parallel_stats){0};
}
