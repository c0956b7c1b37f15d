/* Reading program files (docs/program-format.md).
 *
 * The file is untrusted: the header and section table are checked (bounds,
 * overlap, CRC-32) before any section is read, every count is bounded by
 * its section's size before anything is allocated, and every value is
 * range-checked as it is decoded. The decoded program then goes through
 * dfg_program_validate() (the runtime's assumptions) and
 * dfg_program_verify() (the memory plan) before the caller sees it. */
#include <string.h>
#include "program/program_format.h"
#include "util/crc32.h"
#include "util/error.h"
#include "util/memory.h"

#define FORMAT_ERROR(...) dfg_error(DFG_ERR_FORMAT, "program file: " __VA_ARGS__)

typedef struct file_sections {
    /* Indexed by dfg_file_section; each reader spans one section. */
    dfg_byte_reader section[DFG_SECTION_END];
    uint32_t version;
} file_sections;

static const char *section_name(uint32_t type)
{
    static const char *const names[DFG_SECTION_END] = {
        [DFG_SECTION_STRINGS] = "strings", [DFG_SECTION_TENSORS] = "tensors",
        [DFG_SECTION_STEPS] = "steps",     [DFG_SECTION_IO] = "io",
        [DFG_SECTION_PLAN] = "plan",       [DFG_SECTION_WEIGHTS] = "weights",
    };
    return type >= DFG_SECTION_STRINGS && type < DFG_SECTION_END ? names[type]
                                                                  : "?";
}

static dfg_status read_section_table(const uint8_t *data, size_t size,
                                     file_sections *out)
{
    if (size < DFG_FILE_HEADER_BYTES)
        return FORMAT_ERROR("%zu bytes, shorter than the %u-byte header", size,
                            DFG_FILE_HEADER_BYTES);
    if (memcmp(data, DFG_FILE_MAGIC, 4) != 0)
        return FORMAT_ERROR("not a dfg program (the magic is not \"DFGP\")");
    dfg_byte_reader r = dfg_byte_reader_make(data + 4, DFG_FILE_HEADER_BYTES - 4);
    uint32_t version = dfg_read_u32(&r);
    uint32_t n_sections = dfg_read_u32(&r);
    uint32_t table_crc = dfg_read_u32(&r);
    uint64_t file_size = dfg_read_u64(&r);
    if (version < DFG_FILE_OLDEST_VERSION || version > DFG_FILE_VERSION)
        return FORMAT_ERROR("version %u, this build reads versions %u to %u",
                            version, DFG_FILE_OLDEST_VERSION,
                            DFG_FILE_VERSION);
    out->version = version;
    if (file_size != size)
        return FORMAT_ERROR("the header says %llu bytes but there are %zu "
                            "(truncated or padded)",
                            (unsigned long long)file_size, size);
    if (n_sections < DFG_FILE_N_SECTIONS || n_sections > DFG_FILE_MAX_SECTIONS)
        return FORMAT_ERROR("%u sections, expected %d", n_sections,
                            (int)DFG_FILE_N_SECTIONS);
    size_t table_end = DFG_FILE_HEADER_BYTES +
                       (size_t)n_sections * DFG_FILE_SECTION_ENTRY_BYTES;
    if (table_end > size)
        return FORMAT_ERROR("the section table ends past the end of the file");
    const uint8_t *table = data + DFG_FILE_HEADER_BYTES;
    if (dfg_crc32(table, table_end - DFG_FILE_HEADER_BYTES) != table_crc)
        return FORMAT_ERROR("the section table's checksum does not match");

    uint64_t begin[DFG_SECTION_END] = {0}, end[DFG_SECTION_END] = {0};
    int seen[DFG_SECTION_END] = {0};
    r = dfg_byte_reader_make(table, table_end - DFG_FILE_HEADER_BYTES);
    for (uint32_t i = 0; i < n_sections; i++) {
        uint32_t type = dfg_read_u32(&r);
        uint32_t flags = dfg_read_u32(&r);
        uint64_t offset = dfg_read_u64(&r);
        uint64_t length = dfg_read_u64(&r);
        uint32_t crc = dfg_read_u32(&r);
        uint32_t reserved = dfg_read_u32(&r);
        if (type < DFG_SECTION_STRINGS || type >= DFG_SECTION_END)
            return FORMAT_ERROR("section %u has unknown type %u", i, type);
        if (seen[type])
            return FORMAT_ERROR("two %s sections", section_name(type));
        if (flags != 0 || reserved != 0)
            return FORMAT_ERROR("%s section: reserved fields are not zero",
                                section_name(type));
        if (offset < table_end || offset > size || length > size - offset)
            return FORMAT_ERROR("%s section [%llu, +%llu) lies outside the "
                                "file's %zu bytes", section_name(type),
                                (unsigned long long)offset,
                                (unsigned long long)length, size);
        for (uint32_t t = DFG_SECTION_STRINGS; t < DFG_SECTION_END; t++)
            if (seen[t] && offset < end[t] && begin[t] < offset + length)
                return FORMAT_ERROR("the %s and %s sections overlap",
                                    section_name(t), section_name(type));
        uint32_t alignment = dfg_file_section_alignment(version, type);
        if (offset % alignment != 0)
            return FORMAT_ERROR("%s section at offset %llu, not a multiple "
                                "of %u", section_name(type),
                                (unsigned long long)offset, alignment);
        if (dfg_crc32(data + offset, (size_t)length) != crc)
            return FORMAT_ERROR("%s section: checksum does not match",
                                section_name(type));
        seen[type] = 1;
        begin[type] = offset;
        end[type] = offset + length;
        out->section[type] = dfg_byte_reader_make(data + offset, (size_t)length);
    }
    for (uint32_t t = DFG_SECTION_STRINGS; t < DFG_SECTION_END; t++)
        if (!seen[t])
            return FORMAT_ERROR("no %s section", section_name(t));
    return DFG_OK;
}

/* Counts of everything the program holds, each bounded by its section's
 * size so that a hostile count cannot cause a large allocation. */
typedef struct file_counts {
    uint32_t tensors, steps, inputs, outputs;
    int64_t region_bytes[DFG_REGION_COUNT];
} file_counts;

static dfg_status read_counts(file_sections *f, file_counts *c)
{
    dfg_byte_reader *plan = &f->section[DFG_SECTION_PLAN];
    /* Version 5 added the layouts' CPU features to the plan. */
    size_t newest = f->version >= 5u ? DFG_FILE_PLAN_BYTES
                                     : DFG_FILE_PLAN_BYTES_WITHOUT_LAYOUT_ISA;
    if (plan->size != newest &&
        !(f->version >= 5u && plan->size == DFG_FILE_PLAN_BYTES_WITHOUT_MATH) &&
        !(f->version >= 5u &&
          plan->size == DFG_FILE_PLAN_BYTES_WITHOUT_TILING) &&
        plan->size != DFG_FILE_PLAN_BYTES_WITHOUT_RULE &&
        plan->size != DFG_FILE_PLAN_BYTES_WITHOUT_RECORDED_BOUND)
        return FORMAT_ERROR("plan section of %zu bytes, expected %zu, %u or %u",
                            plan->size, newest,
                            DFG_FILE_PLAN_BYTES_WITHOUT_RULE,
                            DFG_FILE_PLAN_BYTES_WITHOUT_RECORDED_BOUND);
    for (int r = 0; r < DFG_REGION_COUNT; r++) {
        c->region_bytes[r] = dfg_read_i64(plan);
        if (c->region_bytes[r] < 0 ||
            c->region_bytes[r] > DFG_FILE_MAX_REGION_BYTES)
            return FORMAT_ERROR("%s region of %lld bytes",
                                r == DFG_REGION_ARENA ? "arena" : "weights",
                                (long long)c->region_bytes[r]);
    }
    if ((uint64_t)c->region_bytes[DFG_REGION_WEIGHTS] !=
        f->section[DFG_SECTION_WEIGHTS].size)
        return FORMAT_ERROR("weights section of %zu bytes for a weights "
                            "region of %lld",
                            f->section[DFG_SECTION_WEIGHTS].size,
                            (long long)c->region_bytes[DFG_REGION_WEIGHTS]);

    dfg_byte_reader *tensors = &f->section[DFG_SECTION_TENSORS];
    c->tensors = dfg_read_u32(tensors);
    uint32_t reserved = dfg_read_u32(tensors);
    if (tensors->failed || reserved != 0 || c->tensors > DFG_FILE_MAX_TENSORS ||
        (uint64_t)c->tensors * DFG_FILE_TENSOR_RECORD_BYTES !=
            dfg_byte_reader_left(tensors))
        return FORMAT_ERROR("the tensors section's count does not match its "
                            "%zu bytes", tensors->size);

    dfg_byte_reader *steps = &f->section[DFG_SECTION_STEPS];
    c->steps = dfg_read_u32(steps);
    reserved = dfg_read_u32(steps);
    uint64_t min_step = DFG_FILE_STEP_HEADER_BYTES +
                        dfg_attrs_min_encoded_bytes(f->version);
    if (steps->failed || reserved != 0 || c->steps > DFG_FILE_MAX_STEPS ||
        (uint64_t)c->steps * min_step > dfg_byte_reader_left(steps))
        return FORMAT_ERROR("the steps section's count does not fit its %zu "
                            "bytes", steps->size);

    dfg_byte_reader *io = &f->section[DFG_SECTION_IO];
    c->inputs = dfg_read_u32(io);
    c->outputs = dfg_read_u32(io);
    if (io->failed || c->inputs > DFG_FILE_MAX_TENSORS ||
        c->outputs > DFG_FILE_MAX_TENSORS ||
        ((uint64_t)c->inputs + c->outputs) * 4 != dfg_byte_reader_left(io))
        return FORMAT_ERROR("the io section's counts do not match its %zu "
                            "bytes", io->size);
    return DFG_OK;
}

/* A copy of the NUL-terminated string at ref in the strings section. */
static dfg_status read_string(const dfg_byte_reader *strings, uint32_t ref,
                              const dfg_allocator *allocator, const char *what,
                              int32_t index, char **out)
{
    /* read_program checked that the section ends with a NUL, so every
     * in-range reference is terminated inside it. */
    if (ref >= strings->size)
        return FORMAT_ERROR("%s %d: name at offset %u is outside the strings "
                            "section", what, (int)index, ref);
    *out = dfg_strdup(allocator, (const char *)strings->data + ref);
    if (!*out)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "out of memory for a name");
    return DFG_OK;
}

static dfg_status read_tensors(dfg_byte_reader *r, uint32_t version,
                               const dfg_byte_reader *strings, dfg_program *p)
{
    for (int32_t i = 0; i < p->n_tensors; i++) {
        dfg_program_tensor *t = &p->tensors[i];
        uint32_t name = dfg_read_u32(r);
        uint32_t kind = dfg_read_u32(r);
        uint32_t region = dfg_read_u32(r);
        uint32_t dtype = dfg_read_u32(r);
        int32_t rank = dfg_read_i32(r);
        uint32_t layout = dfg_read_u32(r); /* reserved, 0, before 5 */
        uint32_t reserved = 0;
        int64_t shape[DFG_MAX_RANK];
        for (int d = 0; d < DFG_MAX_RANK; d++)
            shape[d] = dfg_read_i64(r);
        t->bytes = dfg_read_i64(r);
        t->offset = dfg_read_i64(r);
        t->first_step = dfg_read_i32(r);
        t->last_step = dfg_read_i32(r);
        t->alias_of = dfg_read_i32(r);
        reserved |= dfg_read_u32(r);
        if (r->failed)
            return FORMAT_ERROR("tensor %d: record truncated", (int)i);
        if (kind >= DFG_TENSOR_KIND_COUNT || region >= DFG_REGION_COUNT ||
            dtype >= DFG_DTYPE_COUNT || rank < 0 || rank > DFG_MAX_RANK ||
            layout >= DFG_LAYOUT_COUNT || (version < 5u && layout != 0) ||
            reserved != 0)
            return FORMAT_ERROR("tensor %d: kind %u, region %u, dtype %u, "
                                "rank %d or layout %u out of range", (int)i,
                                kind, region, dtype, (int)rank, layout);
        for (int d = rank; d < DFG_MAX_RANK; d++)
            if (shape[d] != 0)
                return FORMAT_ERROR("tensor %d: dimension %d past rank %d is "
                                    "not zero", (int)i, d, (int)rank);
        t->kind = (dfg_tensor_kind)kind;
        t->region = (dfg_region)region;
        t->type.dtype = (dfg_dtype)dtype;
        t->type.rank = rank;
        t->type.layout = (int32_t)layout;
        memcpy(t->type.shape, shape, sizeof shape);
        dfg_status status = read_string(strings, name, &p->allocator, "tensor",
                                        i, &t->name);
        if (status != DFG_OK)
            return status;
    }
    return DFG_OK;
}

static dfg_status read_index_array(dfg_byte_reader *r, int32_t n,
                                   const dfg_allocator *allocator,
                                   int32_t **out)
{
    if ((uint64_t)n * 4 > dfg_byte_reader_left(r))
        return FORMAT_ERROR("operand list runs past the steps section");
    *out = dfg_calloc(allocator, (size_t)n + 1, sizeof **out);
    if (!*out)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "out of memory for operands");
    for (int32_t i = 0; i < n; i++)
        (*out)[i] = dfg_read_i32(r);
    return DFG_OK;
}

static dfg_status read_steps(dfg_byte_reader *r, uint32_t version,
                             const dfg_byte_reader *strings, dfg_program *p)
{
    for (int32_t i = 0; i < p->n_steps; i++) {
        dfg_program_step *st = &p->steps[i];
        uint32_t op = dfg_read_u32(r);
        uint32_t name = dfg_read_u32(r);
        uint32_t n_inputs = dfg_read_u32(r);
        uint32_t n_outputs = dfg_read_u32(r);
        st->workspace = dfg_read_i32(r);
        uint32_t reserved = dfg_read_u32(r);
        st->flops = dfg_read_i64(r);
        if (r->failed)
            return FORMAT_ERROR("step %d: record truncated", (int)i);
        if (op >= DFG_OP_COUNT)
            return FORMAT_ERROR("step %d: unknown op %u", (int)i, op);
        if (reserved != 0 || n_inputs > DFG_FILE_MAX_OPERANDS ||
            n_outputs > DFG_MAX_SPLIT)
            return FORMAT_ERROR("step %d (%s): %u inputs and %u outputs",
                                (int)i, dfg_op_get((dfg_op)op)->name, n_inputs,
                                n_outputs);
        if (dfg_file_version_of_op((dfg_op)op) > version)
            return FORMAT_ERROR("step %d: op %s needs file version %u, the "
                                "file has version %u", (int)i,
                                dfg_op_get((dfg_op)op)->name,
                                dfg_file_version_of_op((dfg_op)op), version);
        st->op = (dfg_op)op;
        st->n_inputs = (int32_t)n_inputs;
        st->n_outputs = (int32_t)n_outputs;
        dfg_status status = read_string(strings, name, &p->allocator, "step",
                                        i, &st->name);
        if (status == DFG_OK)
            status = read_index_array(r, st->n_inputs, &p->allocator, &st->inputs);
        if (status == DFG_OK)
            status = read_index_array(r, st->n_outputs, &p->allocator, &st->outputs);
        if (status != DFG_OK)
            return dfg_error_prefix(status, "step %d", (int)i);
        if (dfg_attrs_decode(r, version, &st->attrs) != 0)
            return FORMAT_ERROR("step %d ('%s', %s): malformed attributes",
                                (int)i, st->name, dfg_op_get(st->op)->name);
        dfg_program_step_label(st);
    }
    if (dfg_byte_reader_left(r) != 0)
        return FORMAT_ERROR("%zu unused bytes at the end of the steps section",
                            dfg_byte_reader_left(r));
    return DFG_OK;
}

static void read_io_and_plan(file_sections *f, dfg_program *p)
{
    dfg_byte_reader *io = &f->section[DFG_SECTION_IO];
    for (int32_t i = 0; i < p->n_inputs; i++)
        p->inputs[i] = dfg_read_i32(io);
    for (int32_t i = 0; i < p->n_outputs; i++)
        p->outputs[i] = dfg_read_i32(io);

    dfg_byte_reader plan = f->section[DFG_SECTION_PLAN];
    plan.pos = DFG_REGION_COUNT * 8; /* past the region sizes */
    dfg_plan_stats *s = &p->stats;
    s->arena_bytes = dfg_read_u64(&plan);
    s->lower_bound_bytes = dfg_read_u64(&plan);
    s->no_reuse_bytes = dfg_read_u64(&plan);
    s->weights_bytes = dfg_read_u64(&plan);
    s->alignment = dfg_read_u64(&plan);
    uint32_t planner = dfg_read_u32(&plan);
    /* Out-of-range planners are rejected by dfg_program_validate; keep the
     * value representable meanwhile. */
    s->planner = planner < DFG_PLANNER_COUNT ? (dfg_planner)planner
                                             : DFG_PLANNER_COUNT;
    s->verified = (int)dfg_read_u32(&plan);
    s->n_steps = dfg_read_i32(&plan);
    s->n_tensors = dfg_read_i32(&plan);
    s->recorded_lower_bound_bytes =
        plan.size > DFG_FILE_PLAN_BYTES_WITHOUT_RECORDED_BOUND
            ? dfg_read_u64(&plan)
            : 0;
    /* Checked by dfg_program_validate (a NUL within the field). */
    const uint8_t *rule =
        plan.size >= DFG_FILE_PLAN_BYTES_WITHOUT_LAYOUT_ISA
            ? dfg_read_bytes(&plan, sizeof p->workspace_rule)
            : NULL;
    if (rule)
        memcpy(p->workspace_rule, rule, sizeof p->workspace_rule);
    const uint8_t *isa = plan.size >= DFG_FILE_PLAN_BYTES_WITHOUT_MATH
                             ? dfg_read_bytes(&plan, sizeof p->layout_isa)
                             : NULL;
    if (isa)
        memcpy(p->layout_isa, isa, sizeof p->layout_isa);
    /* Math flags (dfg_program_math_flags), then a reserved word: checked
     * by dfg_program_validate through allow_tf32 (2: unknown bits). */
    if (plan.size >= DFG_FILE_PLAN_BYTES_WITHOUT_TILING) {
        uint32_t math = dfg_read_u32(&plan), reserved = dfg_read_u32(&plan);
        p->allow_tf32 = (int)(math & DFG_MATH_TF32);
        p->half_products = math & DFG_MATH_F16    ? DFG_F16
                           : math & DFG_MATH_BF16 ? DFG_BF16
                                                  : DFG_F32;
        if (reserved != 0u || math != dfg_program_math_flags(p))
            p->allow_tf32 = 2;
    }
    if (plan.size == DFG_FILE_PLAN_BYTES) {
        s->op_by_op_lower_bound_bytes = dfg_read_u64(&plan);
        s->tiling_extra_flops = dfg_read_i64(&plan);
        s->tiled_regions = dfg_read_i32(&plan);
        s->tiles = dfg_read_i32(&plan);
    }
}

/* Points every weights-region tensor at its bytes in the weights section,
 * which lies inside owner (held by the program). The plan was validated,
 * so each tensor lies inside the section. */
static dfg_status attach_weights(dfg_program *p, dfg_shared_bytes *owner,
                                 const uint8_t *section)
{
    for (int32_t i = 0; i < p->n_tensors; i++)
        if (p->tensors[i].region == DFG_REGION_WEIGHTS)
            p->tensors[i].data = section + p->tensors[i].offset;
    return dfg_program_hold(p, owner);
}

/* Decodes and checks the file in data; the weights are the section's
 * bytes in place when weights_owner holds data (a mapped file), else a
 * copy. */
static dfg_status load_bytes(const uint8_t *data, size_t size,
                             dfg_shared_bytes *weights_owner,
                             const dfg_allocator *allocator, dfg_program **out)
{
    file_sections f;
    memset(&f, 0, sizeof f);
    file_counts c;
    memset(&c, 0, sizeof c);
    dfg_status status = read_section_table(data, size, &f);
    if (status == DFG_OK)
        status = read_counts(&f, &c);
    if (status != DFG_OK)
        return status;
    const dfg_byte_reader *strings = &f.section[DFG_SECTION_STRINGS];
    if (strings->size == 0 || strings->data[strings->size - 1] != 0)
        return FORMAT_ERROR("the strings section does not end with a NUL");

    dfg_program *p = dfg_program_alloc(allocator, (int32_t)c.tensors,
                                       (int32_t)c.steps, (int32_t)c.inputs,
                                       (int32_t)c.outputs,
                                       c.region_bytes[DFG_REGION_WEIGHTS]);
    if (!p)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "out of memory for a program of %u tensors and %u "
                         "steps", c.tensors, c.steps);
    p->region_bytes[DFG_REGION_ARENA] = c.region_bytes[DFG_REGION_ARENA];
    read_io_and_plan(&f, p);
    status = read_tensors(&f.section[DFG_SECTION_TENSORS], f.version, strings,
                          p);
    if (status == DFG_OK)
        status = read_steps(&f.section[DFG_SECTION_STEPS], f.version,
                            strings, p);
    if (status == DFG_OK)
        status = dfg_program_validate(p);
    if (status == DFG_OK) {
        status = dfg_program_verify(p);
        if (status != DFG_OK)
            status = dfg_error_prefix(DFG_ERR_FORMAT,
                                      "program file: the memory plan does not "
                                      "verify");
    }
    const dfg_byte_reader *weights = &f.section[DFG_SECTION_WEIGHTS];
    if (status == DFG_OK && weights_owner) {
        status = attach_weights(p, weights_owner, weights->data);
    } else if (status == DFG_OK) {
        dfg_shared_bytes *copy = dfg_shared_bytes_alloc(allocator, weights->size);
        if (!copy)
            status = dfg_error(DFG_ERR_OUT_OF_MEMORY,
                               "out of memory for %zu bytes of weights",
                               weights->size);
        if (copy && weights->size)
            memcpy(dfg_shared_bytes_fill(copy), weights->data, weights->size);
        if (copy)
            status = attach_weights(p, copy, dfg_shared_bytes_data(copy));
        dfg_shared_bytes_release(copy);
    }
    if (status != DFG_OK) {
        dfg_program_destroy(p);
        return status;
    }
    *out = p;
    return DFG_OK;
}

dfg_status dfg_program_load_memory(const void *data, size_t size,
                                   const dfg_allocator *allocator,
                                   dfg_program **out)
{
    if (!data || !out)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_program_load_memory: data and out must not be "
                         "NULL");
    *out = NULL;
    return load_bytes(data, size, NULL, allocator, out);
}

dfg_status dfg_program_load(const char *path, const dfg_allocator *allocator,
                            dfg_program **out)
{
    if (!path || !out)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_program_load: path and out must not be NULL");
    *out = NULL;
    /* Mapped, not read: the program's weights stay the file's pages, so
     * loading copies no weight byte and every process that loads the file
     * shares them through the page cache. */
    dfg_shared_bytes *file = NULL;
    dfg_status status = dfg_shared_bytes_map(path, DFG_FILE_MAX_BYTES,
                                             allocator, &file);
    if (status == DFG_OK)
        status = load_bytes(dfg_shared_bytes_data(file),
                            dfg_shared_bytes_size(file), file, allocator, out);
    dfg_shared_bytes_release(file);
    if (status != DFG_OK)
        return dfg_error_prefix(status, "'%s'", path);
    return DFG_OK;
}
