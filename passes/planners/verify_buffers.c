/* The independent check of a buffer plan: it trusts nothing a planner
 * computed and shares no code with the planners. The cells of a rigid
 * group are checked one by one, each over its own lifetime, and for
 * their place in the group. */
#include "passes/memory_plan.h"
#include "program/occupancy_sweep.h"
#include "util/error.h"
#include "util/memory.h"

static dfg_status check_one(const dfg_buffer *b, int32_t i, int64_t alignment,
                            int64_t arena_bytes)
{
    if (b->size < 0 || b->first_step < 0 || b->last_step < b->first_step)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "plan check: buffer %d has size %lld and lifetime "
                         "[%d, %d]", i, (long long)b->size, b->first_step,
                         b->last_step);
    if (b->offset < 0 || b->offset % alignment != 0)
        return dfg_error(DFG_ERR_PLAN,
                         "plan check: buffer %d (steps %d..%d) has offset "
                         "%lld, not a non-negative multiple of %lld", i,
                         b->first_step, b->last_step, (long long)b->offset,
                         (long long)alignment);
    if (b->size > arena_bytes || b->offset > arena_bytes - b->size)
        return dfg_error(DFG_ERR_PLAN,
                         "plan check: buffer %d (steps %d..%d, bytes [%lld, "
                         "%lld + %lld)) ends past the arena of %lld bytes", i,
                         b->first_step, b->last_step, (long long)b->offset,
                         (long long)b->offset, (long long)b->size,
                         (long long)arena_bytes);
    return DFG_OK;
}

/* A cell of a rigid group sits at its base's offset + its cell offset. */
static dfg_status check_rigid(const dfg_buffer *buffers, int32_t n, int32_t i)
{
    const dfg_buffer *b = &buffers[i];
    if (b->group == 0 && b->cell_offset == 0)
        return DFG_OK;
    int32_t base = b->group - 1;
    if (b->group < 0 || b->group > n || buffers[base].group != b->group ||
        buffers[base].cell_offset != 0)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "plan check: buffer %d is a cell of group %d (cell "
                         "offset %lld), which has no base at offset 0", i,
                         b->group, (long long)b->cell_offset);
    if (b->offset - b->cell_offset != buffers[base].offset)
        return dfg_error(DFG_ERR_PLAN,
                         "plan check: cell %d (steps %d..%d) of the group of "
                         "buffer %d is at offset %lld, not at the group's "
                         "offset %lld + %lld", i, b->first_step, b->last_step,
                         base, (long long)b->offset,
                         (long long)buffers[base].offset,
                         (long long)b->cell_offset);
    return DFG_OK;
}

dfg_status dfg_plan_verify_buffers(const dfg_buffer *buffers, int32_t n,
                                   int64_t alignment, int64_t arena_bytes,
                                   const dfg_allocator *allocator)
{
    if (n < 0 || (n > 0 && !buffers) || alignment <= 0 ||
        (alignment & (alignment - 1)) != 0 || arena_bytes < 0)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "plan check: %d buffers, alignment %lld, arena %lld",
                         n, (long long)alignment, (long long)arena_bytes);
    for (int32_t i = 0; i < n; i++) {
        dfg_status status = check_one(&buffers[i], i, alignment, arena_bytes);
        if (status == DFG_OK)
            status = check_rigid(buffers, n, i);
        if (status != DFG_OK)
            return status;
    }
    dfg_occupancy *occ = dfg_alloc(allocator, ((size_t)n + 1) * sizeof *occ);
    if (!occ)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "plan check: %d buffers", n);
    for (int32_t i = 0; i < n; i++)
        occ[i] = (dfg_occupancy){buffers[i].offset,
                                 buffers[i].offset + buffers[i].size,
                                 buffers[i].first_step, buffers[i].last_step, i};
    int32_t a, b;
    dfg_status status = dfg_find_shared_bytes(occ, n, allocator, &a, &b);
    dfg_free(allocator, occ);
    if (status != DFG_OK || a < 0)
        return status;
    const dfg_buffer *x = &buffers[a], *y = &buffers[b];
    return dfg_error(DFG_ERR_PLAN,
                     "plan check: buffers %d (steps %d..%d, bytes [%lld, "
                     "%lld)) and %d (steps %d..%d, bytes [%lld, %lld)) share "
                     "bytes at step %d", a, x->first_step, x->last_step,
                     (long long)x->offset, (long long)(x->offset + x->size), b,
                     y->first_step, y->last_step, (long long)y->offset,
                     (long long)(y->offset + y->size),
                     x->first_step > y->first_step ? x->first_step
                                                   : y->first_step);
}
