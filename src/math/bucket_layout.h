/* The layout of a data-parallel gradient bucket (docs/data-parallel.md),
 * shared by the bucket pass (passes/training/buckets.c), the shape rules
 * (src/ir/shape_collective.c) and the kernels
 * (runtime/cpu/training/all_reduce.c):
 * tensor i of a bucket starts at the aligned end of tensor i - 1. With a
 * sharded optimizer, the bucket's weights are laid out the same way, and
 * rank r's shard is floats [r * shard, (r + 1) * shard) of that layout. */
#ifndef DFG_MATH_BUCKET_LAYOUT_H
#define DFG_MATH_BUCKET_LAYOUT_H

#include <stdint.h>

/* Where the tensor after one ending at byte `end` starts. alignment >= 1. */
static inline int64_t dfg_bucket_place(int64_t end, int64_t alignment)
{
    return (end + alignment - 1) / alignment * alignment;
}

/* The floats of one rank's shard when `floats` are split over `ranks`,
 * rounded up to whole alignments (so that every shard starts aligned). */
static inline int64_t dfg_bucket_shard_floats(int64_t floats, int32_t ranks,
                                              int64_t alignment)
{
    int64_t per = alignment / 4 > 1 ? alignment / 4 : 1;
    int64_t shard = (floats + ranks - 1) / ranks;
    return (shard + per - 1) / per * per;
}

#endif
