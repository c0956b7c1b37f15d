/* Writing program files (docs/program-format.md): each section is built in
 * its own buffer, then the header, the section table with each section's
 * offset, size and CRC-32, and the sections are laid out in one buffer. */
#include <stdio.h>
#include <string.h>
#include "crc32.h"
#include "dfg/atomic_file.h"
#include "error.h"
#include "memory.h"
#include "program_format.h"

typedef struct section_bytes {
    dfg_file_section type;
    const uint8_t *data;
    size_t size;
} section_bytes;

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
    }
}

/* Header, section table and the sections, each aligned as
 * dfg_file_section_alignment says. */
static void assemble(dfg_byte_writer *out, uint32_t version,
                     const section_bytes *sections, int n_sections)
{
    size_t offset = DFG_FILE_HEADER_BYTES +
                    (size_t)n_sections * DFG_FILE_SECTION_ENTRY_BYTES;
    dfg_byte_writer table;
    dfg_byte_writer_init(&table, &out->allocator);
    for (int i = 0; i < n_sections; i++) {
        offset = (size_t)dfg_align_up(
            (int64_t)offset,
            (int64_t)dfg_file_section_alignment(version, sections[i].type));
        dfg_write_u32(&table, (uint32_t)sections[i].type);
        dfg_write_u32(&table, 0);
        dfg_write_u64(&table, offset);
        dfg_write_u64(&table, sections[i].size);
        dfg_write_u32(&table, dfg_crc32(sections[i].data, sections[i].size));
        dfg_write_u32(&table, 0);
        offset += sections[i].size;
    }
    dfg_write_bytes(out, DFG_FILE_MAGIC, 4);
    dfg_write_u32(out, version);
    dfg_write_u32(out, (uint32_t)n_sections);
    dfg_write_u32(out, table.failed ? 0 : dfg_crc32(table.data, table.size));
    dfg_write_u64(out, offset); /* the file's size */
    dfg_write_bytes(out, table.data, table.size);
    out->failed |= table.failed;
    dfg_byte_writer_dispose(&table);
    for (int i = 0; i < n_sections; i++) {
        dfg_write_align(out,
                        dfg_file_section_alignment(version, sections[i].type));
        dfg_write_bytes(out, sections[i].data, sections[i].size);
    }
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
    enum { STRINGS, TENSORS, STEPS, IO, PLAN, N_BUILT };
    dfg_byte_writer w[N_BUILT];
    for (int i = 0; i < N_BUILT; i++)
        dfg_byte_writer_init(&w[i], allocator);
    /* Offset 0 holds the empty string, so the section is never empty. */
    put_string(&w[STRINGS], "");
    encode_tensors(p, &w[TENSORS], &w[STRINGS]);
    encode_steps(p, version, &w[STEPS], &w[STRINGS]);
    encode_io(p, &w[IO]);
    encode_plan(p, version, &w[PLAN]);
    size_t weights_bytes = (size_t)p->region_bytes[DFG_REGION_WEIGHTS];
    dfg_allocator a = dfg_allocator_or_default(allocator);
    uint8_t *weights = dfg_alloc(&a, weights_bytes + 1);
    if (weights)
        dfg_program_gather_weights(p, weights);

    const section_bytes sections[] = {
        {DFG_SECTION_STRINGS, w[STRINGS].data, w[STRINGS].size},
        {DFG_SECTION_TENSORS, w[TENSORS].data, w[TENSORS].size},
        {DFG_SECTION_STEPS, w[STEPS].data, w[STEPS].size},
        {DFG_SECTION_IO, w[IO].data, w[IO].size},
        {DFG_SECTION_PLAN, w[PLAN].data, w[PLAN].size},
        {DFG_SECTION_WEIGHTS, weights, weights_bytes},
    };
    dfg_byte_writer out;
    dfg_byte_writer_init(&out, allocator);
    int failed = !weights;
    for (int i = 0; i < N_BUILT; i++)
        failed |= w[i].failed;
    if (!failed)
        assemble(&out, version, sections, (int)(sizeof sections / sizeof sections[0]));
    for (int i = 0; i < N_BUILT; i++)
        dfg_byte_writer_dispose(&w[i]);
    dfg_free(&a, weights);
    if (failed || out.failed) {
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
    uint8_t *data = NULL;
    size_t size = 0;
    dfg_status status = dfg_program_serialize(program, &program->allocator,
                                              &data, &size);
    if (status != DFG_OK)
        return status;
    /* Never in place: a process serving the old file has it mapped. */
    status = dfg_write_file_atomically(path, data, size);
    dfg_free(&program->allocator, data);
    return status;
}
