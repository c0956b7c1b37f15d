/* The verifier's check that every tensor sharing another's bytes (a view,
 * an in-place output, a concat part written straight into the concat's
 * output) lies inside what its root holds: inside the root's bytes, which
 * are all the planner placed, and within the steps they are claimed.
 *
 * A root that no step writes (dfg_program_is_assembled: a concat without
 * copies) is held slot by slot: each tensor written into it claims its
 * bytes from its step on and must keep them until the root claims all of
 * them at its own first step; a tensor read from it before then must lie
 * over bytes that such writers already hold. Two such writers of one
 * root never share a byte. It shares no code with the planners, which plan
 * those slots as the cells of a rigid group. */
#include <stdlib.h>
#include "program/program_verify_roots.h"
#include "program/program_views.h"
#include "util/error.h"
#include "util/memory.h"

static const char *name_of(const dfg_program *p, int32_t i)
{
    return p->tensors[i].name ? p->tensors[i].name : "?";
}

static dfg_status outside(const dfg_program *p, int32_t i, int32_t r,
                          const char *why)
{
    const dfg_program_tensor *t = &p->tensors[i], *root = &p->tensors[r];
    return dfg_error(DFG_ERR_PLAN,
                     "program check: tensor '%s' (#%d, steps %d..%d, bytes "
                     "[%lld, %lld)) is not inside the tensor '%s' (#%d, steps "
                     "%d..%d, bytes [%lld, %lld)) whose bytes it shares%s",
                     name_of(p, i), i, t->first_step, t->last_step,
                     (long long)t->offset, (long long)(t->offset + t->bytes),
                     name_of(p, r), r, root->first_step, root->last_step,
                     (long long)root->offset,
                     (long long)(root->offset + root->bytes), why);
}

dfg_status dfg_program_alias_roots(const dfg_program *p, int32_t *roots)
{
    enum { UNKNOWN = -1, VISITING = -2 };
    for (int32_t i = 0; i < p->n_tensors; i++)
        roots[i] = UNKNOWN;
    for (int32_t i = 0; i < p->n_tensors; i++) {
        /* Walk to a tensor with a known root, marking the path, then give
         * the path that root: each tensor is walked once. */
        int32_t t = i;
        while (roots[t] == UNKNOWN) {
            int32_t next = p->tensors[t].alias_of;
            if (next < -1 || next >= p->n_tensors)
                return dfg_error(DFG_ERR_PLAN,
                                 "program check: tensor '%s' (#%d) aliases "
                                 "#%d, outside the %d tensors",
                                 name_of(p, t), t, next,
                                 p->n_tensors);
            if (next < 0) {
                roots[t] = t;
                break;
            }
            roots[t] = VISITING;
            t = next;
        }
        if (roots[t] == VISITING)
            return dfg_error(DFG_ERR_PLAN,
                             "program check: tensor '%s' (#%d) is in a cycle "
                             "of aliases", name_of(p, t), t);
        int32_t root = roots[t];
        for (t = i; roots[t] == VISITING; t = p->tensors[t].alias_of)
            roots[t] = root;
    }
    return DFG_OK;
}

typedef struct writer {
    int32_t root;
    int32_t tensor;
    int64_t begin, end;
} writer;

static int writer_before(const void *a, const void *b)
{
    const writer *x = a, *y = b;
    if (x->root != y->root)
        return (x->root > y->root) - (x->root < y->root);
    return (x->begin > y->begin) - (x->begin < y->begin);
}

/* The tensors written into assembled roots, sorted by root then offset,
 * and what a range query over them needs: holes[k] counts the holes
 * between consecutive writers up to k, and latest[j * count + k] is the
 * latest first step among writers k .. k + 2^j - 1. */
typedef struct writers {
    const dfg_program *p;
    const int32_t *roots;
    const uint8_t *written;
    writer *w;
    int32_t count;
    int32_t *holes;
    int32_t *latest;
} writers;

/* 1 if a step writes tensor i into an assembled root before the root
 * holds its bytes (an in-place step over the whole root, later, is no
 * slot writer). */
static int is_writer(const writers *ws, int32_t i)
{
    int32_t r = ws->roots[i];
    return r != i && ws->written[i] &&
           ws->p->tensors[i].first_step < ws->p->tensors[r].first_step &&
           dfg_program_is_assembled(ws->p, ws->written, r);
}

static dfg_status collect(writers *ws)
{
    const dfg_program *p = ws->p;
    for (int32_t i = 0; i < p->n_tensors; i++)
        if (is_writer(ws, i))
            ws->w[ws->count++] = (writer){ws->roots[i], i, p->tensors[i].offset,
                                          p->tensors[i].offset +
                                              p->tensors[i].bytes};
    qsort(ws->w, (size_t)ws->count, sizeof *ws->w, writer_before);
    int32_t levels = 1;
    while (((int64_t)1 << levels) <= ws->count)
        levels++;
    const dfg_allocator *a = &p->allocator;
    ws->holes = dfg_alloc(a, ((size_t)ws->count + 1) * sizeof *ws->holes);
    ws->latest = dfg_alloc(a, ((size_t)ws->count * (size_t)levels + 1) *
                                  sizeof *ws->latest);
    if (!ws->holes || !ws->latest)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "program check: %d writers",
                         ws->count);
    for (int32_t k = 0; k < ws->count; k++) {
        const writer *w = &ws->w[k], *before = k > 0 ? &ws->w[k - 1] : NULL;
        int same = before && before->root == w->root;
        if (same && w->begin < before->end)
            return dfg_error(DFG_ERR_PLAN,
                             "program check: tensors '%s' (#%d) and '%s' (#%d) "
                             "are both written into bytes of '%s' (#%d)",
                             name_of(p, before->tensor), before->tensor,
                             name_of(p, w->tensor), w->tensor,
                             name_of(p, w->root), w->root);
        ws->holes[k] = (k > 0 ? ws->holes[k - 1] : 0) +
                       (!same || w->begin > before->end);
        ws->latest[k] = p->tensors[w->tensor].first_step;
    }
    for (int32_t j = 1; j < levels; j++)
        for (int32_t k = 0; k + ((int32_t)1 << j) <= ws->count; k++) {
            int32_t a = ws->latest[(j - 1) * ws->count + k];
            int32_t b = ws->latest[(j - 1) * ws->count + k + (1 << (j - 1))];
            ws->latest[j * ws->count + k] = a > b ? a : b;
        }
    return DFG_OK;
}

/* The first writer k in [lo, hi) for which past(k) holds (past is
 * monotone over the range), or hi. */
#define FIRST_WHERE(lo, hi, past)                                           \
    do {                                                                    \
        while (lo < hi) {                                                   \
            int32_t k = lo + (hi - lo) / 2;                                 \
            if (past)                                                       \
                hi = k;                                                     \
            else                                                            \
                lo = k + 1;                                                 \
        }                                                                   \
    } while (0)

/* 1 if writers of root r that already hold their bytes at step cover the
 * bytes [begin, end). */
static int held_by_writers(const writers *ws, int32_t r, int64_t begin,
                           int64_t end, int32_t step)
{
    if (begin >= end)
        return 1;
    const writer *w = ws->w;
    int32_t lo = 0, hi = ws->count;
    FIRST_WHERE(lo, hi, w[k].root >= r);
    int32_t from = lo;
    hi = ws->count;
    FIRST_WHERE(lo, hi, w[k].root > r || w[k].end > begin);
    int32_t first = lo; /* the first of r's writers ending past begin */
    lo = from;
    hi = ws->count;
    FIRST_WHERE(lo, hi, w[k].root > r || w[k].begin >= end);
    int32_t last = lo - 1; /* the last of r's writers starting before end */
    if (first > last || w[first].root != r || w[first].begin > begin ||
        w[last].end < end || ws->holes[last] != ws->holes[first])
        return 0;
    int32_t j = 0;
    while (((int32_t)2 << j) <= last - first + 1)
        j++;
    int32_t a = ws->latest[j * ws->count + first];
    int32_t b = ws->latest[j * ws->count + last - (1 << j) + 1];
    return (a > b ? a : b) <= step;
}

static dfg_status check_sharer(const writers *ws, int32_t i)
{
    const dfg_program *p = ws->p;
    int32_t r = ws->roots[i];
    const dfg_program_tensor *t = &p->tensors[i], *root = &p->tensors[r];
    if (t->offset < root->offset ||
        t->offset + t->bytes > root->offset + root->bytes ||
        t->last_step > root->last_step)
        return outside(p, i, r, "");
    if (t->first_step >= root->first_step)
        return DFG_OK;
    if (!dfg_program_is_assembled(p, ws->written, r))
        return outside(p, i, r, "");
    if (is_writer(ws, i)) {
        if (t->last_step < root->first_step - 1)
            return outside(p, i, r, ": it is written into it but lets its "
                                    "bytes go before it holds them");
        return DFG_OK;
    }
    if (!held_by_writers(ws, r, t->offset, t->offset + t->bytes, t->first_step))
        return outside(p, i, r, ": it is read before its bytes are written");
    return DFG_OK;
}

dfg_status dfg_program_verify_roots(const dfg_program *p, const int32_t *roots)
{
    size_t n = (size_t)p->n_tensors + 1;
    const dfg_allocator *a = &p->allocator;
    writers ws = {.p = p, .roots = roots, .written = dfg_alloc(a, n),
                  .w = dfg_alloc(a, n * sizeof *ws.w)};
    dfg_status status = DFG_OK;
    if (!ws.written || !ws.w)
        status = dfg_error(DFG_ERR_OUT_OF_MEMORY, "program check: %d tensors",
                           p->n_tensors);
    if (status == DFG_OK) {
        dfg_program_mark_written(p, (uint8_t *)ws.written);
        status = collect(&ws);
    }
    for (int32_t i = 0; status == DFG_OK && i < p->n_tensors; i++)
        if (roots[i] != i && p->tensors[i].region == DFG_REGION_ARENA)
            status = check_sharer(&ws, i);
    dfg_free(a, (void *)ws.written);
    dfg_free(a, ws.w);
    dfg_free(a, ws.holes);
    dfg_free(a, ws.latest);
    return status;
}
