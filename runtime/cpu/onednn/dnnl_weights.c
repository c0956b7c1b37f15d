/* Reordered weights shared by the sessions that read the same plain bytes
 * (dnnl_weights.h). A list under one lock: a program has a few hundred
 * convs and matmuls at most, and the list is walked only while sessions
 * are made. */
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "runtime/cpu/onednn/dnnl_weights.h"
#include "util/error.h"
#include "util/memory.h"
#include "util/shared_bytes.h"

struct dfg_dnnl_weights {
    dfg_dnnl_weights *next;
    const void *plain;
    dnnl_memory_desc_t chosen;
    void *data;
    int64_t bytes;
    int64_t references;
    size_t plain_bytes; /* > 0: plain is a file's pages, to be dropped */
    int64_t source_bytes; /* the plain bytes the copy was made from */
    int shared;         /* 1: found by other callers of plain's bytes */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static dfg_dnnl_weights *entries; /* under lock */
static int64_t held_bytes;        /* under lock */
static int64_t replaced_bytes;    /* under lock: plain bytes of the entries */
/* under lock: the most bytes a copy being made held beside what stays
 * once it is made (its plain bytes not yet dropped, a transform's
 * staging), over every copy made in the process */
static int64_t largest_overlap;

static dfg_allocator shared_allocator(void)
{
    return dfg_allocator_or_default(NULL);
}

/* Reorders plain (plain_md) into data (chosen_md); -1 on failure. */
static int reorder(dnnl_engine_t engine, const dnnl_memory_desc_t *plain_md,
                   const void *plain, const dnnl_memory_desc_t *chosen_md,
                   void *data)
{
    dnnl_memory_t from = NULL, to = NULL;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_primitive_t primitive = NULL;
    dnnl_stream_t stream = NULL;
    int ok = dnnl_memory_create(&from, plain_md, engine, (void *)plain) ==
                 dnnl_success &&
             dnnl_memory_create(&to, chosen_md, engine, data) == dnnl_success &&
             dnnl_reorder_primitive_desc_create(&pd, plain_md, engine,
                                                chosen_md, engine, NULL) ==
                 dnnl_success &&
             dnnl_primitive_create(&primitive, pd) == dnnl_success &&
             dnnl_stream_create(&stream, engine, dnnl_stream_default_flags) ==
                 dnnl_success;
    if (ok) {
        dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
        ok = dnnl_primitive_execute(primitive, stream, 2, args) ==
                 dnnl_success &&
             dnnl_stream_wait(stream) == dnnl_success;
    }
    if (stream)
        dnnl_stream_destroy(stream);
    if (primitive)
        dnnl_primitive_destroy(primitive);
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    if (to)
        dnnl_memory_destroy(to);
    if (from)
        dnnl_memory_destroy(from);
    return ok ? 0 : -1;
}

/* Plain bytes reordered per slice, when they may leave memory as they
 * go: the copy and the plain bytes then never sum up over a whole large
 * weight (a fully connected layer's hundreds of MiB). */
#define SLICE_BYTES ((int64_t)4 << 20)

/* The dimension of md (blocked) whose stride is the largest: the
 * outermost, whose slices are contiguous bytes where md has no inner
 * blocks; -1 if none is. */
static int outer_dimension(const dnnl_memory_desc_t *md)
{
    if (md->format_kind != dnnl_blocked)
        return -1;
    int outer = -1;
    for (int d = 0; d < md->ndims; d++)
        if (md->dims[d] > 1 &&
            (outer < 0 || md->format_desc.blocking.strides[d] >
                              md->format_desc.blocking.strides[outer]))
            outer = d;
    return outer;
}

/* The product of md's inner blocks along dimension d (1 if none). */
static int64_t block_along(const dnnl_memory_desc_t *md, int d)
{
    int64_t block = 1;
    for (int i = 0; i < md->format_desc.blocking.inner_nblks; i++)
        if (md->format_desc.blocking.inner_idxs[i] == d)
            block *= md->format_desc.blocking.inner_blks[i];
    return block;
}

/* Indices a slice along a dimension of per_index bytes an index spans:
 * SLICE_BYTES' worth in whole blocks (its inner blocks along it), one
 * block at least. */
static int64_t slice_step(int64_t per_index, int64_t block)
{
    int64_t step = SLICE_BYTES / per_index / block * block;
    return step < block ? block : step;
}

/* *sub: the slice [at, at + n) along dimension d of md; -1 if oneDNN
 * cannot describe it. */
static int sub_along(const dnnl_memory_desc_t *md, int d, int64_t at,
                     int64_t n, dnnl_memory_desc_t *sub)
{
    dnnl_dims_t dims, offsets = {0};
    for (int i = 0; i < md->ndims; i++)
        dims[i] = md->dims[i];
    dims[d] = n;
    offsets[d] = at;
    return dnnl_memory_desc_init_submemory(sub, md, dims, offsets) ==
                   dnnl_success
               ? 0
               : -1;
}

/* The slice [at, at + n) along dimension d of plain_md and chosen_md;
 * -1 if oneDNN cannot describe it. */
static int slice(const dnnl_memory_desc_t *plain_md,
                 const dnnl_memory_desc_t *chosen_md, int d, int64_t at,
                 int64_t n, dnnl_memory_desc_t *from, dnnl_memory_desc_t *to)
{
    return sub_along(plain_md, d, at, n, from) == 0 &&
                   sub_along(chosen_md, d, at, n, to) == 0
               ? 0
               : -1;
}

/* 1 if oneDNN reorders the slice [at, at + n) along dimension d. */
static int slice_reorders(dnnl_engine_t engine,
                          const dnnl_memory_desc_t *plain_md,
                          const dnnl_memory_desc_t *chosen_md, int d,
                          int64_t at, int64_t n)
{
    dnnl_memory_desc_t from, to;
    dnnl_primitive_desc_t pd = NULL;
    int ok = slice(plain_md, chosen_md, d, at, n, &from, &to) == 0 &&
             dnnl_reorder_primitive_desc_create(&pd, &from, engine, &to,
                                                engine, NULL) == dnnl_success;
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    return ok;
}

/* Reorders plain into data (chosen_md) slice by slice, dropping plain's
 * pages as soon as every byte on them is copied, so that the plain bytes
 * and the copy never sum up over a whole large weight. The slices run
 * along the copy's outermost dimension, whose pages are then written one
 * slice after the other. Where that is plain's outermost too, each slice
 * of plain is contiguous and goes after its copy; where plain is a 2-D
 * matrix laid out the other way (a transposed product's weights), each
 * slice is a band of columns, and the pages of each row that lie wholly
 * in the columns done so far go. data must be zeroed (fresh pages from
 * copy_alloc, which cost nothing until written): slices leave the padding
 * of a partial block alone. 1 when the weight is one slice or
 * oneDNN refuses its slices (nothing done: the caller reorders the
 * whole), -1 on failure. */
static int reorder_dropping(dnnl_engine_t engine,
                            const dnnl_memory_desc_t *plain_md,
                            const void *plain,
                            const dnnl_memory_desc_t *chosen_md, void *data)
{
    int outer = outer_dimension(plain_md), d = outer_dimension(chosen_md);
    if (outer < 0 || d < 0 || plain_md->format_desc.blocking.inner_nblks ||
        (d != outer && (plain_md->ndims != 2 ||
                        plain_md->format_desc.blocking.strides[d] != 1)))
        return 1;
    /* rows along plain's outermost dimension, of row bytes each; a slice
     * of the copy covers [at, at + step) along d */
    int64_t extent = chosen_md->dims[d];
    int64_t row = plain_md->format_desc.blocking.strides[outer] *
                  (int64_t)sizeof(float);
    int64_t rows = d == outer ? 1 : plain_md->dims[outer];
    int64_t per_index = d == outer ? row : rows * (int64_t)sizeof(float);
    int64_t step = slice_step(per_index, block_along(chosen_md, d));
    int64_t last = (extent - 1) / step * step;
    /* Every slice but the last is the first's shape: check both. */
    if (step >= extent ||
        !slice_reorders(engine, plain_md, chosen_md, d, 0, step) ||
        !slice_reorders(engine, plain_md, chosen_md, d, last, extent - last))
        return 1;
    for (int64_t at = 0; at < extent; at += step) {
        int64_t n = extent - at < step ? extent - at : step;
        dnnl_memory_desc_t from, to;
        if (slice(plain_md, chosen_md, d, at, n, &from, &to) != 0 ||
            reorder(engine, &from, plain, &to, data) != 0)
            return -1;
        if (d == outer)
            dfg_drop_pages((const char *)plain + at * row, (size_t)(n * row));
        else /* columns [0, at + n) of every row are done */
            for (int64_t r = 0; r < rows; r++)
                dfg_drop_pages((const char *)plain + r * row,
                               (size_t)(at + n) * sizeof(float));
    }
    return 0;
}

/* bytes of zeroed memory for a copy (its pages written as it is made),
 * or NULL; freed by copy_free. */
static void *copy_alloc(size_t bytes)
{
    void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void copy_free(void *data, size_t bytes)
{
    if (data)
        munmap(data, bytes ? bytes : 1);
}

static dfg_dnnl_weights *find(const void *plain,
                              const dnnl_memory_desc_t *chosen_md)
{
    for (dfg_dnnl_weights *e = entries; e; e = e->next)
        if (e->shared && e->plain == plain &&
            dnnl_memory_desc_equal(&e->chosen, chosen_md))
            return e;
    return NULL;
}

/* Where an entry's bytes come from: plain (plain_bytes), turned by
 * transform (if any) into from_md's layout, then reordered. */
typedef struct weights_source {
    const dnnl_memory_desc_t *from_md;
    const void *plain;
    size_t plain_bytes;
    dfg_dnnl_weights_transform transform;
    int by_rows; /* transform's, as dfg_dnnl_weights_acquire_transformed */
} weights_source;

/* Transforms src straight into data (chosen_md, src's from_md) a slice
 * of dimension 0 at a time, dropping each slice's plain pages once it
 * is written: as reorder_dropping, for a transform that runs by rows.
 * 1 when the weight is one slice or chosen_md is not sliced along
 * dimension 0 (nothing done: the caller transforms the whole), -1 on
 * failure. */
static int transform_dropping(const weights_source *src,
                              const dnnl_memory_desc_t *chosen_md, void *data)
{
    int64_t rows = chosen_md->dims[0];
    if (!src->by_rows || rows < 2 || outer_dimension(chosen_md) != 0)
        return 1;
    int64_t row = (int64_t)src->plain_bytes / rows;
    int64_t step = slice_step(row, block_along(chosen_md, 0));
    if (step >= rows)
        return 1;
    for (int64_t at = 0; at < rows; at += step) {
        int64_t n = rows - at < step ? rows - at : step;
        dnnl_memory_desc_t to;
        if (sub_along(chosen_md, 0, at, n, &to) != 0)
            return at == 0 ? 1 : -1;
        const char *from = (const char *)src->plain + at * row;
        src->transform(from, &to, data);
        dfg_drop_pages(from, (size_t)(n * row));
    }
    return 0;
}

/* Reorders src's bytes, transformed first if it says so; -1 on failure. */
static int transform_reorder(dnnl_engine_t engine, const weights_source *src,
                             const dnnl_memory_desc_t *chosen_md, void *data)
{
    if (!src->transform)
        return reorder(engine, src->from_md, src->plain, chosen_md, data);
    if (dnnl_memory_desc_equal(src->from_md, chosen_md)) {
        /* Transformed straight into the chosen layout: no third copy. */
        src->transform(src->plain, src->from_md, data);
        return 0;
    }
    dfg_allocator a = shared_allocator();
    void *transformed = dfg_alloc(&a, dnnl_memory_desc_get_size(src->from_md));
    if (!transformed)
        return -1;
    src->transform(src->plain, src->from_md, transformed);
    int made = reorder(engine, src->from_md, transformed, chosen_md, data);
    dfg_free(&a, transformed);
    return made;
}

/* *out: a new entry (not yet listed) holding src reordered. */
static dfg_status make(dnnl_engine_t engine, const weights_source *src,
                       const dnnl_memory_desc_t *chosen_md, int drop_plain,
                       dfg_dnnl_weights **out)
{
    dfg_allocator a = shared_allocator();
    dfg_dnnl_weights *e = dfg_calloc(&a, 1, sizeof *e);
    size_t bytes = dnnl_memory_desc_get_size(chosen_md);
    if (e)
        e->data = copy_alloc(bytes);
    if (!e || !e->data) {
        dfg_free(&a, e);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "cpu backend: out of memory for %zu bytes of "
                         "reordered weights", bytes);
    }
    int straight = src->transform &&
                   dnnl_memory_desc_equal(src->from_md, chosen_md);
    int sliced = !drop_plain ? 1
                 : !src->transform
                     ? reorder_dropping(engine, src->from_md, src->plain,
                                        chosen_md, e->data)
                 : straight ? transform_dropping(src, chosen_md, e->data)
                            : 1;
    if (sliced < 0 ||
        (sliced > 0 &&
         transform_reorder(engine, src, chosen_md, e->data) != 0)) {
        copy_free(e->data, bytes);
        dfg_free(&a, e);
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "cpu backend: oneDNN could not reorder weights");
    }
    /* Sliced: a slice of plain at most beside the copy; whole: all of
     * it, with a transform's staging where it has one (as a session that
     * keeps plain would, were it dropped). */
    int64_t overlap =
        sliced == 0
            ? SLICE_BYTES
            : (int64_t)src->plain_bytes +
                  (src->transform && !straight
                       ? (int64_t)dnnl_memory_desc_get_size(src->from_md)
                       : 0);
    if (!drop_plain && overlap > SLICE_BYTES &&
        (!src->transform || (straight && src->by_rows)))
        overlap = SLICE_BYTES; /* it would have been sliced */
    if (overlap > largest_overlap)
        largest_overlap = overlap; /* make runs under lock */
    /* One tensor at a time: the plain pages go as soon as their copy is
     * made, so the two never sum up over the whole model. */
    if (drop_plain)
        dfg_drop_pages(src->plain, src->plain_bytes);
    e->plain = src->plain;
    e->plain_bytes = drop_plain ? src->plain_bytes : 0;
    e->source_bytes = (int64_t)src->plain_bytes;
    e->chosen = *chosen_md;
    e->bytes = (int64_t)bytes;
    *out = e;
    return DFG_OK;
}

static dfg_status acquire(dnnl_engine_t engine, const weights_source *src,
                          const dnnl_memory_desc_t *chosen_md, int shared,
                          int drop_plain, dfg_dnnl_weights **out, void **data)
{
    *out = NULL;
    *data = NULL;
    dfg_status status = DFG_OK;
    pthread_mutex_lock(&lock);
    dfg_dnnl_weights *e = shared ? find(src->plain, chosen_md) : NULL;
    if (!e) {
        status = make(engine, src, chosen_md, drop_plain, &e);
        if (status == DFG_OK) {
            e->shared = shared;
            held_bytes += e->bytes;
            replaced_bytes += (int64_t)src->plain_bytes;
            e->next = entries;
            entries = e;
        }
    }
    if (e)
        e->references++;
    pthread_mutex_unlock(&lock);
    if (status != DFG_OK)
        return status;
    *out = e;
    *data = e->data;
    return DFG_OK;
}

dfg_status dfg_dnnl_weights_acquire(dnnl_engine_t engine,
                                    const dnnl_memory_desc_t *plain_md,
                                    const void *plain,
                                    const dnnl_memory_desc_t *chosen_md,
                                    int shared, int drop_plain,
                                    dfg_dnnl_weights **out, void **data)
{
    weights_source src = {.from_md = plain_md,
                           .plain = plain,
                           .plain_bytes = dnnl_memory_desc_get_size(plain_md)};
    return acquire(engine, &src, chosen_md, shared, drop_plain, out, data);
}

dfg_status dfg_dnnl_weights_acquire_transformed(
    dnnl_engine_t engine, dfg_dnnl_weights_transform transform, int by_rows,
    const dnnl_memory_desc_t *transformed_md, const void *plain,
    size_t plain_bytes, const dnnl_memory_desc_t *chosen_md, int shared,
    int drop_plain, dfg_dnnl_weights **out, void **data)
{
    weights_source src = {.from_md = transformed_md,
                          .plain = plain,
                          .plain_bytes = plain_bytes,
                          .transform = transform,
                          .by_rows = by_rows};
    return acquire(engine, &src, chosen_md, shared, drop_plain, out, data);
}

void dfg_dnnl_weights_release(dfg_dnnl_weights *weights)
{
    if (!weights)
        return;
    pthread_mutex_lock(&lock);
    int last = --weights->references == 0;
    if (last) {
        dfg_dnnl_weights **link = &entries;
        while (*link != weights)
            link = &(*link)->next;
        *link = weights->next;
        held_bytes -= weights->bytes;
        replaced_bytes -= weights->source_bytes;
    }
    pthread_mutex_unlock(&lock);
    if (last) {
        dfg_allocator a = shared_allocator();
        copy_free(weights->data, (size_t)weights->bytes);
        dfg_free(&a, weights);
    }
}

void dfg_dnnl_weights_drop_plain(const dfg_dnnl_weights *weights)
{
    if (weights && weights->plain_bytes)
        dfg_drop_pages(weights->plain, weights->plain_bytes);
}

int64_t dfg_dnnl_weights_held_bytes(void)
{
    pthread_mutex_lock(&lock);
    int64_t bytes = held_bytes;
    pthread_mutex_unlock(&lock);
    return bytes;
}

void dfg_dnnl_weights_held(int64_t *copies, int64_t *plain,
                           int64_t *overlap)
{
    pthread_mutex_lock(&lock);
    *copies = held_bytes;
    *plain = replaced_bytes;
    *overlap = largest_overlap;
    pthread_mutex_unlock(&lock);
}
