/* Program files (src/program_save.c, program_load.c, program_validate.c):
 * round trips of compiled and hand-built programs, and a loader that
 * rejects every truncated, corrupted or hostile file with DFG_ERR_FORMAT
 * and a message, without large allocations, and never crashes. Run it
 * under ASan/UBSan (scripts/test does) to catch out-of-bounds reads. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "crc32.h"
#include "dfg/dfg.h"
#include "memory.h"
#include "program_fixtures.h"
#include "program_format.h"

/* --- helpers */

static uint8_t *serialize(const dfg_program *p, size_t *size)
{
    uint8_t *data = NULL;
    assert_int_equal(dfg_program_serialize(p, NULL, &data, size), DFG_OK);
    return data;
}

static uint8_t *copy_bytes(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1);
    assert_non_null(copy);
    memcpy(copy, data, size);
    return copy;
}

static void store_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void store_u64(uint8_t *p, uint64_t v)
{
    store_u32(p, (uint32_t)v);
    store_u32(p + 4, (uint32_t)(v >> 32));
}

static uint8_t *entry(uint8_t *file, uint32_t i)
{
    return file + DFG_FILE_HEADER_BYTES + i * DFG_FILE_SECTION_ENTRY_BYTES;
}

static uint32_t n_sections(const uint8_t *file) { return dfg_load_u32le(file + 8); }

/* Where section `type` lies in a well-formed file. */
static uint8_t *section(uint8_t *file, uint32_t type, size_t *size)
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

/* Recomputes every checksum, so that a corruption reaches the decoder
 * and the validator instead of stopping at a CRC. */
static void fix_checksums_in(uint8_t *file, size_t size)
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

/* An allocator that records its largest request. */
typedef struct tracking {
    size_t largest, live;
} tracking;

static void *tracking_alloc(void *ctx, size_t size, size_t alignment)
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

static void tracking_free(void *ctx, void *ptr)
{
    if (ptr)
        ((tracking *)ctx)->live--;
    free(ptr);
}

/* dfg_program_load of the bytes, written to a file first: the loader
 * that maps the file and reads the weights there. */
static dfg_status load_mapped(const uint8_t *data, size_t size,
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

/* Loads bytes that must be rejected, from memory or mapped from a file:
 * DFG_ERR_FORMAT, a message, no allocation much larger than the file,
 * nothing leaked. */
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

static void expect_rejected(const uint8_t *data, size_t size, const char *needle)
{
    expect_rejected_by(0, data, size, needle);
    expect_rejected_by(1, data, size, needle);
}

static dfg_program *load(const uint8_t *data, size_t size)
{
    dfg_program *p = NULL;
    dfg_status s = dfg_program_load_memory(data, size, NULL, &p);
    if (s != DFG_OK)
        fail_msg("load: %s", dfg_last_error());
    return p;
}

static void expect_attrs_equal(const dfg_attrs *a, const dfg_attrs *b)
{
#define SAME(f) assert_true(memcmp(&a->f, &b->f, sizeof a->f) == 0)
    SAME(alpha); SAME(beta); SAME(epsilon); SAME(clip_min); SAME(clip_max);
    SAME(pad_value); SAME(axis); SAME(keepdims); SAME(trans_a);
    SAME(trans_b); SAME(approximate); SAME(to); SAME(group); SAME(kernel);
    SAME(strides); SAME(dilations); SAME(count_include_pad);
    SAME(ceil_mode); SAME(pads); SAME(n_axes); SAME(n_shape); SAME(n_split);
    SAME(resize_mode); SAME(coordinates); SAME(nearest_rounding);
    SAME(exclude_outside); SAME(cubic_coeff_a); SAME(n_scales); SAME(k);
    SAME(largest); SAME(sorted);
#undef SAME
    for (int32_t i = 0; i < a->n_scales; i++)
        assert_true(a->scales[i] == b->scales[i]);
    for (int32_t i = 0; i < a->n_axes; i++) {
        assert_int_equal(a->axes[i], b->axes[i]);
        assert_int_equal(a->starts[i], b->starts[i]);
        assert_int_equal(a->ends[i], b->ends[i]);
        assert_int_equal(a->steps[i], b->steps[i]);
    }
    for (int32_t i = 0; i < a->n_shape; i++)
        assert_int_equal(a->shape[i], b->shape[i]);
    for (int32_t i = 0; i < a->n_split; i++)
        assert_int_equal(a->split[i], b->split[i]);
}

/* Field by field, independently of the file format's code. */
static void expect_programs_equal(const dfg_program *a, const dfg_program *b)
{
    assert_int_equal(a->n_tensors, b->n_tensors);
    for (int32_t i = 0; i < a->n_tensors; i++) {
        const dfg_program_tensor *x = &a->tensors[i], *y = &b->tensors[i];
        assert_string_equal(x->name, y->name);
        assert_true(dfg_type_equal(&x->type, &y->type));
        assert_int_equal(x->bytes, y->bytes);
        assert_int_equal(x->kind, y->kind);
        assert_int_equal(x->region, y->region);
        assert_int_equal(x->offset, y->offset);
        assert_int_equal(x->first_step, y->first_step);
        assert_int_equal(x->last_step, y->last_step);
        assert_int_equal(x->alias_of, y->alias_of);
    }
    assert_int_equal(a->n_steps, b->n_steps);
    for (int32_t i = 0; i < a->n_steps; i++) {
        const dfg_program_step *x = &a->steps[i], *y = &b->steps[i];
        assert_int_equal(x->op, y->op);
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->n_inputs, y->n_inputs);
        assert_int_equal(x->n_outputs, y->n_outputs);
        assert_memory_equal(x->inputs, y->inputs, (size_t)x->n_inputs * 4);
        assert_memory_equal(x->outputs, y->outputs, (size_t)x->n_outputs * 4);
        assert_int_equal(x->workspace, y->workspace);
        assert_int_equal(x->flops, y->flops);
        expect_attrs_equal(&x->attrs, &y->attrs);
    }
    assert_int_equal(a->n_inputs, b->n_inputs);
    assert_int_equal(a->n_outputs, b->n_outputs);
    assert_memory_equal(a->inputs, b->inputs, (size_t)a->n_inputs * 4);
    assert_memory_equal(a->outputs, b->outputs, (size_t)a->n_outputs * 4);
    for (int r = 0; r < DFG_REGION_COUNT; r++)
        assert_int_equal(a->region_bytes[r], b->region_bytes[r]);
    for (int32_t i = 0; i < a->n_tensors; i++)
        if (a->tensors[i].region == DFG_REGION_WEIGHTS)
            assert_memory_equal(a->tensors[i].data, b->tensors[i].data,
                                (size_t)a->tensors[i].bytes);
    assert_memory_equal(&a->stats, &b->stats, sizeof a->stats);
}

/* Runs a program on seeded random inputs (any dtype: raw random bytes
 * would give NaNs, so floats get [-1, 1) and the rest small integers);
 * returns 0 on success. outputs may be NULL. */
static int run_program(const dfg_program *p, uint64_t seed, uint8_t **outputs)
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

static dfg_program *compile_model(const char *name)
{
    dfg_graph *g = NULL;
    dfg_program *p = NULL;
    assert_int_equal(dfg_model_build(name, NULL, &g), DFG_OK);
    assert_int_equal(dfg_compile(g, NULL, &p), DFG_OK);
    dfg_graph_destroy(g);
    return p;
}

/* The fixture, or a bundled model. */
static dfg_program *compiled(const char *name)
{
    if (strcmp(name, "fixture") != 0)
        return compile_model(name);
    fixture_weights w;
    dfg_program *p = NULL;
    assert_int_equal(fixture_compile(42, &w, DFG_PLANNER_GREEDY_SIZE, &p), DFG_OK);
    return p;
}

/* --- round trips */

static void test_crc32(void **state)
{
    (void)state;
    assert_int_equal(dfg_crc32("123456789", 9), 0xcbf43926u);
    assert_int_equal(dfg_crc32("", 0), 0);
}

static void round_trip(const dfg_program *p)
{
    size_t size = 0, size2 = 0;
    uint8_t *data = serialize(p, &size);
    dfg_program *loaded = load(data, size);
    expect_programs_equal(p, loaded);
    uint8_t *again = serialize(loaded, &size2);
    assert_int_equal(size, size2);
    assert_memory_equal(data, again, size);

    /* Same numbers from both. */
    uint8_t *out_a[8] = {0}, *out_b[8] = {0};
    assert_true(p->n_outputs <= 8);
    assert_int_equal(run_program(p, 5, out_a), 0);
    assert_int_equal(run_program(loaded, 5, out_b), 0);
    for (int32_t i = 0; i < p->n_outputs; i++) {
        assert_memory_equal(out_a[i], out_b[i],
                            (size_t)p->tensors[p->outputs[i]].bytes);
        free(out_a[i]);
        free(out_b[i]);
    }
    free(data);
    free(again);
    dfg_program_destroy(loaded);
}

static void test_round_trip_compiled(void **state)
{
    (void)state;
    static const char *const names[] = {"fixture", "mlp", "cnn", "transformer"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        dfg_program *p = compiled(names[i]);
        round_trip(p);
        dfg_program_destroy(p);
    }
    for (int planner = 0; planner < DFG_PLANNER_COUNT; planner++) {
        fixture_weights w;
        dfg_program *p = NULL;
        assert_int_equal(fixture_compile(9, &w, (dfg_planner)planner, &p), DFG_OK);
        round_trip(p);
        dfg_program_destroy(p);
    }
}

static void test_save_and_load_a_file(void **state)
{
    (void)state;
    char path[] = "/tmp/dfg-test-program-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    dfg_program *p = compiled("cnn"), *loaded = NULL;
    assert_int_equal(dfg_program_save(p, path), DFG_OK);
    /* The file is mapped: no allocation as large as the weights, which
     * are read in place, aligned. */
    tracking t = {0, 0};
    dfg_allocator allocator = {&t, tracking_alloc, tracking_free};
    assert_int_equal(dfg_program_load(path, &allocator, &loaded), DFG_OK);
    expect_programs_equal(p, loaded);
    assert_true(t.largest < (size_t)loaded->region_bytes[DFG_REGION_WEIGHTS] / 4);
    for (int32_t i = 0; i < loaded->n_tensors; i++)
        if (loaded->tensors[i].region == DFG_REGION_WEIGHTS &&
            loaded->tensors[i].alias_of < 0)
            assert_int_equal((uintptr_t)loaded->tensors[i].data % 64, 0);
    dfg_program_destroy(loaded);
    assert_int_equal(t.live, 0);
    unlink(path);
    assert_int_equal(dfg_program_load(path, NULL, &loaded), DFG_ERR_IO);
    assert_non_null(strstr(dfg_last_error(), path));
    assert_int_equal(dfg_program_load("/tmp", NULL, &loaded), DFG_ERR_IO);
    assert_int_equal(dfg_program_save(p, "/nonexistent-dir/x.dfgp"), DFG_ERR_IO);
    dfg_program_destroy(p);
}

/* A program with the ops of file version 2 (resize, top_k), whose
 * attributes only that version stores. */
static dfg_program *resize_top_k_program(void)
{
    dfg_graph *g = NULL;
    dfg_value x, y, values, indices;
    const int64_t in_shape[] = {1, 2, 3, 4}, sizes[] = {1, 2, 7, 5};
    const float scales[] = {1.0f, 1.0f, 2.4f, 1.3f};
    dfg_resize_params params = {DFG_RESIZE_CUBIC, DFG_RESIZE_ALIGN_CORNERS,
                                DFG_RESIZE_CEIL, -0.5f, 1, scales};
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 4, in_shape, &x), DFG_OK);
    assert_int_equal(dfg_resize(g, x, 4, sizes, &params, &y), DFG_OK);
    assert_int_equal(dfg_top_k(g, y, 3, 2, 0, 1, &values, &indices), DFG_OK);
    assert_int_equal(dfg_graph_output(g, values, "values"), DFG_OK);
    assert_int_equal(dfg_graph_output(g, indices, "indices"), DFG_OK);
    dfg_program *p = NULL;
    assert_int_equal(dfg_compile(g, NULL, &p), DFG_OK);
    dfg_graph_destroy(g);
    return p;
}

/* Files written in version 1 load as they did (the newer attributes keep
 * their defaults); version 2's ops round-trip and are refused in
 * version 1. */
static void test_older_versions(void **state)
{
    (void)state;
    static const char *const names[] = {"fixture", "cnn", "transformer"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        dfg_program *p = compiled(names[i]);
        uint8_t *data = NULL;
        size_t size = 0, size_v2 = 0;
        assert_int_equal(dfg_program_serialize_version(p, 1, NULL, &data, &size),
                         DFG_OK);
        free(serialize(p, &size_v2));
        assert_true(size <= size_v2);
        dfg_program *loaded = load(data, size);
        expect_programs_equal(p, loaded);
        dfg_program_destroy(loaded);
        /* An op of version 2 in a version 1 file. */
        size_t len = 0;
        uint8_t *steps = section(data, DFG_SECTION_STEPS, &len);
        store_u32(steps + DFG_FILE_COUNT_HEADER_BYTES, DFG_OP_RESIZE);
        fix_checksums_in(data, size);
        expect_rejected(data, size, "needs file version 2");
        free(data);
        dfg_program_destroy(p);
    }
    dfg_program *p = resize_top_k_program();
    round_trip(p);
    uint8_t *data = NULL;
    size_t size = 0;
    assert_int_equal(dfg_program_serialize_version(p, 1, NULL, &data, &size),
                     DFG_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(dfg_last_error(), "resize"));
    assert_int_equal(dfg_program_serialize_version(p, DFG_FILE_VERSION + 1,
                                                   NULL, &data, &size),
                     DFG_ERR_INVALID_ARGUMENT);
    dfg_program_destroy(p);
}

/* --- hand-built programs: y = x + w, with x an input, w a weight */

static dfg_program *hand_built(void)
{
    dfg_program *p = dfg_program_alloc(NULL, 3, 1, 1, 1, 24);
    assert_non_null(p);
    static const char *const names[] = {"x", "w", "y"};
    static const dfg_tensor_kind kinds[] = {DFG_TENSOR_INPUT, DFG_TENSOR_WEIGHT,
                                            DFG_TENSOR_OUTPUT};
    for (int32_t i = 0; i < 3; i++) {
        dfg_program_tensor *t = &p->tensors[i];
        t->name = dfg_strdup(&p->allocator, names[i]);
        t->type = (dfg_type){DFG_F32, 2, {2, 3}};
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

static void test_hand_built_round_trip_and_run(void **state)
{
    (void)state;
    dfg_program *p = hand_built();
    assert_int_equal(dfg_program_verify(p), DFG_OK);
    round_trip(p);
    uint8_t *out[1] = {0};
    assert_int_equal(run_program(p, 3, out), 0);
    uint64_t rng = 3;
    float x[6];
    fixture_fill(&rng, x, 6);
    const float *w = (const float *)p->tensors[1].data, *y = (const float *)out[0];
    for (int i = 0; i < 6; i++)
        assert_float_equal(y[i], x[i] + w[i], 1e-6);
    free(out[0]);
    dfg_program_destroy(p);
}

typedef struct mutation {
    const char *what;  /* expected in the message */
    void (*apply)(dfg_program *p);
} mutation;

static void bytes_wrong(dfg_program *p) { p->tensors[2].bytes = 20; }
static void outside_region(dfg_program *p) { p->tensors[2].offset = 500; }
static void alias_cycle(dfg_program *p) { p->tensors[0].alias_of = 2; p->tensors[2].alias_of = 0; }
static void alias_self(dfg_program *p) { p->tensors[2].alias_of = 2; }
static void alias_other_region(dfg_program *p) { p->tensors[2].alias_of = 1; }
static void wrong_output_shape(dfg_program *p) { p->tensors[2].type.shape[0] = 3; p->tensors[2].type.shape[1] = 2; }
static void unknown_op(dfg_program *p) { p->steps[0].op = (dfg_op)999; }
static void too_few_inputs(dfg_program *p) { p->steps[0].n_inputs = 1; }
static void input_out_of_range(dfg_program *p) { p->steps[0].inputs[1] = 7; }
static void absent_required_input(dfg_program *p) { p->steps[0].inputs[1] = -1; }
static void output_in_weights(dfg_program *p) { p->tensors[2].region = DFG_REGION_WEIGHTS; p->tensors[2].offset = 0; }
static void weight_in_arena(dfg_program *p) { p->tensors[1].region = DFG_REGION_ARENA; p->tensors[1].offset = 256; p->tensors[2].offset = 0; p->tensors[0].offset = 256; }
static void unexpected_workspace(dfg_program *p) { p->steps[0].workspace = 0; }
static void stats_mismatch(dfg_program *p) { p->stats.n_steps = 2; }
static void bad_alignment(dfg_program *p) { p->stats.alignment = 100; }
static void plan_overlap(dfg_program *p) { p->tensors[2].offset = 0; }
static void graph_input_in_weights(dfg_program *p) { p->inputs[0] = 1; }
static void output_index(dfg_program *p) { p->outputs[0] = 3; }
static void bad_lifetime(dfg_program *p) { p->tensors[0].last_step = 5; }
static void negative_dim(dfg_program *p) { p->tensors[0].type.shape[0] = -2; }
static void huge_dims(dfg_program *p) { p->tensors[0].type.shape[0] = INT64_MAX / 2; p->tensors[0].type.shape[1] = 4; }
static void wrong_dtype_for_op(dfg_program *p) { p->tensors[0].type.dtype = DFG_BOOL; p->tensors[0].bytes = 6; }
static void partial_in_place(dfg_program *p) { p->tensors[2].alias_of = 0; p->tensors[2].offset = 8; }
static void unknown_planner(dfg_program *p) { p->stats.planner = (dfg_planner)9; }
static void misaligned_weight(dfg_program *p)
{
    p->region_bytes[DFG_REGION_WEIGHTS] = 32;
    p->stats.weights_bytes = 32;
    p->tensors[1].offset = 2;
}

static void test_invalid_programs_are_rejected(void **state)
{
    (void)state;
    static const mutation mutations[] = {
        {"needs", bytes_wrong},
        {"outside its region", outside_region},
        {"cycle", alias_cycle},
        {"alias_of 2", alias_self},
        {"another region", alias_other_region},
        {"shape rule", wrong_output_shape},
        {"unknown op", unknown_op},
        {"1 inputs", too_few_inputs},
        {"refers to tensor 7", input_out_of_range},
        {"refers to tensor -1", absent_required_input},
        {"weights region", output_in_weights},
        {"outside the weights region", weight_in_arena},
        {"workspace", unexpected_workspace},
        {"statistics", stats_mismatch},
        {"alignment", bad_alignment},
        {"memory plan", plan_overlap},
        {"input 0", graph_input_in_weights},
        {"output 0 refers", output_index},
        {"lifetime", bad_lifetime},
        {"needs -1", negative_dim},
        {"needs -1", huge_dims},
        {"not accepted", wrong_dtype_for_op},
        {"overlaps input 0", partial_in_place},
        {"planner", unknown_planner},
        {"4-byte elements", misaligned_weight},
    };
    for (size_t i = 0; i < sizeof mutations / sizeof mutations[0]; i++) {
        dfg_program *p = hand_built();
        mutations[i].apply(p);
        size_t size = 0;
        uint8_t *data = serialize(p, &size);
        expect_rejected(data, size, mutations[i].what);
        free(data);
        /* The serialiser took the values as they were; restore enough
         * for destroy (an unknown op is harmless there). */
        if (p->steps[0].n_inputs == 1)
            p->steps[0].n_inputs = 2;
        dfg_program_destroy(p);
    }
}

/* Attributes the in-memory struct cannot hold are poked into the bytes:
 * a count past its array, a dtype that does not exist. */
static void test_invalid_attribute_bytes(void **state)
{
    (void)state;
    dfg_program *p = hand_built();
    size_t size = 0, len = 0;
    uint8_t *data = serialize(p, &size);
    /* Step 0 (add): the count header, the step header, 2 inputs, 1 output. */
    size_t attrs = DFG_FILE_COUNT_HEADER_BYTES + DFG_FILE_STEP_HEADER_BYTES + 3 * 4;
    const size_t to_at = 6 * 4 + 5 * 4;                       /* after the f32s, 5 i32s */
    const size_t n_axes_at = 6 * 4 + 7 * 4 + 6 * 4 + 2 * 4 + 16 * 8; /* after pads */
    static const struct { size_t at; uint32_t value; } pokes[] = {
        {0, 77}, {0, 0xffffffffu}, {1, DFG_MAX_RANK + 1}, {1, 0x80000000u},
    };
    for (size_t i = 0; i < sizeof pokes / sizeof pokes[0]; i++) {
        uint8_t *f = copy_bytes(data, size);
        uint8_t *steps = section(f, DFG_SECTION_STEPS, &len);
        store_u32(steps + attrs + (pokes[i].at ? n_axes_at : to_at), pokes[i].value);
        fix_checksums_in(f, size);
        expect_rejected(f, size, "malformed attributes");
        free(f);
    }
    free(data);
    dfg_program_destroy(p);
}

/* y written over x (x dies at the add): allowed, and computed right. */
static void test_in_place_output_loads_and_runs(void **state)
{
    (void)state;
    dfg_program *p = hand_built();
    p->tensors[2].offset = 0;
    p->tensors[2].alias_of = 0;
    p->region_bytes[DFG_REGION_ARENA] = p->stats.arena_bytes = 256;
    size_t size = 0;
    uint8_t *data = serialize(p, &size);
    dfg_program *loaded = load(data, size);
    uint8_t *out[1] = {0};
    assert_int_equal(run_program(loaded, 3, out), 0);
    uint64_t rng = 3;
    float x[6];
    fixture_fill(&rng, x, 6);
    const float *w = (const float *)p->tensors[1].data, *y = (const float *)out[0];
    for (int i = 0; i < 6; i++)
        assert_float_equal(y[i], x[i] + w[i], 1e-6);
    free(out[0]);
    free(data);
    dfg_program_destroy(loaded);
    dfg_program_destroy(p);
}

/* --- hostile files */

static void test_truncated_files(void **state)
{
    (void)state;
    dfg_program *p = compiled("fixture");
    size_t size = 0;
    uint8_t *data = serialize(p, &size);
    for (size_t n = 0; n < size; n++) {
        /* A fresh allocation of exactly n bytes, so that ASan sees any
         * read past the end. */
        uint8_t *prefix = copy_bytes(data, n);
        expect_rejected(prefix, n, NULL);
        free(prefix);
    }
    uint8_t *longer = malloc(size + 1);
    memcpy(longer, data, size);
    longer[size] = 0;
    expect_rejected(longer, size + 1, "bytes");
    free(longer);
    print_message("rejected %zu truncated files\n", size);
    free(data);
    dfg_program_destroy(p);
}

static void test_hostile_headers(void **state)
{
    (void)state;
    dfg_program *p = compiled("fixture");
    size_t size = 0;
    uint8_t *data = serialize(p, &size);
    uint8_t *f = copy_bytes(data, size);
#define RESET() memcpy(f, data, size)
    size_t len = 0;

    RESET(); f[0] = 'X';                         expect_rejected(f, size, "magic");
    RESET(); store_u32(f + 4, DFG_FILE_VERSION + 1); expect_rejected(f, size, "version");
    RESET(); store_u32(f + 4, 0);                expect_rejected(f, size, "version");
    /* Version 1 stores fewer attributes: the steps no longer parse. */
    RESET(); store_u32(f + 4, 1);                expect_rejected(f, size, NULL);
    RESET(); store_u32(f + 8, 0);                expect_rejected(f, size, "sections");
    RESET(); store_u32(f + 8, 0xffffffffu);      expect_rejected(f, size, "sections");
    RESET(); store_u32(f + 8, 7); fix_checksums_in(f, size); expect_rejected(f, size, NULL);
    RESET(); store_u64(f + 16, size - 1);        expect_rejected(f, size, "truncated");
    RESET(); store_u64(f + 16, UINT64_MAX);      expect_rejected(f, size, NULL);
    RESET(); f[DFG_FILE_HEADER_BYTES + 3] ^= 1;  expect_rejected(f, size, "checksum");
    /* Section table entries. */
    RESET(); store_u64(entry(f, 1) + 8, size); fix_checksums_in(f, size); expect_rejected(f, size, NULL);
    RESET(); store_u64(entry(f, 1) + 16, UINT64_MAX); fix_checksums_in(f, size); expect_rejected(f, size, "outside");
    RESET(); store_u64(entry(f, 1) + 8, UINT64_MAX - 8); fix_checksums_in(f, size); expect_rejected(f, size, "outside");
    RESET(); store_u64(entry(f, 1) + 8, 8); fix_checksums_in(f, size); expect_rejected(f, size, "outside");
    RESET(); store_u32(entry(f, 1), 99); fix_checksums_in(f, size); expect_rejected(f, size, "unknown type");
    RESET(); store_u32(entry(f, 1), DFG_SECTION_STRINGS); fix_checksums_in(f, size); expect_rejected(f, size, "two");
    RESET(); store_u32(entry(f, 1) + 4, 1); fix_checksums_in(f, size); expect_rejected(f, size, "reserved");
    RESET(); memcpy(entry(f, 2) + 8, entry(f, 1) + 8, 8); fix_checksums_in(f, size); expect_rejected(f, size, "overlap");
    RESET(); store_u32(entry(f, 2) + 24, 0); store_u32(f + 12, dfg_crc32(f + 24, 6 * 32));
    expect_rejected(f, size, "checksum");
    /* Counts far beyond what the sections hold. */
    static const struct { uint32_t type; size_t at; uint32_t value; const char *what; } counts[] = {
        {DFG_SECTION_TENSORS, 0, 0xffffffffu, "count"},
        {DFG_SECTION_TENSORS, 0, 1u << 24, "count"},
        {DFG_SECTION_TENSORS, 0, 0, "count"},
        {DFG_SECTION_STEPS, 0, 0xffffffffu, "count"},
        {DFG_SECTION_STEPS, 0, 1u << 20, "count"},
        {DFG_SECTION_STEPS, 8 + 8, 0xffffffffu, "inputs"},   /* n_inputs of step 0 */
        {DFG_SECTION_STEPS, 8 + 8, 4000, NULL},
        {DFG_SECTION_STEPS, 8 + 12, 0xffffffffu, "outputs"}, /* n_outputs of step 0 */
        {DFG_SECTION_STEPS, 8 + 4, 0xfffffff0u, "strings"},  /* name of step 0 */
        {DFG_SECTION_STEPS, 8, 0xffffffffu, "unknown op"},
        {DFG_SECTION_IO, 0, 0xffffffffu, "io"},
        {DFG_SECTION_IO, 4, 1000, "io"},
        {DFG_SECTION_TENSORS, 8, 0x7fffffffu, "strings"},    /* name of tensor 0 */
        {DFG_SECTION_TENSORS, 8 + 16, 9, "rank"},
        {DFG_SECTION_TENSORS, 8 + 12, 200, "dtype"},
        {DFG_SECTION_PLAN, 4, 0x80000000u, "region"},        /* arena bytes < 0 */
        {DFG_SECTION_PLAN, 12, 0x7fffffffu, "weights"},      /* weights bytes huge */
    };
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        RESET();
        uint8_t *s = section(f, counts[i].type, &len);
        store_u32(s + counts[i].at, counts[i].value);
        fix_checksums_in(f, size);
        expect_rejected(f, size, counts[i].what);
    }
    /* A version 3 file whose weights section is not on a page boundary
     * (as version 2 placed it): the mapped weights would be misaligned. */
    uint8_t *v2 = NULL;
    size_t v2_size = 0;
    assert_int_equal(dfg_program_serialize_version(p, 2, NULL, &v2, &v2_size),
                     DFG_OK);
    uint8_t *w2 = section(v2, DFG_SECTION_WEIGHTS, &len);
    assert_true((size_t)(w2 - v2) % DFG_FILE_WEIGHTS_ALIGNMENT != 0);
    store_u32(v2 + 4, 3);
    expect_rejected(v2, v2_size, "not a multiple");
    free(v2);
    /* A strings section without its final NUL. */
    RESET();
    uint8_t *strings = section(f, DFG_SECTION_STRINGS, &len);
    strings[len - 1] = 'x';
    fix_checksums_in(f, size);
    expect_rejected(f, size, "NUL");
#undef RESET
    free(f);
    free(data);
    dfg_program_destroy(p);
}

/* Random corruption. With the checksums left alone, a change inside a
 * section must be caught by its CRC; only padding between sections may
 * change and still load. With the checksums recomputed, the change
 * reaches the decoder and validator: whatever loads must verify and run. */
static void flip_bytes(uint8_t *f, size_t lo, size_t hi, uint64_t *rng)
{
    int n = 1 + (int)(fixture_next(rng) % 4);
    for (int i = 0; i < n; i++) {
        size_t at = lo + (size_t)(fixture_next(rng) % (hi - lo));
        uint64_t r = fixture_next(rng);
        /* Mostly single-bit flips; sometimes a whole byte or an extreme. */
        f[at] = r % 4 == 0 ? (uint8_t)(r >> 8) : r % 4 == 1 ? 0xff
                                                           : f[at] ^ (uint8_t)(1u << (r >> 8) % 8);
    }
}

static void random_corruption(const char *model, int rounds, int fix, uint64_t seed)
{
    dfg_program *p = compiled(model);
    size_t size = 0;
    uint8_t *data = serialize(p, &size);
    uint8_t *f = malloc(size);
    uint64_t rng = seed;
    int loaded = 0, ran = 0;
    /* Corrupt the metadata sections (all but the weights) when fixing up
     * checksums: a weight change is always valid. */
    size_t weights_len = 0;
    size_t weights_at = (size_t)(section(data, DFG_SECTION_WEIGHTS, &weights_len) - data);
    size_t hi = fix ? weights_at : size;
    for (int round = 0; round < rounds; round++) {
        memcpy(f, data, size);
        flip_bytes(f, fix ? DFG_FILE_HEADER_BYTES + 6 * 32 : 0, hi, &rng);
        if (fix)
            fix_checksums_in(f, size);
        dfg_program *q = NULL;
        /* Every other round through the mapped loader. */
        dfg_status s = round % 2 ? load_mapped(f, size, NULL, &q)
                                 : dfg_program_load_memory(f, size, NULL, &q);
        if (s != DFG_OK) {
            if (s != DFG_ERR_FORMAT)
                fail_msg("round %d: %s: %s", round, dfg_status_name(s),
                         dfg_last_error());
            assert_null(q);
            continue;
        }
        loaded++;
        assert_int_equal(dfg_program_verify(q), DFG_OK);
        if (run_program(q, (uint64_t)round, NULL) == 0)
            ran++;
        dfg_program_destroy(q);
    }
    print_message("%s, %d corruptions%s: %d loaded (all verify), %d of them "
                  "ran\n", model, rounds, fix ? " with checksums fixed" : "",
                  loaded, ran);
    if (fix)
        assert_true(loaded < rounds); /* the validator did reject some */
    free(f);
    free(data);
    dfg_program_destroy(p);
}

static void test_random_corruption(void **state)
{
    (void)state;
    random_corruption("fixture", 3000, 0, 1);
    random_corruption("fixture", 4000, 1, 2);
    random_corruption("cnn", 800, 1, 3);
    random_corruption("transformer", 250, 1, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32),
        cmocka_unit_test(test_round_trip_compiled),
        cmocka_unit_test(test_save_and_load_a_file),
        cmocka_unit_test(test_older_versions),
        cmocka_unit_test(test_hand_built_round_trip_and_run),
        cmocka_unit_test(test_invalid_programs_are_rejected),
        cmocka_unit_test(test_invalid_attribute_bytes),
        cmocka_unit_test(test_in_place_output_loads_and_runs),
        cmocka_unit_test(test_truncated_files),
        cmocka_unit_test(test_hostile_headers),
        cmocka_unit_test(test_random_corruption),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
