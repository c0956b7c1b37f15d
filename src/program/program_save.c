/* Writing program files (docs/program-format.md): each section but the
 * weights is built in its own buffer; then the header, the section table
 * with each section's offset, size and CRC-32, and the sections are put,
 * in order, into a buffer (dfg_program_serialize) or straight into the
 * file (dfg_program_save). The weights section is put from where the
 * weights live (the graph's buffers, a mapped file), never gathered into
 * a copy first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dfg/atomic_file.h"
#include "program/program_format.h"
#include "util/crc32.h"
#include "util/error.h"
#include "util/memory.h"

/* A section: its bytes, or for the weights (data NULL) the program's
 * weight tensors in offset order. */
/* The sections built in buffers, in file order; the weights follow. */
enum { STRINGS, TENSORS, STEPS, IO, PLAN, N_BUILT };

typedef struct section_bytes {
    dfg_file_section type;
    const uint8_t *data;
    size_t size;
    uint32_t crc;
} section_bytes;

/* Where bytes go: a growing buffer, a file's stream, or (neither) only a
 * running CRC-32. */
typedef struct sink {
    dfg_byte_writer *buffer;
    FILE *file;
    uint32_t crc;
    uint64_t size; /* bytes put so far */
} sink;

static const uint8_t zeros[4096];

/* Puts size bytes from data, or zeros where data is NULL. */
static void put(sink *s, const void *data, size_t size)
{
    while (size > 0) {
        size_t n = data || size < sizeof zeros ? size : sizeof zeros;
        const void *from = data ? data : zeros;
        if (s->buffer)
            dfg_write_bytes(s->buffer, from, n);
        else if (s->file)
            fwrite(from, 1, n, s->file); /* an error stays in the stream */
        else
            s->crc = dfg_crc32_extend(s->crc, from, n);
        s->size += n;
        size -= n;
    }
}

/* Appends a NUL-terminated name to the strings section; returns its
 * offset there. */
static uint32_t put_string(dfg_byte_writer *strings, const char *s)
{
    uint32_t offset = (uint32_t)strings->size;
    const char *text = s ? s : "";
    dfg_write_bytes(strings, text, strlen(text) + 1);
    return offset;
}

static void encode_tensors(const dfg_program *p, dfg_byte_writer *w,
                           dfg_byte_writer *strings)
{
    dfg_write_u32(w, (uint32_t)p->n_tensors);
    dfg_write_u32(w, 0);
    for (int32_t i = 0; i < p->n_tensors; i++) {
        const dfg_program_tensor *t = &p->tensors[i];
        dfg_write_u32(w, put_string(strings, t->name));
        dfg_write_u32(w, (uint32_t)t->kind);
        dfg_write_u32(w, (uint32_t)t->region);
        dfg_write_u32(w, (uint32_t)t->type.dtype);
        dfg_write_i32(w, t->type.rank);
        dfg_write_u32(w, (uint32_t)t->type.layout); /* 0 before version 5 */
        for (int32_t d = 0; d < DFG_MAX_RANK; d++)
            dfg_write_i64(w, d < t->type.rank ? t->type.shape[d] : 0);
        dfg_write_i64(w, t->bytes);
        dfg_write_i64(w, t->offset);
        dfg_write_i32(w, t->first_step);
        dfg_write_i32(w, t->last_step);
        dfg_write_i32(w, t->alias_of);
        dfg_write_u32(w, 0);
    }
}

static void encode_steps(const dfg_program *p, uint32_t version,
                         dfg_byte_writer *w, dfg_byte_writer *strings)
{
    dfg_write_u32(w, (uint32_t)p->n_steps);
    dfg_write_u32(w, 0);
    for (int32_t i = 0; i < p->n_steps; i++) {
        const dfg_program_step *st = &p->steps[i];
        dfg_write_u32(w, (uint32_t)st->op);
        dfg_write_u32(w, put_string(strings, st->name));
        dfg_write_u32(w, (uint32_t)st->n_inputs);
        dfg_write_u32(w, (uint32_t)st->n_outputs);
        dfg_write_i32(w, st->workspace);
        dfg_write_u32(w, 0);
        dfg_write_i64(w, st->flops);
        for (int32_t j = 0; j < st->n_inputs; j++)
            dfg_write_i32(w, st->inputs[j]);
        for (int32_t j = 0; j < st->n_outputs; j++)
            dfg_write_i32(w, st->outputs[j]);
        dfg_attrs_encode(w, version, &st->attrs);
    }
}

static void encode_io(const dfg_program *p, dfg_byte_writer *w)
{
    dfg_write_u32(w, (uint32_t)p->n_inputs);
    dfg_write_u32(w, (uint32_t)p->n_outputs);
    for (int32_t i = 0; i < p->n_inputs; i++)
        dfg_write_i32(w, p->inputs[i]);
    for (int32_t i = 0; i < p->n_outputs; i++)
        dfg_write_i32(w, p->outputs[i]);
}

static void encode_plan(const dfg_program *p, uint32_t version,
                        dfg_byte_writer *w)
{
    const dfg_plan_stats *s = &p->stats;
    for (int r = 0; r < DFG_REGION_COUNT; r++)
        dfg_write_i64(w, p->region_bytes[r]);
    dfg_write_u64(w, s->arena_bytes);
    dfg_write_u64(w, s->lower_bound_bytes);
    dfg_write_u64(w, s->no_reuse_bytes);
    dfg_write_u64(w, s->weights_bytes);
    dfg_write_u64(w, s->alignment);
    dfg_write_u32(w, (uint32_t)s->planner);
    dfg_write_u32(w, (uint32_t)s->verified);
    dfg_write_i32(w, s->n_steps);
    dfg_write_i32(w, s->n_tensors);
    dfg_write_u64(w, s->recorded_lower_bound_bytes);
    dfg_write_bytes(w, p->workspace_rule, sizeof p->workspace_rule);
    if (version >= 5u) {
        dfg_write_bytes(w, p->layout_isa, sizeof p->layout_isa);
        dfg_write_u32(w, dfg_program_math_flags(p));
        dfg_write_u32(w, 0);                       /* reserved */
        dfg_write_u64(w, s->op_by_op_lower_bound_bytes);
        dfg_write_i64(w, s->tiling_extra_flops);
        dfg_write_i32(w, s->tiled_regions);
        dfg_write_i32(w, s->tiles);
    }
}

/* The weights region as the plan lays it out: each weight tensor's data
 * at its offset, zeros elsewhere. Tensors that overlap in the region hold
 * the same bytes there (a loaded file's views of its own bytes; a
 * compiled program's views are aliases), so what an earlier one put is
 * not put again. */
typedef struct weight_at {
    int64_t offset;
    int32_t tensor;
} weight_at;

static int by_offset(const void *a, const void *b)
{
    const weight_at *x = a, *y = b;
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    return (x->tensor > y->tensor) - (x->tensor < y->tensor);
}

/* The weight tensors with bytes of their own, in offset order (allocated
 * with allocator; *n of them); NULL when out of memory. */
static weight_at *weights_in_order(const dfg_program *p,
                                   const dfg_allocator *allocator, int32_t *n)
{
    weight_at *order = dfg_calloc(allocator, (size_t)p->n_tensors + 1,
                                  sizeof *order);
    *n = 0;
    for (int32_t i = 0; order && i < p->n_tensors; i++) {
        const dfg_program_tensor *t = &p->tensors[i];
        if (t->region == DFG_REGION_WEIGHTS && t->alias_of < 0 && t->data &&
            t->bytes > 0)
            order[(*n)++] = (weight_at){t->offset, i};
    }
    if (order)
        qsort(order, (size_t)*n, sizeof *order, by_offset);
    return order;
}

static void put_weights(sink *s, const dfg_program *p,
                        const weight_at *order, int32_t n)
{
    int64_t at = 0;
    for (int32_t k = 0; k < n; k++) {
        const dfg_program_tensor *t = &p->tensors[order[k].tensor];
        int64_t end = t->offset + t->bytes;
        if (end <= at)
            continue;
        if (t->offset > at) {
            put(s, NULL, (size_t)(t->offset - at));
            at = t->offset;
        }
        put(s, (const uint8_t *)t->data + (at - t->offset), (size_t)(end - at));
        at = end;
    }
    put(s, NULL, (size_t)(p->region_bytes[DFG_REGION_WEIGHTS] - at));
}

/* A program ready to put: its sections but the weights encoded, and its
 * weight tensors in order. */
typedef struct encoded {
    const dfg_program *program;
    uint32_t version;
    dfg_allocator allocator;
    dfg_byte_writer w[N_BUILT];
    weight_at *weights;
    int32_t n_weights;
} encoded;

static void encoded_dispose(encoded *e)
{
    for (int i = 0; i < N_BUILT; i++)
        dfg_byte_writer_dispose(&e->w[i]);
    dfg_free(&e->allocator, e->weights);
}

static dfg_status check_version(const dfg_program *p, uint32_t version)
{
    if (p->weights_released)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_program_serialize: the program belongs to a "
                         "session that took it over "
                         "(dfg_session_create_owning), whose kernels hold its "
                         "weights: save it before creating that session");
    if (version < DFG_FILE_OLDEST_VERSION || version > DFG_FILE_VERSION)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_program_serialize: version %u, this build "
                         "writes versions %u to %u", version,
                         DFG_FILE_OLDEST_VERSION, DFG_FILE_VERSION);
    for (int32_t i = 0; i < p->n_steps; i++)
        if (dfg_file_version_of_step(&p->steps[i]) > version)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "dfg_program_serialize: step %d (%s) needs file "
                             "version %u", (int)i,
                             dfg_op_get(p->steps[i].op)->name,
                             dfg_file_version_of_step(&p->steps[i]));
    for (int32_t i = 0; version < 5u && i < p->n_tensors; i++)
        if (p->tensors[i].type.layout != DFG_LAYOUT_PLAIN)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "dfg_program_serialize: tensor '%s' is laid out "
                             "%s, which needs file version 5",
                             p->tensors[i].name,
                             dfg_layout_name(p->tensors[i].type.layout));
    if (version < 5u && dfg_program_math_flags(p) != 0u)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_program_serialize: precision %s needs file "
                         "version 5", p->allow_tf32 ? "tf32"
                                      : dfg_dtype_name(p->half_products));
    return DFG_OK;
}

static dfg_status encode(const dfg_program *p, uint32_t version,
                         const dfg_allocator *allocator, encoded *e)
{
    memset(e, 0, sizeof *e);
    e->program = p;
    e->version = version;
    e->allocator = dfg_allocator_or_default(allocator);
    dfg_status st = check_version(p, version);
    if (st != DFG_OK)
        return st;
    for (int i = 0; i < N_BUILT; i++)
        dfg_byte_writer_init(&e->w[i], &e->allocator);
    /* Offset 0 holds the empty string, so the section is never empty. */
    put_string(&e->w[STRINGS], "");
    encode_tensors(p, &e->w[TENSORS], &e->w[STRINGS]);
    encode_steps(p, version, &e->w[STEPS], &e->w[STRINGS]);
    encode_io(p, &e->w[IO]);
    encode_plan(p, version, &e->w[PLAN]);
    e->weights = weights_in_order(p, &e->allocator, &e->n_weights);
    int failed = !e->weights;
    for (int i = 0; i < N_BUILT; i++)
        failed |= e->w[i].failed;
    if (!failed)
        return DFG_OK;
    encoded_dispose(e);
    return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                     "out of memory while serialising a program");
}

/* Puts the header, the section table and the sections, each aligned as
 * dfg_file_section_alignment says; 0, or -1 when out of memory. */
static int assemble(sink *out, const encoded *e)
{
    static const dfg_file_section types[] = {
        DFG_SECTION_STRINGS, DFG_SECTION_TENSORS, DFG_SECTION_STEPS,
        DFG_SECTION_IO, DFG_SECTION_PLAN, DFG_SECTION_WEIGHTS,
    };
    enum { N = (int)(sizeof types / sizeof types[0]) };
    section_bytes sections[N];
    for (int i = 0; i < N; i++) {
        sections[i] = (section_bytes){types[i], NULL, 0, 0};
        if (i < N_BUILT) {
            sections[i].data = e->w[i].data;
            sections[i].size = e->w[i].size;
            sections[i].crc = dfg_crc32(e->w[i].data, e->w[i].size);
        } else {
            sink crc = {0};
            put_weights(&crc, e->program, e->weights, e->n_weights);
            sections[i].size = (size_t)crc.size;
            sections[i].crc = crc.crc;
        }
    }
    size_t offset = DFG_FILE_HEADER_BYTES + (size_t)N * DFG_FILE_SECTION_ENTRY_BYTES;
    dfg_byte_writer table;
    dfg_byte_writer_init(&table, &e->allocator);
    for (int i = 0; i < N; i++) {
        offset = (size_t)dfg_align_up(
            (int64_t)offset,
            (int64_t)dfg_file_section_alignment(e->version, sections[i].type));
        dfg_write_u32(&table, (uint32_t)sections[i].type);
        dfg_write_u32(&table, 0);
        dfg_write_u64(&table, offset);
        dfg_write_u64(&table, sections[i].size);
        dfg_write_u32(&table, sections[i].crc);
        dfg_write_u32(&table, 0);
        offset += sections[i].size;
    }
    dfg_byte_writer header;
    dfg_byte_writer_init(&header, &e->allocator);
    dfg_write_bytes(&header, DFG_FILE_MAGIC, 4);
    dfg_write_u32(&header, e->version);
    dfg_write_u32(&header, (uint32_t)N);
    dfg_write_u32(&header, table.failed ? 0 : dfg_crc32(table.data, table.size));
    dfg_write_u64(&header, offset); /* the file's size */
    int failed = table.failed || header.failed;
    if (!failed) {
        put(out, header.data, header.size);
        put(out, table.data, table.size);
    }
    dfg_byte_writer_dispose(&header);
    dfg_byte_writer_dispose(&table);
    for (int i = 0; !failed && i < N; i++) {
        uint64_t alignment =
            dfg_file_section_alignment(e->version, sections[i].type);
        put(out, NULL, (size_t)((alignment - out->size % alignment) % alignment));
        if (sections[i].data)
            put(out, sections[i].data, sections[i].size);
        else
            put_weights(out, e->program, e->weights, e->n_weights);
    }
    return failed ? -1 : 0;
}

dfg_status dfg_program_serialize(const dfg_program *p,
                                 const dfg_allocator *allocator,
                                 uint8_t **data, size_t *size)
{
    return dfg_program_serialize_version(p, DFG_FILE_VERSION, allocator, data,
                                         size);
}

dfg_status dfg_program_serialize_version(const dfg_program *p,
                                         uint32_t version,
                                         const dfg_allocator *allocator,
                                         uint8_t **data, size_t *size)
{
    if (!p || !data || !size)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_program_serialize: program, data and size must "
                         "not be NULL");
    encoded e;
    dfg_status st = encode(p, version, allocator, &e);
    if (st != DFG_OK)
        return st;
    dfg_byte_writer out;
    dfg_byte_writer_init(&out, allocator);
    sink s = {.buffer = &out};
    int failed = assemble(&s, &e) != 0 || out.failed;
    encoded_dispose(&e);
    if (failed) {
        dfg_byte_writer_dispose(&out);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "out of memory while serialising a program");
    }
    *data = dfg_byte_writer_release(&out, size);
    return DFG_OK;
}

dfg_status dfg_program_save(const dfg_program *program, const char *path)
{
    if (!program || !path)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_program_save: program and path must not be NULL");
    encoded e;
    dfg_status st = encode(program, DFG_FILE_VERSION, &program->allocator, &e);
    if (st != DFG_OK)
        return st;
    /* Never in place: a process serving the old file has it mapped. */
    dfg_atomic_file *file;
    st = dfg_atomic_file_open(path, &file);
    if (st == DFG_OK) {
        sink s = {.file = dfg_atomic_file_stream(file)};
        if (assemble(&s, &e) == 0) {
            st = dfg_atomic_file_commit(file); /* reports a failed write */
        } else {
            dfg_atomic_file_discard(file);
            st = dfg_error(DFG_ERR_OUT_OF_MEMORY,
                           "out of memory while saving a program");
        }
    }
    encoded_dispose(&e);
    return st;
}
