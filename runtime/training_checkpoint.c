/* Training checkpoints (include/dfg/training_checkpoint.h): the header,
 * its checks, and the weights region between a session and a file. */
#include "dfg/training_checkpoint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dfg/atomic_file.h"
#include "dfg/regular_file.h"
#include "runtime/session_state.h"
#include "util/byte_reader.h"
#include "util/byte_writer.h"
#include "util/crc32.h"
#include "util/error.h"
#include "util/memory.h"

#define HEADER_BYTES 64
#define VERSION 1
static const char magic[8] = "DFGCKPT";

/* CRC-32 of every weights-region tensor's name, type and place: a
 * checkpoint fits a session only if its program lays out the same
 * weights the same way. */
static uint32_t fingerprint(const dfg_program *p)
{
    dfg_byte_writer w;
    dfg_byte_writer_init(&w, &p->allocator);
    for (int32_t i = 0; i < p->n_tensors; i++) {
        const dfg_program_tensor *t = &p->tensors[i];
        if (t->region != DFG_REGION_WEIGHTS)
            continue;
        dfg_write_bytes(&w, t->name, strlen(t->name) + 1);
        dfg_write_i32(&w, (int32_t)t->type.dtype);
        dfg_write_i32(&w, t->type.rank);
        for (int32_t d = 0; d < t->type.rank; d++)
            dfg_write_i64(&w, t->type.shape[d]);
        dfg_write_i64(&w, t->offset);
    }
    size_t size;
    uint8_t *bytes = dfg_byte_writer_release(&w, &size);
    /* Out of memory: 0, which a saved program's fingerprint is not
     * likely to be; the load then refuses rather than accepts. */
    uint32_t crc = bytes ? dfg_crc32(bytes, size) : 0;
    dfg_free(&p->allocator, bytes);
    return crc;
}

typedef struct span {
    int64_t begin, end;
} span;

static int by_begin(const void *a, const void *b)
{
    int64_t x = ((const span *)a)->begin, y = ((const span *)b)->begin;
    return (x > y) - (x < y);
}

/* Zeroes the bytes of region (a copy of p's weights region) that no
 * tensor holds, the alignment gaps, which the backend never wrote: the
 * same training state must give the same file. */
static dfg_status zero_gaps(const dfg_program *p, uint8_t *region,
                            int64_t bytes)
{
    span *spans = dfg_calloc(&p->allocator, (size_t)p->n_tensors + 1,
                             sizeof *spans);
    if (!spans)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "dfg_checkpoint_save: out of "
                         "memory");
    int32_t n = 0;
    for (int32_t i = 0; i < p->n_tensors; i++)
        if (p->tensors[i].region == DFG_REGION_WEIGHTS)
            spans[n++] = (span){p->tensors[i].offset,
                                p->tensors[i].offset + p->tensors[i].bytes};
    qsort(spans, (size_t)n, sizeof *spans, by_begin);
    int64_t at = 0;
    for (int32_t i = 0; i <= n; i++) {
        int64_t begin = i < n ? spans[i].begin : bytes;
        if (begin > at && begin <= bytes)
            memset(region + at, 0, (size_t)(begin - at));
        if (i < n && spans[i].end > at)
            at = spans[i].end;
    }
    dfg_free(&p->allocator, spans);
    return DFG_OK;
}

/* The session's own weights region, or an error naming the call. */
static dfg_status region_of(dfg_session *s, const char *call, size_t *bytes)
{
    if (!s)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "%s: session is NULL", call);
    *bytes = (size_t)s->program->region_bytes[DFG_REGION_WEIGHTS];
    if (s->shares_weights || !s->regions[DFG_REGION_WEIGHTS] || *bytes == 0)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "%s: the session has no weights region of its own: "
                         "not a training session", call);
    return DFG_OK;
}

static void write_header(uint8_t *h, uint64_t bytes, uint32_t region_crc,
                         uint32_t print, const dfg_checkpoint_position *at)
{
    dfg_byte_writer w;
    dfg_byte_writer_init(&w, NULL);
    dfg_write_bytes(&w, magic, sizeof magic);
    dfg_write_u32(&w, VERSION);
    dfg_write_u32(&w, 0);
    dfg_write_u64(&w, bytes);
    dfg_write_u32(&w, region_crc);
    dfg_write_u32(&w, print);
    dfg_write_i64(&w, at->epoch);
    dfg_write_i64(&w, at->step);
    dfg_write_u64(&w, at->rng_state);
    dfg_write_u64(&w, at->seed);
    /* Out of memory leaves a zero header, which no load accepts. */
    memset(h, 0, HEADER_BYTES);
    if (!w.failed && w.size == HEADER_BYTES) {
        dfg_patch_u32(&w, 12, dfg_crc32(w.data, HEADER_BYTES));
        memcpy(h, w.data, HEADER_BYTES);
    }
    dfg_byte_writer_dispose(&w);
}

dfg_status dfg_checkpoint_save(dfg_session *s,
                               const dfg_checkpoint_position *position,
                               const char *path)
{
    size_t bytes = 0;
    dfg_status st = region_of(s, "dfg_checkpoint_save", &bytes);
    if (st != DFG_OK)
        return st;
    if (!position || !path)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_checkpoint_save: position and path must not be "
                         "NULL");
    uint8_t *region = dfg_alloc(&s->allocator, bytes);
    if (!region)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "dfg_checkpoint_save: out of "
                         "memory for a %zu-byte copy of the weights", bytes);
    /* The last run must have finished before the region is read. */
    st = s->backend->synchronize(s->context);
    if (st == DFG_OK)
        st = s->backend->download(s->context, region,
                                  s->regions[DFG_REGION_WEIGHTS], bytes);
    if (st == DFG_OK)
        st = zero_gaps(s->program, region, (int64_t)bytes);
    uint8_t header[HEADER_BYTES];
    write_header(header, bytes, dfg_crc32(region, bytes),
                 fingerprint(s->program), position);
    dfg_atomic_file *f = NULL;
    if (st == DFG_OK)
        st = dfg_atomic_file_open(path, &f);
    if (st == DFG_OK) {
        FILE *out = dfg_atomic_file_stream(f);
        fwrite(header, 1, HEADER_BYTES, out);
        fwrite(region, 1, bytes, out);
        /* A short write shows in ferror, which commit reports. */
        st = dfg_atomic_file_commit(f);
    }
    dfg_free(&s->allocator, region);
    return st == DFG_OK ? st : dfg_error_prefix(st, "checkpoint %s", path);
}

/* Checks the header h of a file of file_bytes against a session whose
 * region has `bytes` and whose program has fingerprint `print`. */
static dfg_status check_header(const uint8_t *h, long file_bytes,
                               size_t bytes, uint32_t print,
                               uint32_t *region_crc,
                               dfg_checkpoint_position *at)
{
    if (memcmp(h, magic, sizeof magic) != 0)
        return dfg_error(DFG_ERR_FORMAT, "not a dfg training checkpoint "
                         "(no DFGCKPT magic)");
    dfg_byte_reader r = dfg_byte_reader_make(h + 8, HEADER_BYTES - 8);
    uint32_t version = dfg_read_u32(&r), crc = dfg_read_u32(&r);
    if (version != VERSION)
        return dfg_error(DFG_ERR_FORMAT, "checkpoint version %u (this dfg "
                         "reads version %d)", version, VERSION);
    uint8_t zeroed[HEADER_BYTES];
    memcpy(zeroed, h, HEADER_BYTES);
    memset(zeroed + 12, 0, 4);
    if (dfg_crc32(zeroed, HEADER_BYTES) != crc)
        return dfg_error(DFG_ERR_FORMAT, "the checkpoint's header is "
                         "corrupted (CRC mismatch)");
    uint64_t saved = dfg_read_u64(&r);
    *region_crc = dfg_read_u32(&r);
    uint32_t saved_print = dfg_read_u32(&r);
    if (saved != bytes || saved_print != print)
        return dfg_error(DFG_ERR_FORMAT, "the checkpoint holds a %llu-byte "
                         "weights region of another program (this one's: "
                         "%zu bytes, fingerprint %08x, the file's %08x)",
                         (unsigned long long)saved, bytes, print, saved_print);
    if (file_bytes < 0 || (uint64_t)file_bytes != HEADER_BYTES + saved)
        return dfg_error(DFG_ERR_FORMAT, "the checkpoint is %ld bytes, its "
                         "header says %llu", file_bytes,
                         (unsigned long long)(HEADER_BYTES + saved));
    at->epoch = dfg_read_i64(&r);
    at->step = dfg_read_i64(&r);
    at->rng_state = dfg_read_u64(&r);
    at->seed = dfg_read_u64(&r);
    if (at->epoch < 0 || at->step < 0)
        return dfg_error(DFG_ERR_FORMAT, "the checkpoint's position is "
                         "negative (epoch %lld, step %lld)",
                         (long long)at->epoch, (long long)at->step);
    return DFG_OK;
}

/* Reads and checks the file into region (bytes), setting *at. */
static dfg_status read_checked(FILE *in, uint8_t *region, size_t bytes,
                               uint32_t print, dfg_checkpoint_position *at)
{
    uint8_t header[HEADER_BYTES];
    long file_bytes = -1;
    if (fseek(in, 0, SEEK_END) == 0)
        file_bytes = ftell(in);
    rewind(in);
    if (fread(header, 1, HEADER_BYTES, in) != HEADER_BYTES)
        return dfg_error(DFG_ERR_FORMAT, "the checkpoint is shorter than its "
                         "%d-byte header", HEADER_BYTES);
    uint32_t region_crc = 0;
    dfg_status st = check_header(header, file_bytes, bytes, print,
                                 &region_crc, at);
    if (st != DFG_OK)
        return st;
    if (fread(region, 1, bytes, in) != bytes)
        return dfg_error(DFG_ERR_IO, "the checkpoint could not be read");
    if (dfg_crc32(region, bytes) != region_crc)
        return dfg_error(DFG_ERR_FORMAT, "the checkpoint's weights are "
                         "corrupted (CRC mismatch)");
    return DFG_OK;
}

dfg_status dfg_checkpoint_load(dfg_session *s, const char *path,
                               uint64_t seed,
                               dfg_checkpoint_position *position)
{
    size_t bytes = 0;
    dfg_status st = region_of(s, "dfg_checkpoint_load", &bytes);
    if (st != DFG_OK)
        return st;
    if (!position || !path)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_checkpoint_load: position and path must not be "
                         "NULL");
    FILE *in;
    st = dfg_fopen_regular_file(path, &in);
    if (st != DFG_OK)
        return st;
    uint8_t *region = dfg_alloc(&s->allocator, bytes);
    dfg_checkpoint_position at;
    st = region ? read_checked(in, region, bytes, fingerprint(s->program), &at)
                : dfg_error(DFG_ERR_OUT_OF_MEMORY, "out of memory for a "
                            "%zu-byte weights region", bytes);
    fclose(in);
    if (st == DFG_OK && at.seed != seed)
        st = dfg_error(DFG_ERR_FORMAT, "the checkpoint was made with seed "
                       "%llu, not %llu: its run's data would differ",
                       (unsigned long long)at.seed, (unsigned long long)seed);
    if (st == DFG_OK)
        st = s->backend->upload(s->context, s->regions[DFG_REGION_WEIGHTS],
                                region, bytes);
    if (st == DFG_OK)
        st = s->backend->synchronize(s->context);
    /* The backend prepares again from the new weights (the copies it may
     * keep in other layouts), as dfg_session_copy_weights does. */
    if (st == DFG_OK)
        st = s->backend->prepare(s->context, s->steps, s->n_steps);
    dfg_free(&s->allocator, region);
    if (st == DFG_OK)
        *position = at;
    return st == DFG_OK ? st : dfg_error_prefix(st, "checkpoint %s", path);
}
