#include "passes/planners/best_fit.h"

#include <string.h>
#include "passes/planners/plan_input.h"
#include "passes/planners/sort.h"
#include "util/error.h"
#include "util/memory.h"

dfg_placement_key dfg_placement_key_of(const dfg_plan_units *units,
                                       int32_t unit_buffer)
{
    dfg_placement_key key = {
        units->extent[unit_buffer],
        units->last[unit_buffer] - units->first[unit_buffer], unit_buffer,
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

/* Room for k more spans in fit->spans (and as many for sorting). */
static dfg_status reserve_spans(dfg_best_fit *fit, int32_t k)
{
    if (k <= fit->span_capacity)
        return DFG_OK;
    int32_t wanted = k < INT32_MAX / 4 ? 2 * k : k;
    byte_span *bigger = dfg_realloc(
        fit->allocator, fit->spans,
        2 * (size_t)fit->span_capacity * sizeof *bigger,
        2 * (size_t)wanted * sizeof *bigger);
    if (!bigger)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "%d overlapping buffers", k);
    fit->spans = bigger;
    fit->span_capacity = wanted;
    return DFG_OK;
}

/* Where the unit's base may not be, sorted by start, in the first half of
 * fit->spans (the second half is the sort's scratch): for each of its
 * cells[0..n), each placed buffer overlapping it in time forbids the
 * bases that would make their bytes meet. *count receives how many. */
static dfg_status forbidden_bases(dfg_best_fit *fit, const int32_t *cells,
                                  int32_t n, int32_t *count)
{
    int32_t k = 0;
    for (int32_t c = 0; c < n; c++) {
        int32_t cell = cells[c];
        int64_t size = fit->aligned[cell];
        int64_t at = fit->buffers[cell].cell_offset;
        if (size == 0)
            continue;
        fit->overlapping.count = 0;
        dfg_status status = dfg_lifetime_index_overlapping(
            &fit->placed, fit->ranks->first[cell], fit->ranks->last[cell],
            &fit->overlapping);
        if (status == DFG_OK)
            status = reserve_spans(fit, k + fit->overlapping.count);
        if (status != DFG_OK)
            return status;
        const dfg_lifetime_entry *entries = fit->overlapping.items;
        for (int32_t i = 0; i < fit->overlapping.count; i++)
            fit->spans[k++] = (byte_span){entries[i].begin - at - size,
                                          entries[i].end - at};
    }
    *count = k;
    if (k > 0) /* fit->spans may still be NULL otherwise */
        sort_spans(fit->spans, fit->spans + fit->span_capacity, (size_t)k);
    return DFG_OK;
}

dfg_status dfg_best_fit_init(dfg_best_fit *fit, dfg_buffer *buffers, int32_t n,
                             const int64_t *aligned,
                             const dfg_step_ranks *ranks,
                             const dfg_plan_units *units,
                             const dfg_allocator *allocator)
{
    memset(fit, 0, sizeof *fit);
    fit->allocator = allocator;
    fit->buffers = buffers;
    fit->aligned = aligned;
    fit->ranks = ranks;
    fit->units = units;
    return dfg_lifetime_index_init(&fit->placed, ranks->count, n, allocator);
}

void dfg_best_fit_free(dfg_best_fit *fit)
{
    dfg_lifetime_index_free(&fit->placed);
    dfg_free(fit->allocator, fit->overlapping.items);
    dfg_free(fit->allocator, fit->spans);
    memset(fit, 0, sizeof *fit);
}

/* The cells of a unit: *n of them (a lone buffer is its own one cell). */
static const int32_t *cells_of(const dfg_best_fit *fit, const int32_t *unit,
                               int32_t *n)
{
    const dfg_plan_units *u = fit->units;
    if (fit->buffers[*unit].group == 0) {
        *n = 1;
        return unit;
    }
    *n = u->cells_begin[*unit + 1] - u->cells_begin[*unit];
    return u->cells + u->cells_begin[*unit];
}

static int64_t extent_of(const dfg_best_fit *fit, int32_t unit)
{
    return fit->buffers[unit].group == 0 ? fit->aligned[unit]
                                         : fit->units->extent[unit];
}

/* Each cell of the unit at base + its cell offset, in the index. */
static dfg_status place_cells(dfg_best_fit *fit, const int32_t *cells,
                              int32_t n, int64_t base, int64_t extent)
{
    dfg_status status = DFG_OK;
    if (extent > 0 && base + extent > fit->arena)
        fit->arena = base + extent;
    for (int32_t c = 0; status == DFG_OK && c < n; c++) {
        int32_t cell = cells[c];
        dfg_buffer *b = &fit->buffers[cell];
        b->offset = base + b->cell_offset;
        if (fit->aligned[cell] > 0)
            status = dfg_lifetime_index_insert(&fit->placed,
                &(dfg_lifetime_entry){.begin = b->offset,
                                      .end = b->offset + fit->aligned[cell],
                                      .first = fit->ranks->first[cell],
                                      .last = fit->ranks->last[cell],
                                      .buffer = cell});
    }
    return status;
}

dfg_status dfg_best_fit_place(dfg_best_fit *fit, int32_t unit_buffer)
{
    int32_t n, k;
    const int32_t *cells = cells_of(fit, &unit_buffer, &n);
    int64_t extent = extent_of(fit, unit_buffer);
    dfg_status status = extent > 0 ? forbidden_bases(fit, cells, n, &k)
                                   : DFG_OK;
    if (status != DFG_OK)
        return status;
    int64_t base = 0;
    if (extent > 0) {
        /* Spans may overlap one another, so the allowed bases start after
         * the highest end seen yet; between it and a span's start lies a
         * run of allowed bases, whose length is the slack of the fit. */
        const byte_span *spans = fit->spans;
        int64_t free_from = 0, best = -1, best_slack = INT64_MAX;
        for (int32_t j = 0; j < k; j++) {
            int64_t slack = spans[j].begin - free_from;
            if (slack >= 0 && slack < best_slack) {
                best = free_from;
                best_slack = slack;
            }
            if (spans[j].end > free_from)
                free_from = spans[j].end;
        }
        base = best >= 0 ? best : free_from;
    }
    return place_cells(fit, cells, n, base, extent);
}

dfg_status dfg_best_fit_place_at(dfg_best_fit *fit, int32_t unit_buffer,
                                 int64_t base)
{
    int32_t n;
    const int32_t *cells = cells_of(fit, &unit_buffer, &n);
    return place_cells(fit, cells, n, base, extent_of(fit, unit_buffer));
}

dfg_status dfg_plan_with_ranks(const char *who, dfg_ranked_planner planner,
                               dfg_buffer *buffers, int32_t n,
                               int64_t alignment,
                               const dfg_allocator *allocator,
                               int64_t *arena_bytes)
{
    if (!arena_bytes)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "%s: no arena_bytes", who);
    int64_t *aligned, total;
    dfg_status status = dfg_plan_aligned_sizes(who, buffers, n, alignment,
                                               allocator, &aligned, &total);
    if (status != DFG_OK)
        return status;
    dfg_step_ranks ranks;
    dfg_plan_units units = {0};
    status = dfg_step_ranks_build(buffers, n, allocator, &ranks);
    if (status == DFG_OK)
        status = dfg_plan_units_build(buffers, n, aligned, &ranks, allocator,
                                      &units);
    if (status == DFG_OK)
        status = planner(buffers, n, aligned, &ranks, &units, allocator,
                         arena_bytes);
    dfg_plan_units_free(&units);
    dfg_step_ranks_free(&ranks);
    dfg_free(allocator, aligned);
    return status;
}
