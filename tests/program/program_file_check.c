/* Helpers of the program-file tests (see program_file_check.h). */
#include "tests/program/program_file_check.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "program/program_format.h"
#include "tests/support/program_fixtures.h"
#include "util/crc32.h"
#include "util/memory.h"

uint8_t *serialize(const dfg_program *p, size_t *size)
{
    uint8_t *data = NULL;
    assert_int_equal(dfg_program_serialize(p, NULL, &data, size), DFG_OK);
    return data;
}

uint8_t *copy_bytes(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1);
    assert_non_null(copy);
    memcpy(copy, data, size);
    return copy;
}

void store_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

void store_u64(uint8_t *p, uint64_t v)
{
    store_u32(p, (uint32_t)v);
    store_u32(p + 4, (uint32_t)(v >> 32));
}

uint8_t *entry(uint8_t *file, uint32_t i)
{
    return file + DFG_FILE_HEADER_BYTES + i * DFG_FILE_SECTION_ENTRY_BYTES;
}

static uint32_t n_sections(const uint8_t *file) { return dfg_load_u32le(file + 8); }

uint8_t *section(uint8_t *file, uint32_t type, size_t *size)
{
    for (uint32_t i = 0; i < n_sections(file); i++) {
        if (dfg_load_u32le(entry(file, i)) == type) {
            *size = (size_t)dfg_load_u64le(entry(file, i) + 16);
            return file + dfg_load_u64le(entry(file, i) + 8);
        }
    }
    fail_msg("no section %u", type);
    return NULL;
}

void fix_checksums_in(uint8_t *file, size_t size)
{
    uint32_t n = n_sections(file);
    for (uint32_t i = 0; i < n; i++) {
        uint8_t *e = entry(file, i);
        uint64_t offset = dfg_load_u64le(e + 8), length = dfg_load_u64le(e + 16);
        if (offset <= size && length <= size - offset)
            store_u32(e + 24, dfg_crc32(file + offset, (size_t)length));
    }
    store_u32(file + 12, dfg_crc32(file + DFG_FILE_HEADER_BYTES,
                                   n * DFG_FILE_SECTION_ENTRY_BYTES));
}

void *tracking_alloc(void *ctx, size_t size, size_t alignment)
{
    tracking *t = ctx;
    if (size > t->largest)
        t->largest = size;
    void *ptr = NULL;
    if (posix_memalign(&ptr, alignment < sizeof(void *) ? sizeof(void *) : alignment,
                       size ? size : 1) != 0)
        return NULL;
    t->live++;
    return ptr;
}

void tracking_free(void *ctx, void *ptr)
{
    if (ptr)
        ((tracking *)ctx)->live--;
    free(ptr);
}

dfg_status load_mapped(const uint8_t *data, size_t size,
                       const dfg_allocator *allocator, dfg_program **out)
{
    char path[] = "/tmp/dfg-program-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, size), (ssize_t)size);
    close(fd);
    dfg_status s = dfg_program_load(path, allocator, out);
    unlink(path);
    return s;
}

/* expect_rejected through one loader: from memory, or mapped. */
static void expect_rejected_by(int mapped, const uint8_t *data, size_t size,
                               const char *needle)
{
    tracking t = {0, 0};
    dfg_allocator allocator = {&t, tracking_alloc, tracking_free};
    dfg_program *p = (dfg_program *)&t;
    dfg_status s = mapped ? load_mapped(data, size, &allocator, &p)
                          : dfg_program_load_memory(data, size, &allocator, &p);
    if (s != DFG_ERR_FORMAT)
        fail_msg("expected DFG_ERR_FORMAT, got %s (%s)", dfg_status_name(s),
                 s == DFG_OK ? "loaded" : dfg_last_error());
    assert_null(p);
    assert_true(strlen(dfg_last_error()) > 10);
    if (needle && !strstr(dfg_last_error(), needle))
        fail_msg("message '%s' lacks '%s'", dfg_last_error(), needle);
    assert_true(t.largest <= 2 * size + 65536);
    assert_int_equal(t.live, 0);
}

void expect_rejected(const uint8_t *data, size_t size, const char *needle)
{
    expect_rejected_by(0, data, size, needle);
    expect_rejected_by(1, data, size, needle);
}

int run_program(const dfg_program *p, uint64_t seed, uint8_t **outputs)
{
    const dfg_backend *cpu = NULL;
    dfg_session *session = NULL;
    if (dfg_backend_find("cpu", &cpu) != DFG_OK ||
        dfg_session_create(p, cpu, NULL, &session) != DFG_OK)
        return -1;
    uint64_t rng = seed;
    for (int32_t i = 0; i < p->n_inputs; i++) {
        const dfg_program_tensor *t = &p->tensors[p->inputs[i]];
        void *buffer = NULL;
        assert_int_equal(dfg_session_input_buffer(session, i, &buffer), DFG_OK);
        if (t->type.dtype == DFG_F32)
            fixture_fill(&rng, buffer, t->bytes / 4);
        else
            memset(buffer, 0, (size_t)t->bytes);
    }
    dfg_status s = dfg_session_run(session, NULL, NULL);
    for (int32_t i = 0; s == DFG_OK && outputs && i < p->n_outputs; i++) {
        void *buffer = NULL;
        assert_int_equal(dfg_session_output_buffer(session, i, &buffer), DFG_OK);
        outputs[i] = copy_bytes(buffer, (size_t)p->tensors[p->outputs[i]].bytes);
    }
    dfg_session_destroy(session);
    return s == DFG_OK ? 0 : -1;
}

static dfg_program *compile_model(const char *name, int fuse, int layouts)
{
    dfg_graph *g = NULL;
    dfg_program *p = NULL;
    dfg_compile_options options;
    dfg_compile_options_init(&options);
    options.fuse_operators = fuse;
    options.assign_layouts = layouts;
    assert_int_equal(dfg_model_build(name, NULL, &g), DFG_OK);
    assert_int_equal(dfg_compile(g, &options, &p), DFG_OK);
    dfg_graph_destroy(g);
    return p;
}

dfg_program *compiled_unfused(const char *name)
{
    if (strcmp(name, "fixture") != 0)
        return compile_model(name, 0, 0);
    return compiled(name);
}

dfg_program *compiled_plain(const char *name)
{
    if (strcmp(name, "fixture") != 0)
        return compile_model(name, 1, 0);
    return compiled(name);
}

dfg_program *compiled(const char *name)
{
    if (strcmp(name, "fixture") != 0)
        return compile_model(name, 1, 1);
    fixture_weights w;
    dfg_program *p = NULL;
    assert_int_equal(fixture_compile(42, &w, DFG_PLANNER_GREEDY_SIZE, &p), DFG_OK);
    return p;
}

dfg_program *hand_built(void)
{
    dfg_program *p = dfg_program_alloc(NULL, 3, 1, 1, 1, 24);
    assert_non_null(p);
    static const char *const names[] = {"x", "w", "y"};
    static const dfg_tensor_kind kinds[] = {DFG_TENSOR_INPUT, DFG_TENSOR_WEIGHT,
                                            DFG_TENSOR_OUTPUT};
    for (int32_t i = 0; i < 3; i++) {
        dfg_program_tensor *t = &p->tensors[i];
        t->name = dfg_strdup(&p->allocator, names[i]);
        t->type = (dfg_type){DFG_F32, 2, {2, 3}, 0};
        t->bytes = 24;
        t->kind = kinds[i];
        t->region = i == 1 ? DFG_REGION_WEIGHTS : DFG_REGION_ARENA;
        t->offset = i == 2 ? 256 : 0;
        t->first_step = i == 1 ? -1 : 0;
        t->last_step = 0;
        t->alias_of = -1;
    }
    uint64_t rng = 17;
    dfg_shared_bytes *w = dfg_shared_bytes_alloc(NULL, 24);
    assert_non_null(w);
    fixture_fill(&rng, (float *)dfg_shared_bytes_fill(w), 6);
    p->tensors[1].data = dfg_shared_bytes_data(w);
    assert_int_equal(dfg_program_hold(p, w), DFG_OK);
    dfg_shared_bytes_release(w);
    dfg_program_step *st = &p->steps[0];
    st->op = DFG_OP_ADD;
    st->name = dfg_strdup(&p->allocator, "sum");
    dfg_attrs_init(&st->attrs);
    st->n_inputs = 2;
    st->inputs = dfg_calloc(&p->allocator, 2, sizeof(int32_t));
    st->inputs[0] = 0;
    st->inputs[1] = 1;
    st->n_outputs = 1;
    st->outputs = dfg_calloc(&p->allocator, 1, sizeof(int32_t));
    st->outputs[0] = 2;
    st->workspace = -1;
    st->flops = 6;
    p->inputs[0] = 0;
    p->outputs[0] = 2;
    p->region_bytes[DFG_REGION_ARENA] = 512;
    p->stats = (dfg_plan_stats){.arena_bytes = 512, .lower_bound_bytes = 48,
                                .no_reuse_bytes = 512, .weights_bytes = 24,
                                .alignment = 256, .planner = DFG_PLANNER_NO_REUSE,
                                .verified = 1, .n_steps = 1, .n_tensors = 3};
    return p;
}
