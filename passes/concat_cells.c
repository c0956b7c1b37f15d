/* A concat's buffer planned slot by slot.
 *
 * A concat without copies (passes/concat_views.c) owns bytes that its
 * inputs' producers write, each at its own step: DenseNet's block buffer
 * holds the stem's features from the max-pool on, and each layer's 32
 * channels only from the layer that computes them. Planned as one tensor,
 * the whole buffer would be live from its first part on, its empty slots
 * too. Instead each cell of it (the bytes from one value's start, rounded
 * down to the alignment, to the next's) is a buffer with its own lifetime:
 * from the first step that writes or reads a value over those bytes to the
 * last one, so from its part's producer to the buffer's last reader. The
 * cells form a rigid group (memory_plan.h): the planner moves them
 * together, so every part keeps its byte offset, while the lower bound and
 * the placement count a cell only while it is live.
 *
 * Such a buffer is "assembled": an arena root that no step writes (the
 * output of a concat that runs no step). A buffer whose values all start
 * in one alignment unit stays one buffer. */
#include "passes/pass.h"

#include <stdlib.h>
#include <string.h>
#include "util/error.h"
#include "util/memory.h"

typedef struct cell_scan {
    const dfg_graph *graph;
    const dfg_schedule *schedule;
    const dfg_alias_plan *alias;
    const dfg_liveness *liveness;
    int64_t alignment;
    int32_t *begin;     /* [n_values + 1] values sharing assembled root r:
                           sharers[begin[r] .. begin[r + 1]) */
    int32_t *sharers;   /* [n_values] */
    int64_t *bounds;    /* [n_values] scratch: one root's cell starts */
    int32_t *first;     /* [n_values] scratch: each cell's lifetime */
    int32_t *last;
} cell_scan;

static int is_assembled(const cell_scan *c, int32_t r)
{
    const dfg_ir_value *value = &c->graph->values[r];
    return c->liveness->root_buffer[r] >= 0 &&
           value->kind == DFG_VALUE_NODE_OUTPUT &&
           c->schedule->node_step[value->producer] < 0;
}

static int compare_bytes(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Sharers of assembled roots, grouped by root (a counting sort). */
static void group_sharers(cell_scan *c)
{
    const dfg_graph *g = c->graph;
    for (int32_t v = 0; v < g->n_values; v++)
        if (c->schedule->first[v] >= 0 && is_assembled(c, c->alias->root[v]))
            c->begin[c->alias->root[v] + 1]++;
    for (int32_t v = 0; v < g->n_values; v++)
        c->begin[v + 1] += c->begin[v];
    int32_t *fill = c->first; /* scratch until the cells are found */
    memcpy(fill, c->begin, (size_t)g->n_values * sizeof *fill);
    for (int32_t v = 0; v < g->n_values; v++)
        if (c->schedule->first[v] >= 0 && is_assembled(c, c->alias->root[v]))
            c->sharers[fill[c->alias->root[v]]++] = v;
}

/* The cells of root r: their starts in c->bounds and lifetimes in
 * c->first/last; returns how many. */
static int32_t find_cells(cell_scan *c, int32_t r)
{
    int32_t count = 0;
    for (int32_t k = c->begin[r]; k < c->begin[r + 1]; k++) {
        int64_t at = c->alias->offset[c->sharers[k]];
        c->bounds[count++] = at - at % c->alignment;
    }
    qsort(c->bounds, (size_t)count, sizeof *c->bounds, compare_bytes);
    int32_t cells = 0;
    for (int32_t j = 0; j < count; j++)
        if (cells == 0 || c->bounds[cells - 1] != c->bounds[j])
            c->bounds[cells++] = c->bounds[j];
    for (int32_t j = 0; j < cells; j++) {
        c->first[j] = INT32_MAX;
        c->last[j] = -1;
    }
    /* Each value's lifetime begins the cells its bytes meet; the root
     * covers them all. Every cell lasts to the buffer's last reader: the
     * program holds an assembled root's bytes whole until then
     * (passes/lower.c), and so does the verifier, so a cell freed at its
     * own part's last reader could take a tensor the check refuses. */
    int32_t end = -1;
    for (int32_t k = c->begin[r]; k < c->begin[r + 1]; k++) {
        int32_t v = c->sharers[k];
        int64_t from = c->alias->offset[v];
        int64_t to = from + dfg_type_bytes(&c->graph->values[v].type);
        int32_t j = 0, hi = cells - 1; /* the last cell starting at <= from */
        while (j < hi) {
            int32_t mid = j + (hi - j + 1) / 2;
            if (c->bounds[mid] <= from)
                j = mid;
            else
                hi = mid - 1;
        }
        for (; j < cells && c->bounds[j] < to; j++) {
            if (c->schedule->first[v] < c->first[j])
                c->first[j] = c->schedule->first[v];
            if (c->schedule->last[v] > end)
                end = c->schedule->last[v];
        }
    }
    for (int32_t j = 0; j < cells; j++)
        c->last[j] = end;
    return cells;
}

/* Root r's buffer becomes its first cell, the base of a group whose other
 * cells are appended to buffers from *n on. */
static void split_root(cell_scan *c, int32_t r, int32_t cells,
                       dfg_buffer *buffers, int32_t *n)
{
    int32_t base = c->liveness->root_buffer[r];
    int64_t bytes = dfg_type_bytes(&c->graph->values[r].type);
    for (int32_t j = 0; j < cells; j++) {
        dfg_buffer *b = j == 0 ? &buffers[base] : &buffers[(*n)++];
        int64_t end = j + 1 < cells ? c->bounds[j + 1] : bytes;
        *b = (dfg_buffer){.size = end - c->bounds[j],
                          .first_step = c->first[j],
                          .last_step = c->last[j],
                          .group = base + 1,
                          .cell_offset = c->bounds[j]};
    }
}

dfg_status dfg_pass_concat_cells(const dfg_graph *graph,
                                 const dfg_schedule *schedule,
                                 const dfg_alias_plan *alias,
                                 int64_t alignment,
                                 const dfg_allocator *allocator,
                                 dfg_liveness *l)
{
    size_t values = (size_t)graph->n_values + 1;
    cell_scan c = {
        .graph = graph, .schedule = schedule, .alias = alias, .liveness = l,
        .alignment = alignment,
        .begin = dfg_calloc(allocator, values + 1, sizeof *c.begin),
        .sharers = dfg_calloc(allocator, values, sizeof *c.sharers),
        .bounds = dfg_calloc(allocator, values, sizeof *c.bounds),
        .first = dfg_calloc(allocator, values, sizeof *c.first),
        .last = dfg_calloc(allocator, values, sizeof *c.last),
    };
    dfg_buffer *buffers = NULL;
    dfg_status st = DFG_OK;
    if (!c.begin || !c.sharers || !c.bounds || !c.first || !c.last)
        st = dfg_error(DFG_ERR_OUT_OF_MEMORY, "concat cells: out of memory");
    int32_t extra = 0;
    if (st == DFG_OK) {
        group_sharers(&c);
        for (int32_t r = 0; r < graph->n_values; r++)
            if (c.begin[r + 1] > c.begin[r])
                extra += find_cells(&c, r) - 1;
    }
    if (st == DFG_OK && extra > 0) {
        buffers = dfg_calloc(allocator, (size_t)l->n_buffers + (size_t)extra + 1,
                             sizeof *buffers);
        if (!buffers)
            st = dfg_error(DFG_ERR_OUT_OF_MEMORY, "concat cells: out of memory");
    }
    if (buffers) {
        memcpy(buffers, l->buffers, (size_t)l->n_buffers * sizeof *buffers);
        int32_t n = l->n_buffers;
        for (int32_t r = 0; r < graph->n_values; r++) {
            if (c.begin[r + 1] == c.begin[r])
                continue;
            int32_t cells = find_cells(&c, r);
            if (cells > 1)
                split_root(&c, r, cells, buffers, &n);
        }
        dfg_free(allocator, l->buffers);
        l->buffers = buffers;
        l->n_buffers = n;
    }
    dfg_free(allocator, c.begin);
    dfg_free(allocator, c.sharers);
    dfg_free(allocator, c.bounds);
    dfg_free(allocator, c.first);
    dfg_free(allocator, c.last);
    return st;
}
