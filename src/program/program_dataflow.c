/* The loader's dataflow check (part of dfg_program_validate): it runs the
 * steps over the arena's bytes, recording for each byte the tensor whose
 * value it holds (arena_owners.h), and refuses a program in which
 * - a step reads a tensor whose bytes do not hold its value: read before
 *   the step that writes it, read though no step writes it, or read after
 *   another tensor was written over it (in place, or by a step the plan
 *   placed there while it was still needed);
 * - a graph output does not hold its value after the last step;
 * - a step writes a graph input, or a tensor another step writes too.
 * The graph inputs hold their values before step 0 (the session copies
 * them in at every run); weights and constants are read-only and always
 * hold theirs. So no step reads an arena byte that was not written in the
 * same run: the arena is never zeroed, and need not be.
 *
 * The value a tensor holds is that of its definition: the tensor itself
 * if a step writes it or it is a graph input; for the output of a view
 * step (skipped at run time), its input's definition; else that of the
 * tensor it shares bytes with (alias_of). A root that no step writes is
 * assembled slot by slot (dfg_program_is_assembled): reading it, or a
 * view of it, needs each byte to hold one of its slot writers' values.
 * The lifetimes recorded in the file are not needed here: the check
 * follows the steps (dfg_program_verify checks that tensors live at the
 * same step share no bytes). It costs O((tensors + operands) log
 * tensors). */
#include "program/program_dataflow.h"

#include <stdio.h>
#include <stdlib.h>
#include "program/arena_owners.h"
#include "program/program_verify_roots.h"
#include "program/program_views.h"
#include "util/error.h"
#include "util/memory.h"

#define FLOW_ERROR(...) \
    dfg_error(DFG_ERR_FORMAT, "program file: " __VA_ARGS__)

typedef struct flow {
    const dfg_program *p;
    const int32_t *roots;
    int32_t *writer;   /* step that writes tensor i, or -1 */
    int32_t *def;      /* the tensor whose value tensor i holds */
    int32_t *klass;    /* an assembled root for its slot writers, else i */
    uint8_t *written;  /* writer[i] >= 0 */
    uint8_t *is_input; /* a graph input */
    uint8_t *viewed;   /* the output of a view step */
    int32_t *parent;   /* find_parents */
    dfg_arena_owners owners;
} flow;

static const char *name_of(const dfg_program *p, int32_t i)
{
    return p->tensors[i].name ? p->tensors[i].name : "?";
}

static int in_arena(const dfg_program *p, int32_t t)
{
    return t >= 0 && p->tensors[t].region == DFG_REGION_ARENA;
}

/* "step 3 'relu1' (relu)" or "graph output 0" into buf. */
static const char *reader_label(const dfg_program *p, int32_t s, int32_t k,
                                char *buf, size_t size)
{
    if (s < p->n_steps)
        snprintf(buf, size, "step %d '%s' (%s)", (int)s,
                 p->steps[s].name ? p->steps[s].name : "?",
                 dfg_op_get(p->steps[s].op)->name);
    else
        snprintf(buf, size, "graph output %d", (int)k);
    return buf;
}

static dfg_status mark_written(flow *f, int32_t s, int32_t t)
{
    const dfg_program *p = f->p;
    char step[160];
    if (f->is_input[t])
        return FLOW_ERROR("%s writes graph input %d '%s'",
                          reader_label(p, s, 0, step, sizeof step), (int)t,
                          name_of(p, t));
    if (f->writer[t] >= 0)
        return FLOW_ERROR("tensor %d '%s' is written by step %d and by %s",
                          (int)t, name_of(p, t), (int)f->writer[t],
                          reader_label(p, s, 0, step, sizeof step));
    f->writer[t] = s;
    f->written[t] = 1;
    return DFG_OK;
}

/* writer[]: the outputs of every step the executor runs (a view step's
 * output is its input's bytes) and every workspace, as
 * dfg_program_mark_written counts them. */
static dfg_status find_writers(flow *f)
{
    const dfg_program *p = f->p;
    dfg_status status = DFG_OK;
    for (int32_t k = 0; k < p->n_inputs; k++)
        f->is_input[p->inputs[k]] = 1;
    for (int32_t s = 0; s < p->n_steps && status == DFG_OK; s++) {
        const dfg_program_step *st = &p->steps[s];
        if (st->workspace >= 0)
            status = mark_written(f, s, st->workspace);
        if (dfg_program_step_is_view(p, st))
            continue;
        for (int32_t j = 0; j < st->n_outputs && status == DFG_OK; j++)
            if (st->outputs[j] >= 0)
                status = mark_written(f, s, st->outputs[j]);
    }
    return status;
}

/* 1 if tensor i is written into an assembled root by the time the root
 * is whole (its first_step, when the last slot may be written); a step
 * writing over the root later writes in place, over its value. */
static int is_slot_writer(const flow *f, int32_t i)
{
    int32_t r = f->roots[i];
    return r != i && f->written[i] &&
           f->writer[i] <= f->p->tensors[r].first_step &&
           dfg_program_is_assembled(f->p, f->written, r);
}

/* parent[t]: the tensor whose value t holds if t is not a definition
 * itself: a view step's output holds its input's, a tensor that no step
 * writes (a slot of an assembled root, or the root of views) its
 * alias_of's; -1 for a written tensor, a graph input or a root. */
static dfg_status find_parents(flow *f)
{
    const dfg_program *p = f->p;
    int32_t *parent = f->parent;
    for (int32_t i = 0; i < p->n_tensors; i++)
        parent[i] = f->written[i] || f->is_input[i] ? -1
                                                    : p->tensors[i].alias_of;
    for (int32_t s = 0; s < p->n_steps; s++) {
        const dfg_program_step *st = &p->steps[s];
        if (!dfg_program_step_is_view(p, st))
            continue;
        int32_t out = st->outputs[0];
        if (f->written[out] || f->is_input[out] || f->viewed[out]) {
            char step[160];
            return FLOW_ERROR("%s makes tensor %d '%s', which is %s",
                              reader_label(p, s, 0, step, sizeof step),
                              (int)out, name_of(p, out),
                              f->is_input[out] ? "a graph input"
                                               : "made by another step too");
        }
        f->viewed[out] = 1;
        parent[out] = st->inputs[0];
    }
    return DFG_OK;
}

/* def[]: parent links followed to their end, each tensor walked once;
 * views of views that form a cycle are refused. */
static dfg_status find_definitions(flow *f)
{
    enum { UNKNOWN = -1, VISITING = -2 };
    const dfg_program *p = f->p;
    const int32_t *parent = f->parent;
    dfg_status status = find_parents(f);
    for (int32_t i = 0; i < p->n_tensors; i++)
        f->def[i] = UNKNOWN;
    for (int32_t i = 0; i < p->n_tensors && status == DFG_OK; i++) {
        int32_t t = i;
        while (f->def[t] == UNKNOWN && parent[t] >= 0) {
            f->def[t] = VISITING;
            t = parent[t];
        }
        if (f->def[t] == VISITING)
            return FLOW_ERROR("tensor %d '%s' is a view of itself", (int)t,
                              name_of(p, t));
        if (f->def[t] == UNKNOWN)
            f->def[t] = t;
        for (int32_t x = i; f->def[x] == VISITING; x = parent[x])
            f->def[x] = f->def[t];
    }
    for (int32_t i = 0; i < p->n_tensors; i++)
        f->klass[i] = is_slot_writer(f, i) ? f->roots[i] : i;
    return status;
}

static void write_tensor(flow *f, int32_t t)
{
    const dfg_program_tensor *x = &f->p->tensors[t];
    if (in_arena(f->p, t))
        dfg_arena_owners_write(&f->owners, x->offset, x->offset + x->bytes, t,
                               f->klass[t]);
}

/* Tensor t, read at step s (or as graph output k when s is n_steps), must
 * find its definition's value in every byte. */
static dfg_status check_read(flow *f, int32_t s, int32_t k, int32_t t)
{
    const dfg_program *p = f->p;
    const dfg_program_tensor *x = &p->tensors[t];
    int32_t d = f->def[t];
    int assembled = !f->written[d] && !f->is_input[d];
    int32_t found = dfg_arena_owners_mismatch(
        &f->owners, x->offset, x->offset + x->bytes, d, assembled);
    if (found == DFG_OWNER_MATCH)
        return DFG_OK;
    char reader[160];
    reader_label(p, s, k, reader, sizeof reader);
    if (f->writer[d] >= s)
        return FLOW_ERROR("%s reads tensor %d '%s' before step %d writes it",
                          reader, (int)t, name_of(p, t), (int)f->writer[d]);
    if (assembled) /* found: the class of a byte not written into d */
        return FLOW_ERROR("%s reads tensor %d '%s', but no step writes %s",
                          reader, (int)t, name_of(p, t),
                          found == DFG_OWNER_NONE ? "its bytes"
                                                  : "all of its bytes");
    if (found == DFG_OWNER_NONE)
        return FLOW_ERROR("%s reads tensor %d '%s', whose bytes no step has "
                          "written", reader, (int)t, name_of(p, t));
    char since[64];
    if (f->is_input[d])
        snprintf(since, sizeof since, "graph input %d", (int)d);
    else
        snprintf(since, sizeof since, "written by step %d", (int)f->writer[d]);
    return FLOW_ERROR("%s reads tensor %d '%s' (%s), but tensor %d '%s' was "
                      "written over its bytes since", reader, (int)t,
                      name_of(p, t), since, (int)found, name_of(p, found));
}

/* 1 if the step reads input j's value. The data-parallel steps name
 * bytes they do not read (dfg_program_verify_buckets checks their
 * layout): all_reduce_wait lists the bucket's gradients after the bucket
 * only to hand their bytes on, which the bucket holds since
 * all_reduce_start; all_gather_weights gathers the shards into the
 * bucket's bytes (its input 2). */
static int reads_input(const dfg_program_step *st, int32_t j)
{
    if (st->op == DFG_OP_ALL_REDUCE_WAIT)
        return j == 0;
    if (st->op == DFG_OP_ALL_GATHER_WEIGHTS)
        return j != 2;
    return 1;
}

static dfg_status run_steps(flow *f)
{
    const dfg_program *p = f->p;
    dfg_status status = DFG_OK;
    for (int32_t k = 0; k < p->n_inputs; k++)
        write_tensor(f, p->inputs[k]);
    for (int32_t s = 0; s < p->n_steps && status == DFG_OK; s++) {
        const dfg_program_step *st = &p->steps[s];
        if (dfg_program_step_is_view(p, st))
            continue; /* skipped at run time */
        for (int32_t j = 0; j < st->n_inputs && status == DFG_OK; j++)
            if (in_arena(p, st->inputs[j]) && reads_input(st, j))
                status = check_read(f, s, j, st->inputs[j]);
        for (int32_t j = 0; j < st->n_outputs && status == DFG_OK; j++)
            write_tensor(f, st->outputs[j]);
        if (st->workspace >= 0)
            write_tensor(f, st->workspace);
    }
    for (int32_t k = 0; k < p->n_outputs && status == DFG_OK; k++)
        if (in_arena(p, p->outputs[k]))
            status = check_read(f, p->n_steps, k, p->outputs[k]);
    return status;
}

static dfg_status track_arena(flow *f)
{
    const dfg_program *p = f->p;
    int64_t *offsets = dfg_alloc(&p->allocator, 2 * ((size_t)p->n_tensors + 1) *
                                                  sizeof *offsets);
    if (!offsets)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "out of memory checking the dataflow of %d tensors",
                         (int)p->n_tensors);
    int32_t n = 0;
    for (int32_t i = 0; i < p->n_tensors; i++)
        if (in_arena(p, i)) {
            offsets[n++] = p->tensors[i].offset;
            offsets[n++] = p->tensors[i].offset + p->tensors[i].bytes;
        }
    dfg_status status = dfg_arena_owners_init(&f->owners, offsets, n,
                                              &p->allocator);
    dfg_free(&p->allocator, offsets);
    return status;
}

dfg_status dfg_program_check_dataflow(const dfg_program *p)
{
    size_t n = (size_t)p->n_tensors + 1;
    const dfg_allocator *a = &p->allocator;
    int32_t *roots = dfg_alloc(a, n * sizeof *roots);
    flow f = {.p = p, .roots = roots,
              .writer = dfg_alloc(a, n * sizeof *f.writer),
              .def = dfg_alloc(a, n * sizeof *f.def),
              .klass = dfg_alloc(a, n * sizeof *f.klass),
              .parent = dfg_alloc(a, n * sizeof *f.parent),
              .written = dfg_calloc(a, n, 1), .is_input = dfg_calloc(a, n, 1),
              .viewed = dfg_calloc(a, n, 1)};
    dfg_status status = DFG_OK;
    if (!f.writer || !f.def || !f.klass || !f.parent || !f.written ||
        !f.is_input || !f.viewed || !roots)
        status = dfg_error(DFG_ERR_OUT_OF_MEMORY,
                           "out of memory checking the dataflow of %d tensors",
                           (int)p->n_tensors);
    if (status == DFG_OK)
        status = dfg_program_alias_roots(p, roots);
    for (size_t i = 0; status == DFG_OK && i < n; i++)
        f.writer[i] = -1;
    if (status == DFG_OK)
        status = find_writers(&f);
    if (status == DFG_OK)
        status = find_definitions(&f);
    if (status == DFG_OK)
        status = track_arena(&f);
    if (status == DFG_OK)
        status = run_steps(&f);
    dfg_arena_owners_free(&f.owners);
    dfg_free(a, f.writer);
    dfg_free(a, f.def);
    dfg_free(a, f.klass);
    dfg_free(a, f.written);
    dfg_free(a, f.is_input);
    dfg_free(a, f.viewed);
    dfg_free(a, f.parent);
    dfg_free(a, roots);
    return status;
}
