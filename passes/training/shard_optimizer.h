/* The sharded optimizer of a data-parallel training step
 * (passes/training/shard_optimizer.c, docs/data-parallel.md). */
#ifndef DFG_SHARD_OPTIMIZER_H
#define DFG_SHARD_OPTIMIZER_H

#include "passes/pass.h"

typedef struct dfg_shard_bucket {
    int32_t index;          /* the bucket's */
    int32_t ranks;          /* sharing it, >= 2 */
    int64_t shard;          /* floats of each rank's shard */
    int64_t alignment;      /* of the bucket's layout, bytes */
    int32_t bucket;         /* the all_reduce_start's output */
    int32_t averaged;       /* the all_reduce_wait's: this rank's shard */
    const int32_t *updates; /* the bucket's update nodes, in bucket order */
    int32_t n_updates;
    int32_t *scratch;       /* n_updates + 3 */
} dfg_shard_bucket;

/* Records the bucket's shard update (shard_weights, one update over the
 * shard with its own state, all_gather_weights) and marks the bucket's
 * updates dead; *norm: the gather's output, the shard's squared norm. */
dfg_status dfg_shard_bucket_update(dfg_graph *graph, const dfg_shard_bucket *b,
                                   int32_t *norm);

/* Makes training.update_sq_norms (the concat of the dead updates' norms)
 * read the n_buckets shard norms instead. */
dfg_status dfg_shard_norms_output(dfg_graph *graph, const int32_t *norms,
                                  int32_t n_buckets);

#endif
