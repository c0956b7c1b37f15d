/* A simulation of PyTorch's CUDA caching allocator
 * (c10/cuda/CUDACachingAllocator.cpp, default configuration: one stream,
 * no max_split_size, no expandable segments, no garbage collection), to
 * show what a dynamic framework would reserve for the same tensors.
 *
 * The policy it reproduces:
 * - Every request is rounded up to a multiple of 512 bytes (kMinBlockSize),
 *   and at least 512.
 * - Requests of at most 1 MiB (kSmallSize) are "small" and come from the
 *   small pool; larger ones from the large pool. The pools never share a
 *   block.
 * - A request takes the smallest cached free block of its pool that fits
 *   (best fit; among equal sizes the lowest address).
 * - When none fits, a new segment is obtained from the device: 2 MiB
 *   (kSmallBuffer) for a small request, 20 MiB (kLargeBuffer) for a request
 *   under 10 MiB (kMinLargeAlloc), else the request rounded up to 2 MiB
 *   (kRoundLarge).
 * - The block found is split, the request taking its low end, when the
 *   remainder is at least 512 bytes (small pool) or more than 1 MiB (large
 *   pool); otherwise the whole block is handed out and counts as allocated.
 * - A freed block is merged with free neighbours in its segment and stays
 *   cached: segments are never returned to the device.
 * Zero-byte requests are not simulated: PyTorch serves them without a
 * block. Memory is never touched; only sizes and addresses are tracked. */
#ifndef DFG_CACHING_ALLOCATOR_H
#define DFG_CACHING_ALLOCATOR_H

#include <stdint.h>
#include "dfg/allocator.h"
#include "dfg/compile.h"

#define DFG_CACHING_MIN_BLOCK ((int64_t)512)
#define DFG_CACHING_SMALL_SIZE ((int64_t)1 << 20)
#define DFG_CACHING_SMALL_BUFFER ((int64_t)2 << 20)
#define DFG_CACHING_LARGE_BUFFER ((int64_t)20 << 20)
#define DFG_CACHING_MIN_LARGE_ALLOC ((int64_t)10 << 20)
#define DFG_CACHING_ROUND_LARGE ((int64_t)2 << 20)

typedef struct dfg_caching_block dfg_caching_block;

typedef struct dfg_caching_allocator {
    dfg_caching_block *blocks; /* every block ever made; merged ones dead */
    int32_t n_blocks;
    int32_t capacity;
    int64_t reserved;          /* bytes of all segments */
    int64_t allocated;         /* bytes of blocks handed out */
    int64_t requested;         /* bytes asked for by live requests */
    dfg_caching_stats stats;
    const dfg_allocator *allocator; /* of blocks; NULL: the C library */
} dfg_caching_allocator;

/* The block array comes from allocator (kept until released). */
void dfg_caching_init(dfg_caching_allocator *a,
                      const dfg_allocator *allocator);
void dfg_caching_release(dfg_caching_allocator *a);

/* Serves a request of `bytes` (> 0); *handle identifies it for
 * dfg_caching_free. Fails only when out of memory or on overflow. */
dfg_status dfg_caching_malloc(dfg_caching_allocator *a, int64_t bytes,
                              int32_t *handle);
dfg_status dfg_caching_free(dfg_caching_allocator *a, int32_t handle);

/* The address dfg_caching_malloc gave a handle: segments lie one after the
 * other in a virtual address space starting at 0. -1 for a bad handle. */
int64_t dfg_caching_address(const dfg_caching_allocator *a, int32_t handle);

#endif
