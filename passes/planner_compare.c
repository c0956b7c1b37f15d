/* dfg_plan_compare: the program's arena buffers placed by every planner,
 * bounded, and replayed through the simulated caching allocator.
 *
 * The buffers are the arena tensors that own their bytes (alias_of < 0):
 * a view or an in-place output shares its owner's bytes, whose lifetime
 * already spans it, exactly as when the program was planned. So the row
 * of the program's own planner reproduces its arena, but for a concat's
 * buffer planned slot by slot (passes/concat_cells.c): here it is one
 * buffer from its first slot on.
 *
 * The replay is what a dynamic framework does with the same tensors in
 * the same order: at each step it allocates the buffers whose lifetime
 * starts there (in tensor order: outputs before the step's workspace),
 * then frees those whose lifetime ends there. */
#include "dfg/compile.h"

#include <string.h>
#include "passes/planners/caching_allocator.h"
#include "util/error.h"
#include "util/memory.h"
#include "passes/memory_plan.h"
#include "program/program.h"
#include "program/program_views.h"

/* The arena buffers of the program, from its allocator into *out. A buffer held
 * slot by slot (dfg_program_held_steps) is one here, from its first slot
 * on, as a framework holds a tensor it allocates. */
static dfg_status collect_buffers(const dfg_program *p, dfg_buffer **out,
                                  int32_t *n)
{
    const dfg_allocator *a = &p->allocator;
    size_t slots = (size_t)p->n_tensors + 1;
    *n = 0;
    *out = dfg_alloc(a, slots * sizeof **out);
    int32_t *buffer_of = dfg_alloc(a, slots * sizeof *buffer_of);
    uint8_t *written = dfg_alloc(a, slots);
    if (!*out || !buffer_of || !written) {
        dfg_free(a, *out);
        *out = NULL;
        dfg_free(a, buffer_of);
        dfg_free(a, written);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "plan comparison: out of memory for %d tensors",
                         p->n_tensors);
    }
    for (int32_t i = 0; i < p->n_tensors; i++) {
        const dfg_program_tensor *t = &p->tensors[i];
        buffer_of[i] = -1;
        if (t->region != DFG_REGION_ARENA || t->alias_of >= 0)
            continue;
        buffer_of[i] = *n;
        (*out)[(*n)++] = (dfg_buffer){.size = t->bytes,
                                      .first_step = t->first_step,
                                      .last_step = t->last_step};
    }
    dfg_program_mark_written(p, written);
    for (int32_t i = 0; i < p->n_tensors; i++) {
        int32_t first, last;
        if (p->tensors[i].alias_of < 0 ||
            !dfg_program_held_steps(p, written, i, &first, &last))
            continue;
        dfg_buffer *whole = &(*out)[buffer_of[p->tensors[i].alias_of]];
        if (first < whole->first_step)
            whole->first_step = first;
    }
    dfg_free(a, buffer_of);
    dfg_free(a, written);
    return DFG_OK;
}

/* Places a copy of the buffers with one planner and verifies the plan. */
static dfg_status plan_with(dfg_planner planner, const dfg_buffer *buffers,
                            int32_t n, int64_t alignment,
                            const dfg_allocator *a, uint64_t *bytes)
{
    dfg_buffer *copy = dfg_alloc(a, ((size_t)n + 1) * sizeof *copy);
    if (!copy)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "plan comparison: out of memory for %d buffers", n);
    memcpy(copy, buffers, (size_t)n * sizeof *copy);
    int64_t arena = 0;
    dfg_status s = dfg_plan_buffers(planner, copy, n, alignment, a, &arena);
    if (s == DFG_OK)
        s = dfg_plan_verify_buffers(copy, n, alignment, arena, a);
    dfg_free(a, copy);
    if (s != DFG_OK)
        return dfg_error_prefix(s, "plan comparison, planner %s",
                                dfg_planner_name(planner));
    *bytes = (uint64_t)arena;
    return DFG_OK;
}

/* Frees, at the end of `step`, the live buffers whose lifetime ends
 * there. */
static dfg_status free_ending(dfg_caching_allocator *a,
                              const dfg_buffer *buffers, int32_t n,
                              const int32_t *handle, int32_t step)
{
    for (int32_t i = 0; i < n; i++)
        if (handle[i] >= 0 && buffers[i].last_step == step) {
            dfg_status s = dfg_caching_free(a, handle[i]);
            if (s != DFG_OK)
                return s;
        }
    return DFG_OK;
}

static dfg_status replay(const dfg_buffer *buffers, int32_t n,
                         const dfg_allocator *allocator,
                         dfg_caching_stats *stats)
{
    dfg_caching_allocator a;
    dfg_caching_init(&a, allocator);
    int32_t *handle = dfg_alloc(allocator, ((size_t)n + 1) * sizeof *handle);
    if (!handle)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "caching allocator replay: out of memory");
    int32_t last_step = -1;
    for (int32_t i = 0; i < n; i++) {
        handle[i] = -1;
        if (buffers[i].last_step > last_step)
            last_step = buffers[i].last_step;
    }
    dfg_status s = DFG_OK;
    for (int32_t step = 0; step <= last_step && s == DFG_OK; step++) {
        for (int32_t i = 0; i < n && s == DFG_OK; i++)
            if (buffers[i].first_step == step && buffers[i].size > 0)
                s = dfg_caching_malloc(&a, buffers[i].size, &handle[i]);
        if (s == DFG_OK)
            s = free_ending(&a, buffers, n, handle, step);
    }
    *stats = a.stats;
    dfg_caching_release(&a);
    dfg_free(allocator, handle);
    return s;
}

dfg_status dfg_plan_compare(const dfg_program *program,
                            dfg_plan_comparison *out)
{
    if (!program || !out)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_plan_compare: program and result are required");
    memset(out, 0, sizeof *out);
    dfg_buffer *buffers;
    int32_t n;
    dfg_status s = collect_buffers(program, &buffers, &n);
    if (s != DFG_OK)
        return s;
    int64_t alignment = (int64_t)program->stats.alignment;
    out->n_buffers = n;
    out->alignment = program->stats.alignment;
    out->compiled_planner = program->stats.planner;
    out->compiled_arena_bytes = program->stats.arena_bytes;
    const dfg_allocator *a = &program->allocator;
    int64_t bound = dfg_plan_lower_bound(buffers, n, alignment, a);
    int64_t none = dfg_plan_no_reuse_bytes(buffers, n, alignment, a);
    if (bound < 0 || none < 0)
        s = dfg_error_prefix(DFG_ERR_INVALID_ARGUMENT, "dfg_plan_compare");
    out->lower_bound_bytes = (uint64_t)bound;
    out->no_reuse_bytes = (uint64_t)none;
    for (int planner = 0; planner < DFG_PLANNER_COUNT && s == DFG_OK;
         planner++)
        s = plan_with((dfg_planner)planner, buffers, n, alignment, a,
                      &out->planner_arena_bytes[planner]);
    if (s == DFG_OK)
        s = replay(buffers, n, a, &out->caching);
    dfg_free(a, buffers);
    return s;
}
