/* dfg_program_verify: the independent check of a compiled program's memory
 * plan, on its tensor table alone. */
#include <stdlib.h>
#include "program/occupancy_sweep.h"
#include "program/program.h"
#include "program/program_verify_buckets.h"
#include "program/program_verify_roots.h"
#include "util/error.h"
#include "util/memory.h"

static const char *tensor_name(const dfg_program_tensor *t)
{
    return t->name ? t->name : "?";
}

/* Views and in-place outputs take their offset from their source (a slice
 * starts inside it), so only tensors with bytes of their own must sit on
 * the alignment. */
static dfg_status check_placement(const dfg_program *p, int32_t i,
                                  int64_t alignment)
{
    const dfg_program_tensor *t = &p->tensors[i];
    if ((unsigned)t->region >= DFG_REGION_COUNT)
        return dfg_error(DFG_ERR_PLAN,
                         "program check: tensor '%s' (#%d) is in region %d",
                         tensor_name(t), i, (int)t->region);
    int64_t region = p->region_bytes[t->region];
    if (t->bytes < 0 || t->offset < 0 || t->bytes > region ||
        t->offset > region - t->bytes)
        return dfg_error(DFG_ERR_PLAN,
                         "program check: tensor '%s' (#%d, bytes [%lld, %lld + "
                         "%lld)) is outside its region of %lld bytes",
                         tensor_name(t), i, (long long)t->offset,
                         (long long)t->offset, (long long)t->bytes,
                         (long long)region);
    if (t->region != DFG_REGION_ARENA)
        return DFG_OK;
    if (t->alias_of < 0 && t->offset % alignment != 0)
        return dfg_error(DFG_ERR_PLAN,
                         "program check: tensor '%s' (#%d) has offset %lld, "
                         "not a multiple of %lld", tensor_name(t), i,
                         (long long)t->offset, (long long)alignment);
    if (t->first_step < 0 || t->last_step < t->first_step)
        return dfg_error(DFG_ERR_PLAN,
                         "program check: tensor '%s' (#%d) has lifetime "
                         "[%d, %d]", tensor_name(t), i, t->first_step,
                         t->last_step);
    return DFG_OK;
}

static dfg_status conflict(const dfg_program *p, int32_t a, int32_t b)
{
    const dfg_program_tensor *x = &p->tensors[a], *y = &p->tensors[b];
    return dfg_error(DFG_ERR_PLAN,
                     "program check: tensors '%s' (#%d, steps %d..%d, bytes "
                     "[%lld, %lld)) and '%s' (#%d, steps %d..%d, bytes [%lld, "
                     "%lld)) share arena bytes at step %d", tensor_name(x), a,
                     x->first_step, x->last_step, (long long)x->offset,
                     (long long)(x->offset + x->bytes), tensor_name(y), b,
                     y->first_step, y->last_step, (long long)y->offset,
                     (long long)(y->offset + y->bytes),
                     x->first_step > y->first_step ? x->first_step
                                                   : y->first_step);
}

/* Arena tensors that share bytes while both live, unless they alias the
 * same root. */
static dfg_status check_sharing(const dfg_program *p, const int32_t *roots)
{
    int32_t n = p->n_tensors;
    const dfg_allocator *m = &p->allocator;
    dfg_occupancy *occ = dfg_alloc(m, ((size_t)n + 1) * sizeof *occ);
    int32_t *tensor_of = dfg_alloc(m, ((size_t)n + 1) * sizeof *tensor_of);
    dfg_status status = DFG_OK;
    int32_t count = 0, a = -1, b = -1;
    if (!occ || !tensor_of)
        status = dfg_error(DFG_ERR_OUT_OF_MEMORY, "program check: %d tensors", n);
    for (int32_t i = 0; status == DFG_OK && i < n; i++) {
        const dfg_program_tensor *t = &p->tensors[i];
        if (t->region != DFG_REGION_ARENA)
            continue;
        occ[count] = (dfg_occupancy){t->offset, t->offset + t->bytes,
                                     t->first_step, t->last_step, roots[i]};
        tensor_of[count++] = i;
    }
    if (status == DFG_OK)
        status = dfg_find_shared_bytes(occ, count, m, &a, &b);
    if (status == DFG_OK && a >= 0)
        status = conflict(p, tensor_of[a], tensor_of[b]);
    dfg_free(m, occ);
    dfg_free(m, tensor_of);
    return status;
}

dfg_status dfg_program_verify(const dfg_program *p)
{
    if (!p)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "program check: no program");
    int64_t alignment = (int64_t)p->stats.alignment;
    if (alignment <= 0 || (alignment & (alignment - 1)) != 0)
        return dfg_error(DFG_ERR_PLAN,
                         "program check: alignment %llu is not a power of two",
                         (unsigned long long)p->stats.alignment);
    for (int32_t i = 0; i < p->n_tensors; i++) {
        dfg_status status = check_placement(p, i, alignment);
        if (status != DFG_OK)
            return status;
    }
    int32_t *roots = dfg_alloc(&p->allocator,
                               ((size_t)p->n_tensors + 1) * sizeof *roots);
    if (!roots)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "program check: %d tensors",
                         p->n_tensors);
    dfg_status status = dfg_program_alias_roots(p, roots);
    if (status == DFG_OK)
        status = dfg_program_verify_roots(p, roots);
    if (status == DFG_OK)
        status = check_sharing(p, roots);
    if (status == DFG_OK)
        status = dfg_program_verify_buckets(p, alignment);
    dfg_free(&p->allocator, roots);
    return status;
}
