#include "best_fit.h"

#include <stdlib.h>
#include <string.h>
#include "error.h"
#include "plan_input.h"
#include "sort.h"

dfg_placement_key dfg_placement_key_of(const int64_t *aligned,
                                       const dfg_step_ranks *ranks,
                                       int32_t buffer)
{
    dfg_placement_key key = {
        aligned[buffer], ranks->last[buffer] - ranks->first[buffer], buffer,
    };
    return key;
}

static int key_before(const dfg_placement_key *x, const dfg_placement_key *y)
{
    if (x->size != y->size)
        return x->size > y->size;
    if (x->length != y->length)
        return x->length > y->length;
    return x->buffer < y->buffer;
}

DFG_DEFINE_SORT(sort_keys, dfg_placement_key, key_before)

void dfg_placement_keys_sort(dfg_placement_key *keys,
                             dfg_placement_key *scratch, int32_t n)
{
    sort_keys(keys, scratch, n > 0 ? (size_t)n : 0);
}

typedef struct dfg_byte_span byte_span;

static int begins_before(const byte_span *x, const byte_span *y)
{
    return x->begin < y->begin;
}

DFG_DEFINE_SORT(sort_spans, byte_span, begins_before)

/* The overlapping placed buffers' bytes, sorted by start, in the first
 * half of fit->spans (the second half is the sort's scratch). */
static dfg_status sorted_spans(dfg_best_fit *fit)
{
    int32_t k = fit->overlapping.count;
    if (k > fit->span_capacity) {
        int32_t wanted = k < INT32_MAX / 4 ? 2 * k : k;
        byte_span *bigger = realloc(fit->spans, 2 * (size_t)wanted * sizeof *bigger);
        if (!bigger)
            return dfg_error(DFG_ERR_OUT_OF_MEMORY, "%d overlapping buffers", k);
        fit->spans = bigger;
        fit->span_capacity = wanted;
    }
    if (k == 0)
        return DFG_OK; /* fit->spans may still be NULL */
    const dfg_lifetime_entry *entries = fit->overlapping.items;
    for (int32_t i = 0; i < k; i++)
        fit->spans[i] = (byte_span){entries[i].begin, entries[i].end};
    sort_spans(fit->spans, fit->spans + fit->span_capacity, (size_t)k);
    return DFG_OK;
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
    free(fit->overlapping.items);
    free(fit->spans);
    memset(fit, 0, sizeof *fit);
}

dfg_status dfg_best_fit_place(dfg_best_fit *fit, int32_t buffer)
{
    int64_t size = fit->aligned[buffer];
    if (size == 0) {
        fit->buffers[buffer].offset = 0;
        return DFG_OK;
    }
    dfg_lifetime_entry placed = {
        .first = fit->ranks->first[buffer], .last = fit->ranks->last[buffer],
        .buffer = buffer,
    };
    fit->overlapping.count = 0;
    dfg_status status = dfg_lifetime_index_overlapping(
        &fit->placed, placed.first, placed.last, &fit->overlapping);
    if (status == DFG_OK)
        status = sorted_spans(fit);
    if (status != DFG_OK)
        return status;
    const byte_span *spans = fit->spans;
    int32_t k = fit->overlapping.count;
    /* Spans may overlap one another (their lifetimes need not overlap each
     * other), so the free space starts after the highest end seen yet. */
    int64_t free_from = 0, best = -1, best_gap = INT64_MAX;
    for (int32_t j = 0; j < k; j++) {
        int64_t gap = spans[j].begin - free_from;
        if (gap >= size && gap < best_gap) {
            best = free_from;
            best_gap = gap;
        }
        if (spans[j].end > free_from)
            free_from = spans[j].end;
    }
    placed.begin = best >= 0 ? best : free_from;
    placed.end = placed.begin + size;
    fit->buffers[buffer].offset = placed.begin;
    if (placed.end > fit->arena)
        fit->arena = placed.end;
    return dfg_lifetime_index_insert(&fit->placed, &placed);
}

dfg_status dfg_plan_with_ranks(const char *who, dfg_ranked_planner planner,
                               dfg_buffer *buffers, int32_t n,
                               int64_t alignment, int64_t *arena_bytes)
{
    if (!arena_bytes)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "%s: no arena_bytes", who);
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
