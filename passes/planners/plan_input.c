#include "passes/planners/plan_input.h"

#include "util/error.h"
#include "util/memory.h"

static int is_power_of_two(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

/* Checks buffer i and adds its aligned size to *sum. */
static dfg_status add_buffer(const char *who, const dfg_buffer *b, int32_t i,
                             int64_t alignment, int64_t *aligned, int64_t *sum)
{
    if (b->size < 0)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "%s: buffer %d has negative size %lld", who, i,
                         (long long)b->size);
    if (b->first_step < 0 || b->last_step < b->first_step)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "%s: buffer %d has lifetime [%d, %d]", who, i,
                         b->first_step, b->last_step);
    if (b->size > INT64_MAX - (alignment - 1))
        return dfg_error(DFG_ERR_OVERFLOW,
                         "%s: buffer %d of %lld bytes cannot be aligned to %lld",
                         who, i, (long long)b->size, (long long)alignment);
    *aligned = (b->size + alignment - 1) & ~(alignment - 1);
    if (__builtin_add_overflow(*sum, *aligned, sum))
        return dfg_error(DFG_ERR_OVERFLOW,
                         "%s: the sizes up to buffer %d overflow 64 bits", who,
                         i);
    return DFG_OK;
}

/* A cell names a base that is its own group's base, at an aligned
 * cell_offset; *reach adds the cell's end in its group, so that no
 * group's extent, nor any arena, can overflow. */
static dfg_status check_cell(const char *who, const dfg_buffer *buffers,
                             int32_t n, int32_t i, int64_t alignment,
                             int64_t aligned, int64_t *reach)
{
    const dfg_buffer *b = &buffers[i];
    if (b->group == 0) {
        if (b->cell_offset != 0)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "%s: buffer %d is in no group but has cell "
                             "offset %lld", who, i, (long long)b->cell_offset);
        return DFG_OK;
    }
    int32_t base = b->group - 1;
    if (b->group < 0 || b->group > n || buffers[base].group != base + 1 ||
        buffers[base].cell_offset != 0)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "%s: buffer %d is a cell of group %d, whose base is "
                         "not a cell of it at offset 0", who, i, b->group);
    if (b->cell_offset < 0 || b->cell_offset % alignment != 0)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "%s: buffer %d has cell offset %lld, not a "
                         "non-negative multiple of %lld", who, i,
                         (long long)b->cell_offset, (long long)alignment);
    if (__builtin_add_overflow(*reach, b->cell_offset, reach) ||
        __builtin_add_overflow(*reach, aligned, reach))
        return dfg_error(DFG_ERR_OVERFLOW,
                         "%s: the cells up to buffer %d overflow 64 bits", who,
                         i);
    return DFG_OK;
}

dfg_status dfg_plan_aligned_sizes(const char *who, const dfg_buffer *buffers,
                                  int32_t n, int64_t alignment,
                                  const dfg_allocator *allocator,
                                  int64_t **aligned, int64_t *total)
{
    *aligned = NULL;
    *total = 0;
    if (n < 0 || (n > 0 && !buffers))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "%s: %d buffers at %p", who, n, (const void *)buffers);
    if (!is_power_of_two(alignment))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "%s: alignment %lld is not a power of two", who,
                         (long long)alignment);
    int64_t *sizes = dfg_alloc(allocator, ((size_t)n + 1) * sizeof *sizes);
    if (!sizes)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "%s: %d buffers", who, n);
    int64_t sum = 0, reach = 0, ends;
    for (int32_t i = 0; i < n; i++) {
        dfg_status status = add_buffer(who, &buffers[i], i, alignment,
                                       &sizes[i], &sum);
        if (status == DFG_OK)
            status = check_cell(who, buffers, n, i, alignment, sizes[i],
                                &reach);
        if (status == DFG_OK && __builtin_add_overflow(sum, reach, &ends))
            status = dfg_error(DFG_ERR_OVERFLOW,
                               "%s: the buffers up to %d overflow 64 bits",
                               who, i);
        if (status != DFG_OK) {
            dfg_free(allocator, sizes);
            return status;
        }
    }
    *aligned = sizes;
    *total = sum;
    return DFG_OK;
}
