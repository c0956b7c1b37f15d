/* Program files (src/program/program_save.c, program_load.c,
 * program_validate.c):
 * round trips of compiled and hand-built programs, through memory and
 * through a mapped file, the same numbers before and after, and files of
 * older versions. The loader's rejections of malformed and hostile files
 * are in test_program_corruption.c; the helpers both use are in
 * program_file_check.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "dfg/dfg.h"
#include "program/program_format.h"
#include "tests/program/program_file_check.h"
#include "tests/support/program_fixtures.h"
#include "util/crc32.h"

/* --- helpers */

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
        dfg_program *p = compiled_plain(names[i]);
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
    /* (The steps array, with every step's attributes, is the largest
     * allocation: a third of this small model's weights.) */
    assert_true(t.largest < (size_t)loaded->region_bytes[DFG_REGION_WEIGHTS] / 2);
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

/* Reads a whole file (caller frees). */
static uint8_t *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n > 0);
    rewind(f);
    uint8_t *data = malloc((size_t)n);
    assert_non_null(data);
    assert_int_equal(fread(data, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return data;
}

/* dfg_program_save writes the weights from where they live: the file is
 * the serialised bytes, its weights section is the weights region
 * gathered into one buffer (as every saved file so far had it), and a
 * file loaded (mapped) and saved again is the same file. */
static void test_saved_weights_as_gathered(void **state)
{
    (void)state;
    char path[] = "/tmp/dfg-test-program-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    static const char *const names[] = {"fixture", "mlp", "cnn", "transformer"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        dfg_program *p = compiled(names[i]), *loaded = NULL;
        size_t size, saved_size, again_size, weights_size;
        uint8_t *bytes = serialize(p, &size);
        assert_int_equal(dfg_program_save(p, path), DFG_OK);
        uint8_t *saved = read_file(path, &saved_size);
        assert_int_equal(saved_size, size);
        assert_memory_equal(saved, bytes, size);
        size_t region = (size_t)p->region_bytes[DFG_REGION_WEIGHTS];
        uint8_t *gathered = malloc(region + 1);
        assert_non_null(gathered);
        dfg_program_gather_weights(p, gathered);
        uint8_t *weights = section(saved, DFG_SECTION_WEIGHTS, &weights_size);
        assert_int_equal(weights_size, region);
        assert_memory_equal(weights, gathered, region);
        assert_int_equal(dfg_program_load(path, NULL, &loaded), DFG_OK);
        assert_int_equal(dfg_program_save(loaded, path), DFG_OK);
        uint8_t *again = read_file(path, &again_size);
        assert_int_equal(again_size, size);
        assert_memory_equal(again, bytes, size);
        free(again);
        free(gathered);
        free(saved);
        free(bytes);
        dfg_program_destroy(loaded);
        dfg_program_destroy(p);
    }
    unlink(path);
}

/* The process's peak resident set in bytes (VmHWM); 0 if unknown. */
static uint64_t peak_resident(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long long kib = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %llu kB", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return (uint64_t)kib * 1024u;
}

/* The resident set now, in bytes (statm's second field). */
static uint64_t resident(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long size = 0, pages = 0;
    if (f && fscanf(f, "%llu %llu", &size, &pages) != 2)
        pages = 0;
    if (f)
        fclose(f);
    return (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* Saving a program holding 64 MiB of weights makes no copy of them: the
 * peak resident set during the save (VmHWM, reset first through
 * /proc/self/clear_refs) stays within a quarter of the weights of the
 * resident set before it (a save that gathered them into a buffer, then
 * that into the file's image, held two copies). */
static void test_save_copies_no_weights(void **state)
{
    (void)state;
    enum { ROWS = 4096, COLS = 4096 }; /* 64 MiB of f32 */
    const int64_t w_shape[2] = {ROWS, COLS}, x_shape[2] = {1, ROWS};
    float *w = malloc((size_t)ROWS * COLS * sizeof *w);
    assert_non_null(w);
    for (size_t i = 0; i < (size_t)ROWS * COLS; i++)
        w[i] = (float)(i % 1000) * 1e-3f;
    dfg_graph *g;
    dfg_value x, wv, y;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 2, x_shape, &x), DFG_OK);
    assert_int_equal(dfg_graph_weight(g, "w", DFG_F32, 2, w_shape, w, &wv),
                     DFG_OK);
    free(w);
    assert_int_equal(dfg_matmul(g, x, wv, &y), DFG_OK);
    assert_int_equal(dfg_graph_output(g, y, "y"), DFG_OK);
    dfg_program *p;
    assert_int_equal(dfg_compile(g, NULL, &p), DFG_OK);
    dfg_graph_destroy(g);
    char path[] = "/tmp/dfg-test-program-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    FILE *reset = fopen("/proc/self/clear_refs", "w");
    if (!reset || fputs("5", reset) < 0 || fclose(reset) != 0) {
        unlink(path);
        dfg_program_destroy(p);
        skip(); /* the peak cannot be reset here */
    }
    uint64_t before = resident();
    assert_int_equal(dfg_program_save(p, path), DFG_OK);
    uint64_t peak = peak_resident(), weights = (uint64_t)ROWS * COLS * 4u;
    assert_true(before > 0 && peak > 0);
    if (peak > before + weights / 4)
        fail_msg("saving %llu bytes of weights raised the peak resident set "
                 "by %llu bytes", (unsigned long long)weights,
                 (unsigned long long)(peak - before));
    unlink(path);
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
        dfg_program *p = compiled_unfused(names[i]);
        uint8_t *data = NULL;
        size_t size = 0, size_v2 = 0;
        assert_int_equal(dfg_program_serialize_version(p, 1, NULL, &data, &size),
                         DFG_OK);
        free(serialize(p, &size_v2));
        assert_true(size <= size_v2);
        dfg_program *loaded = load(data, size);
        /* Tiled execution's figures are version 5's: 0 from version 1. */
        dfg_plan_stats *st = &loaded->stats;
        assert_true(st->op_by_op_lower_bound_bytes == 0 && st->tiles == 0 &&
                    st->tiled_regions == 0 && st->tiling_extra_flops == 0);
        st->op_by_op_lower_bound_bytes = p->stats.op_by_op_lower_bound_bytes;
        st->tiling_extra_flops = p->stats.tiling_extra_flops;
        st->tiled_regions = p->stats.tiled_regions;
        st->tiles = p->stats.tiles;
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

/* p run on the input of seed 3 gives y = x + w. */
static void expect_sum(const dfg_program *p)
{
    uint8_t *out[1] = {0};
    assert_int_equal(run_program(p, 3, out), 0);
    uint64_t rng = 3;
    float x[6];
    fixture_fill(&rng, x, 6);
    const float *w = (const float *)p->tensors[1].data;
    const float *y = (const float *)out[0];
    for (int i = 0; i < 6; i++)
        assert_float_equal(y[i], x[i] + w[i], 1e-6);
    free(out[0]);
}

static void test_hand_built_round_trip_and_run(void **state)
{
    (void)state;
    dfg_program *p = hand_built();
    assert_int_equal(dfg_program_verify(p), DFG_OK);
    round_trip(p);
    expect_sum(p);
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
    expect_sum(loaded);
    free(data);
    dfg_program_destroy(loaded);
    dfg_program_destroy(p);
}

/* A program records the backend whose workspace rule it was compiled
 * with; a file from before that field (an 80-byte plan section) loads as
 * compiled without one, and a malformed name is refused. */
static void test_workspace_rule_recorded(void **state)
{
    (void)state;
    /* default options but layouts: the CPU's rule */
    dfg_program *p = compiled_plain("cnn");
    assert_string_equal(p->workspace_rule, "cpu");
    size_t size = 0;
    uint8_t *data = serialize(p, &size);
    dfg_program *loaded = load(data, size);
    assert_string_equal(loaded->workspace_rule, "cpu");
    dfg_program_destroy(loaded);

    uint8_t *old = copy_bytes(data, size);
    size_t plan_size = 0;
    uint8_t *plan = section(old, DFG_SECTION_PLAN, &plan_size);
    assert_int_equal(plan_size, DFG_FILE_PLAN_BYTES);
    for (uint32_t i = 0; i < DFG_FILE_N_SECTIONS; i++)
        if (dfg_load_u32le(entry(old, i)) == DFG_SECTION_PLAN)
            store_u64(entry(old, i) + 16, DFG_FILE_PLAN_BYTES_WITHOUT_RULE);
    fix_checksums_in(old, size);
    loaded = load(old, size);
    assert_string_equal(loaded->workspace_rule, "");
    dfg_program_destroy(loaded);

    free(old);
    plan = section(data, DFG_SECTION_PLAN, &plan_size);
    memcpy(plan + DFG_FILE_PLAN_BYTES_WITHOUT_RULE, "CPU!", 4);
    fix_checksums_in(data, size);
    expect_rejected(data, size, "workspace rule");
    free(data);
    dfg_program_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32),
        cmocka_unit_test(test_round_trip_compiled),
        cmocka_unit_test(test_save_and_load_a_file),
        cmocka_unit_test(test_saved_weights_as_gathered),
        cmocka_unit_test(test_save_copies_no_weights),
        cmocka_unit_test(test_older_versions),
        cmocka_unit_test(test_hand_built_round_trip_and_run),
        cmocka_unit_test(test_in_place_output_loads_and_runs),
        cmocka_unit_test(test_workspace_rule_recorded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
