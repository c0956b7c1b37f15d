/* Gradient buckets of a data-parallel training step (passes/training/buckets.c,
 * docs/data-parallel.md). */
#ifndef DFG_BUCKETS_H
#define DFG_BUCKETS_H

#include "passes/pass.h"

/* Where each of n gradients of these types starts in its bucket (offsets,
 * may be NULL): one after the other, each on the alignment. Returns the
 * bucket's bytes (the end of the last one). */
int64_t dfg_bucket_offsets(const dfg_type *gradients, int32_t n,
                           int64_t alignment, int64_t *offsets);

/* On a training step (passes/training/training.c): groups the updates' gradients
 * into buckets of about bucket_bytes (0: 25 MiB) in the order backward
 * computes them, records an all_reduce_start and an all_reduce_wait node
 * per bucket, points the updates at the waits' outputs and orders the
 * nodes: each start right after its last gradient, the waits and the
 * updates after backward. With shard_ranks > 1, each bucket is
 * reduce-scattered and its updates become one update of this rank's shard
 * (passes/training/shard_optimizer.c). *n_buckets receives the count. */
dfg_status dfg_pass_gradient_buckets(dfg_graph *graph, int64_t bucket_bytes,
                                     int64_t alignment, int32_t shard_ranks,
                                     int32_t *n_buckets);

/* After the alias pass: places each bucket's gradients (and all values
 * sharing their bytes) and its wait's outputs inside the bucket value, at
 * dfg_bucket_offsets. DFG_ERR_UNSUPPORTED, naming it, for a gradient that
 * shares bytes with a larger or foreign value. */
dfg_status dfg_pass_bucket_alias(const dfg_graph *graph, int64_t alignment,
                                 const dfg_allocator *allocator,
                                 dfg_alias_plan *alias);

#endif
