#include "best_fit.h"

#include <stdlib.h>
#include <string.h>
#include "error.h"
#include "plan_input.h"

dfg_placement_key dfg_placement_key_of(const int64_t *aligned,
                                       const dfg_step_ranks *ranks,
                                       int32_t buffer)
{
    dfg_placement_key key = {
        aligned[buffer], ranks->last[buffer] - ranks->first[buffer], buffer,
    };
    return key;
}

int dfg_placement_key_compare(const void *a, const void *b)
{
    const dfg_placement_key *x = a, *y = b;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    if (x->length != y->length)
        return x->length > y->length ? -1 : 1;
    return (x->buffer > y->buffer) - (x->buffer < y->buffer);
}

static int compare_spans(const void *a, const void *b)
{
    const struct dfg_byte_span *x = a, *y = b;
    return (x->begin > y->begin) - (x->begin < y->begin);
}

dfg_status dfg_best_fit_init(dfg_best_fit *fit, dfg_buffer *buffers, int32_t n,
                             const int64_t *aligned,
                             const dfg_step_ranks *ranks)
{
    memset(fit, 0, sizeof *fit);
    fit->buffers = buffers;
    fit->aligned = aligned;
    fit->ranks = ranks;
    return dfg_lifetime_index_init(&fit->placed, ranks->count, n);
}

void dfg_best_fit_free(dfg_best_fit *fit)
{
    dfg_lifetime_index_free(&fit->placed);
    free(fit->overlapping.ids);
    free(fit->spans);
    memset(fit, 0, sizeof *fit);
}

/* The overlapping placed buffers' byte ranges, sorted by start. */
static dfg_status sorted_spans(dfg_best_fit *fit)
{
    int32_t k = fit->overlapping.count;
    if (k > fit->span_capacity) {
        struct dfg_byte_span *bigger =
            realloc(fit->spans, (size_t)k * 2 * sizeof *bigger);
        if (!bigger)
            return dfg_error(DFG_ERR_OUT_OF_MEMORY, "%d overlapping buffers", k);
        fit->spans = bigger;
        fit->span_capacity = k * 2;
    }
    for (int32_t j = 0; j < k; j++) {
        int32_t b = fit->overlapping.ids[j];
        fit->spans[j].begin = fit->buffers[b].offset;
        fit->spans[j].end = fit->buffers[b].offset + fit->aligned[b];
    }
    qsort(fit->spans, (size_t)k, sizeof *fit->spans, compare_spans);
    return DFG_OK;
}

dfg_status dfg_best_fit_place(dfg_best_fit *fit, int32_t buffer)
{
    int64_t size = fit->aligned[buffer];
    if (size == 0) {
        fit->buffers[buffer].offset = 0;
        return DFG_OK;
    }
    int32_t first = fit->ranks->first[buffer], last = fit->ranks->last[buffer];
    fit->overlapping.count = 0;
    dfg_status status = dfg_lifetime_index_overlapping(&fit->placed, first,
                                                       last, &fit->overlapping);
    if (status == DFG_OK)
        status = sorted_spans(fit);
    if (status != DFG_OK)
        return status;
    /* Spans may overlap one another (their lifetimes need not overlap each
     * other), so the free space starts after the highest end seen yet. */
    int64_t free_from = 0, best = -1, best_gap = INT64_MAX;
    for (int32_t j = 0; j < fit->overlapping.count; j++) {
        int64_t gap = fit->spans[j].begin - free_from;
        if (gap >= size && gap < best_gap) {
            best = free_from;
            best_gap = gap;
        }
        if (fit->spans[j].end > free_from)
            free_from = fit->spans[j].end;
    }
    int64_t offset = best >= 0 ? best : free_from;
    fit->buffers[buffer].offset = offset;
    if (offset + size > fit->arena)
        fit->arena = offset + size;
    return dfg_lifetime_index_insert(&fit->placed, buffer, first, last);
}

dfg_status dfg_plan_with_ranks(const char *who, dfg_ranked_planner planner,
                               dfg_buffer *buffers, int32_t n,
                               int64_t alignment, int64_t *arena_bytes)
{
    int64_t *aligned, total;
    dfg_status status = dfg_plan_aligned_sizes(who, buffers, n, alignment,
                                               &aligned, &total);
    if (status != DFG_OK)
        return status;
    dfg_step_ranks ranks;
    status = dfg_step_ranks_build(buffers, n, &ranks);
    if (status == DFG_OK)
        status = planner(buffers, n, aligned, &ranks, arena_bytes);
    dfg_step_ranks_free(&ranks);
    free(aligned);
    return status;
}
