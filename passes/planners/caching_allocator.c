/* The caching allocator simulation; the policy is in caching_allocator.h.
 * Blocks are kept in one array and linked to their neighbours in the same
 * segment; a best-fit search scans the array, which is quick enough for
 * the thousands of tensors of a model and keeps the code obvious. */
#include "dfg/compile.h"
#include "passes/planners/caching_allocator.h"

#include "util/error.h"
#include "util/memory.h"

typedef enum block_state {
    BLOCK_FREE,
    BLOCK_ALLOCATED,
    BLOCK_MERGED, /* absorbed by a neighbour; the slot is unused */
} block_state;

struct dfg_caching_block {
    int64_t address;
    int64_t size;
    int64_t requested; /* while allocated */
    int32_t prev;      /* neighbours in the segment, or -1 */
    int32_t next;
    int is_small;
    block_state state;
};

void dfg_caching_init(dfg_caching_allocator *a,
                      const dfg_allocator *allocator)
{
    *a = (dfg_caching_allocator){.allocator = allocator};
}

void dfg_caching_release(dfg_caching_allocator *a)
{
    dfg_free(a->allocator, a->blocks);
    dfg_caching_init(a, a->allocator);
}

static int64_t round_size(int64_t bytes)
{
    if (bytes < DFG_CACHING_MIN_BLOCK)
        return DFG_CACHING_MIN_BLOCK;
    return (bytes + DFG_CACHING_MIN_BLOCK - 1) / DFG_CACHING_MIN_BLOCK *
           DFG_CACHING_MIN_BLOCK;
}

/* The size of the segment obtained for a rounded request. */
static int64_t segment_size(int64_t size)
{
    if (size <= DFG_CACHING_SMALL_SIZE)
        return DFG_CACHING_SMALL_BUFFER;
    if (size < DFG_CACHING_MIN_LARGE_ALLOC)
        return DFG_CACHING_LARGE_BUFFER;
    return (size + DFG_CACHING_ROUND_LARGE - 1) / DFG_CACHING_ROUND_LARGE *
           DFG_CACHING_ROUND_LARGE;
}

static int should_split(const dfg_caching_block *block, int64_t size)
{
    int64_t remaining = block->size - size;
    return block->is_small ? remaining >= DFG_CACHING_MIN_BLOCK
                           : remaining > DFG_CACHING_SMALL_SIZE;
}

/* A new slot in the block array, or -1 when out of memory. */
static int32_t new_block(dfg_caching_allocator *a)
{
    if (a->n_blocks == a->capacity) {
        if (a->capacity > INT32_MAX / 2)
            return -1;
        int32_t capacity = a->capacity ? 2 * a->capacity : 64;
        dfg_caching_block *blocks =
            dfg_realloc(a->allocator, a->blocks,
                        (size_t)a->capacity * sizeof *blocks,
                        (size_t)capacity * sizeof *blocks);
        if (!blocks)
            return -1;
        a->blocks = blocks;
        a->capacity = capacity;
    }
    return a->n_blocks++;
}

/* The smallest free block of the pool holding size bytes (lowest address
 * among equals), or -1. */
static int32_t best_fit(const dfg_caching_allocator *a, int is_small,
                        int64_t size)
{
    int32_t best = -1;
    for (int32_t i = 0; i < a->n_blocks; i++) {
        const dfg_caching_block *b = &a->blocks[i];
        if (b->state != BLOCK_FREE || b->is_small != is_small || b->size < size)
            continue;
        if (best < 0 || b->size < a->blocks[best].size ||
            (b->size == a->blocks[best].size &&
             b->address < a->blocks[best].address))
            best = i;
    }
    return best;
}

/* A fresh segment as one free block, placed after every other one. */
static dfg_status new_segment(dfg_caching_allocator *a, int64_t size,
                              int is_small, int32_t *out)
{
    if (size > INT64_MAX - a->reserved)
        return dfg_error(DFG_ERR_OVERFLOW,
                         "caching allocator: reserving %lld more bytes "
                         "overflows", (long long)size);
    int32_t index = new_block(a);
    if (index < 0)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "caching allocator: out of memory for blocks");
    a->blocks[index] = (dfg_caching_block){
        .address = a->reserved, .size = size, .prev = -1, .next = -1,
        .is_small = is_small, .state = BLOCK_FREE};
    a->reserved += size;
    if (is_small)
        a->stats.small_segments++;
    else
        a->stats.large_segments++;
    *out = index;
    return DFG_OK;
}

/* Cuts block `index` at size; the remainder becomes a free block after
 * it. Returns 0 when out of memory. */
static int split_block(dfg_caching_allocator *a, int32_t index, int64_t size)
{
    int32_t rest = new_block(a);
    if (rest < 0)
        return 0;
    dfg_caching_block *b = &a->blocks[index];
    a->blocks[rest] = (dfg_caching_block){
        .address = b->address + size, .size = b->size - size,
        .prev = index, .next = b->next, .is_small = b->is_small,
        .state = BLOCK_FREE};
    if (b->next >= 0)
        a->blocks[b->next].prev = rest;
    b->next = rest;
    b->size = size;
    return 1;
}

static void update_peaks(dfg_caching_allocator *a, int new_segment_made)
{
    dfg_caching_stats *s = &a->stats;
    if ((uint64_t)a->reserved > s->reserved_peak_bytes)
        s->reserved_peak_bytes = (uint64_t)a->reserved;
    if ((uint64_t)a->allocated > s->allocated_peak_bytes)
        s->allocated_peak_bytes = (uint64_t)a->allocated;
    if ((uint64_t)a->requested > s->requested_peak_bytes)
        s->requested_peak_bytes = (uint64_t)a->requested;
    if (new_segment_made)
        s->allocated_at_reserved_peak = (uint64_t)a->allocated;
}

dfg_status dfg_caching_malloc(dfg_caching_allocator *a, int64_t bytes,
                              int32_t *handle)
{
    if (!a || !handle || bytes <= 0)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "caching allocator: a request of %lld bytes",
                         (long long)bytes);
    if (bytes > INT64_MAX / 2)
        return dfg_error(DFG_ERR_OVERFLOW,
                         "caching allocator: a request of %lld bytes is too "
                         "large", (long long)bytes);
    int64_t size = round_size(bytes);
    int is_small = size <= DFG_CACHING_SMALL_SIZE;
    int32_t index = best_fit(a, is_small, size);
    int made_segment = index < 0;
    if (made_segment) {
        dfg_status s = new_segment(a, segment_size(size), is_small, &index);
        if (s != DFG_OK)
            return s;
    }
    if (should_split(&a->blocks[index], size) && !split_block(a, index, size))
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "caching allocator: out of memory for blocks");
    dfg_caching_block *b = &a->blocks[index];
    b->state = BLOCK_ALLOCATED;
    b->requested = bytes;
    a->allocated += b->size;
    a->requested += bytes;
    update_peaks(a, made_segment);
    *handle = index;
    return DFG_OK;
}

/* Folds the free neighbour `other` of block `index` into it. */
static void merge(dfg_caching_allocator *a, int32_t index, int32_t other)
{
    dfg_caching_block *b = &a->blocks[index];
    dfg_caching_block *o = &a->blocks[other];
    if (o->state != BLOCK_FREE)
        return;
    if (o->address < b->address) {
        b->address = o->address;
        b->prev = o->prev;
        if (o->prev >= 0)
            a->blocks[o->prev].next = index;
    } else {
        b->next = o->next;
        if (o->next >= 0)
            a->blocks[o->next].prev = index;
    }
    b->size += o->size;
    o->state = BLOCK_MERGED;
}

dfg_status dfg_caching_free(dfg_caching_allocator *a, int32_t handle)
{
    if (!a || handle < 0 || handle >= a->n_blocks ||
        a->blocks[handle].state != BLOCK_ALLOCATED)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "caching allocator: freeing %d, which is not "
                         "allocated", handle);
    dfg_caching_block *b = &a->blocks[handle];
    a->allocated -= b->size;
    a->requested -= b->requested;
    b->state = BLOCK_FREE;
    if (b->prev >= 0)
        merge(a, handle, b->prev);
    if (a->blocks[handle].next >= 0)
        merge(a, handle, a->blocks[handle].next);
    return DFG_OK;
}

int64_t dfg_caching_address(const dfg_caching_allocator *a, int32_t handle)
{
    if (!a || handle < 0 || handle >= a->n_blocks ||
        a->blocks[handle].state == BLOCK_MERGED)
        return -1;
    return a->blocks[handle].address;
}
