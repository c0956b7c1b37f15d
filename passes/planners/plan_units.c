#include "passes/planners/plan_units.h"

#include <string.h>
#include "util/error.h"
#include "util/memory.h"

void dfg_plan_units_free(dfg_plan_units *units)
{
    const dfg_allocator *a = units->allocator;
    dfg_free(a, units->unit);
    dfg_free(a, units->cells_begin);
    dfg_free(a, units->cells);
    dfg_free(a, units->extent);
    dfg_free(a, units->first);
    dfg_free(a, units->last);
    memset(units, 0, sizeof *units);
}

dfg_status dfg_plan_units_build(const dfg_buffer *buffers, int32_t n,
                                const int64_t *aligned,
                                const dfg_step_ranks *ranks,
                                const dfg_allocator *a, dfg_plan_units *u)
{
    memset(u, 0, sizeof *u);
    u->allocator = a;
    size_t slots = (size_t)n + 1;
    u->unit = dfg_alloc(a, slots * sizeof *u->unit);
    u->cells_begin = dfg_calloc(a, slots + 1, sizeof *u->cells_begin);
    u->cells = dfg_alloc(a, slots * sizeof *u->cells);
    u->extent = dfg_calloc(a, slots, sizeof *u->extent);
    u->first = dfg_alloc(a, slots * sizeof *u->first);
    u->last = dfg_alloc(a, slots * sizeof *u->last);
    if (!u->unit || !u->cells_begin || !u->cells || !u->extent || !u->first ||
        !u->last)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "plan units of %d buffers", n);
    /* Counting sort of the cells by unit: counts, then starts, then fill. */
    for (int32_t i = 0; i < n; i++)
        u->cells_begin[dfg_unit_of(buffers, i) + 1]++;
    for (int32_t b = 0; b < n; b++)
        u->cells_begin[b + 1] += u->cells_begin[b];
    for (int32_t b = 0; b < n; b++) {
        u->first[b] = INT32_MAX;
        u->last[b] = -1;
    }
    int32_t *fill = u->unit; /* scratch until the units are listed */
    memcpy(fill, u->cells_begin, (size_t)n * sizeof *fill);
    for (int32_t i = 0; i < n; i++) {
        int32_t b = dfg_unit_of(buffers, i);
        u->cells[fill[b]++] = i;
        int64_t end = buffers[i].cell_offset + aligned[i];
        if (end > u->extent[b])
            u->extent[b] = end;
        if (ranks->first[i] < u->first[b])
            u->first[b] = ranks->first[i];
        if (ranks->last[i] > u->last[b])
            u->last[b] = ranks->last[i];
    }
    for (int32_t b = 0; b < n; b++)
        if (u->cells_begin[b + 1] > u->cells_begin[b])
            u->unit[u->count++] = b;
    return DFG_OK;
}
