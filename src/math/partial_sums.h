/* A sum spread over the blocks of a grid: each block folds its share of
 * the terms into one partial sum, written to a small scratch array, and a
 * second pass adds the partials. The number of blocks depends on the
 * number of terms only, so the op's workspace rule (src/ir/op_workspace.c)
 * plans the scratch the backend uses, and the sum is folded the same way
 * on every run (no atomics: graph and non-graph runs agree bit for bit).
 * Usable from C and CUDA (DFG_HOST_DEVICE). */
#ifndef DFG_MATH_PARTIAL_SUMS_H
#define DFG_MATH_PARTIAL_SUMS_H

#include <stdint.h>

#include "math/host_device.h"

/* Most partial sums, and so most blocks, of one sum. */
#define DFG_PARTIAL_SUMS_MAX 1024
/* Fewest terms a block takes before a sum uses another block. */
#define DFG_PARTIAL_SUM_TERMS 2048

/* Blocks (and partial sums) of a sum of `terms` terms: 1 to
 * DFG_PARTIAL_SUMS_MAX. */
DFG_HOST_DEVICE static inline int32_t dfg_partial_sum_blocks(int64_t terms)
{
    int64_t blocks = terms / DFG_PARTIAL_SUM_TERMS + 1;
    return (int32_t)(blocks < DFG_PARTIAL_SUMS_MAX ? blocks
                                                   : DFG_PARTIAL_SUMS_MAX);
}

/* Blocks per output of a reduction of `outputs` sums of `count` terms
 * each: several when the outputs are too few to fill a GPU and all their
 * partial sums fit DFG_PARTIAL_SUMS_MAX (a loss reduced to one scalar),
 * else 1 (a block per output, no partial sums). */
DFG_HOST_DEVICE static inline int32_t dfg_partial_sum_split(int64_t outputs,
                                                           int64_t count)
{
    int32_t blocks = dfg_partial_sum_blocks(count);
    return blocks > 1 && outputs > 0 &&
                   outputs * blocks <= DFG_PARTIAL_SUMS_MAX
               ? blocks
               : 1;
}

/* Blocks per channel of per-channel sums over `count` terms each
 * (batch_norm_train's statistics and its gradient's sums): as many as
 * the terms want (dfg_partial_sum_blocks) while every channel's partial
 * sums fit DFG_PARTIAL_SUMS_MAX; 1 (a block per channel, no partial
 * sums) when they do not fit or one block is enough. */
DFG_HOST_DEVICE static inline int32_t
dfg_partial_sum_channel_split(int64_t channels, int64_t count)
{
    if (channels <= 0)
        return 1;
    int64_t most = DFG_PARTIAL_SUMS_MAX / channels;
    int32_t blocks = dfg_partial_sum_blocks(count);
    return most <= 1 ? 1 : blocks < most ? blocks : (int32_t)most;
}

#endif
