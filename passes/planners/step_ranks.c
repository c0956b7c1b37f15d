#include "passes/planners/step_ranks.h"

#include <stdlib.h>
#include "util/error.h"
#include "util/memory.h"

static int compare_steps(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static int32_t rank_of(const int32_t *values, int32_t count, int32_t step)
{
    int32_t lo = 0, hi = count - 1;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (values[mid] < step)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Sorting the 2n step values only pays off when the steps are sparse:
 * programs number their steps 0..n_steps-1, so they usually are dense and
 * the steps serve as their own ranks. */
static dfg_status compress(const dfg_buffer *buffers, int32_t n,
                           dfg_step_ranks *ranks)
{
    size_t count_values = n > 0 ? 2 * (size_t)n : 0;
    int32_t *values = dfg_alloc(ranks->allocator,
                               (count_values + 1) * sizeof *values);
    if (!values)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "step ranks of %d buffers", n);
    for (int32_t i = 0; i < n; i++) {
        values[2 * i] = buffers[i].first_step;
        values[2 * i + 1] = buffers[i].last_step;
    }
    qsort(values, count_values, sizeof *values, compare_steps);
    int32_t count = 0;
    for (int32_t i = 0; i < 2 * n; i++)
        if (count == 0 || values[count - 1] != values[i])
            values[count++] = values[i];
    for (int32_t i = 0; i < n; i++) {
        ranks->first[i] = rank_of(values, count, buffers[i].first_step);
        ranks->last[i] = rank_of(values, count, buffers[i].last_step);
    }
    ranks->count = count;
    dfg_free(ranks->allocator, values);
    return DFG_OK;
}

dfg_status dfg_step_ranks_build(const dfg_buffer *buffers, int32_t n,
                                const dfg_allocator *allocator,
                                dfg_step_ranks *ranks)
{
    ranks->allocator = allocator;
    ranks->first = dfg_alloc(allocator, ((size_t)n + 1) * sizeof *ranks->first);
    ranks->last = dfg_alloc(allocator, ((size_t)n + 1) * sizeof *ranks->last);
    ranks->count = 0;
    if (!ranks->first || !ranks->last)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "step ranks of %d buffers", n);
    int32_t max_step = -1;
    for (int32_t i = 0; i < n; i++)
        if (buffers[i].last_step > max_step)
            max_step = buffers[i].last_step;
    if ((int64_t)max_step >= 4 * (int64_t)n + 64)
        return compress(buffers, n, ranks);
    for (int32_t i = 0; i < n; i++) {
        ranks->first[i] = buffers[i].first_step;
        ranks->last[i] = buffers[i].last_step;
    }
    ranks->count = max_step + 1;
    return DFG_OK;
}

void dfg_step_ranks_free(dfg_step_ranks *ranks)
{
    dfg_free(ranks->allocator, ranks->first);
    dfg_free(ranks->allocator, ranks->last);
    ranks->first = ranks->last = NULL;
    ranks->count = 0;
}

void dfg_step_ranks_live_bytes(const dfg_step_ranks *ranks, int32_t n,
                               const int64_t *sizes, int64_t *live)
{
    /* A difference array: +size where a lifetime starts, -size after it
     * ends; its prefix sums are the live bytes. */
    for (int32_t i = 0; i < n; i++) {
        live[ranks->first[i]] += sizes[i];
        live[ranks->last[i] + 1] -= sizes[i];
    }
    for (int32_t s = 1; s < ranks->count; s++)
        live[s] += live[s - 1];
}
