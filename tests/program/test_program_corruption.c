/* Program files (src/program/program_load.c, program_validate.c): a loader that
 * rejects every invalid program, malformed attribute, truncated,
 * corrupted or hostile file with DFG_ERR_FORMAT and a message, without
 * large allocations, and never crashes. Run it under ASan/UBSan
 * (scripts/test does) to catch out-of-bounds reads. Round trips are in
 * test_program_file.c; the helpers both use are in program_file_check.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dfg/dfg.h"
#include "program/program_format.h"
#include "tests/program/program_file_check.h"
#include "tests/support/program_fixtures.h"
#include "util/crc32.h"

/* --- invalid programs: the hand-built y = x + w, one field wrong */

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
static void f64_for_arithmetic(dfg_program *p) { p->tensors[0].type.dtype = DFG_F64; p->tensors[0].bytes = 48; }
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
        {"not accepted", f64_for_arithmetic},
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
        {DFG_SECTION_TENSORS, 8 + 12, DFG_DTYPE_COUNT, "dtype"}, /* the first code past the table */
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

/* The plan's math flags (dfg_program_math_flags): a 16-bit program's
 * reloads as written; words no writer makes (both 16-bit bits, tf32
 * beside f16, an unknown bit) are rejected. */
static void test_math_flags(void **state)
{
    (void)state;
    dfg_program *p = compiled("fixture");
    p->half_products = DFG_F16;
    size_t size = 0, plan_size = 0;
    uint8_t *data = serialize(p, &size);
    dfg_program *back = NULL;
    assert_int_equal(dfg_program_load_memory(data, size, NULL, &back), DFG_OK);
    assert_int_equal(back->half_products, DFG_F16);
    dfg_program_destroy(back);
    static const uint32_t bad[] = {DFG_MATH_F16 | DFG_MATH_BF16,
                                   DFG_MATH_TF32 | DFG_MATH_F16, 8u};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        uint8_t *f = copy_bytes(data, size);
        uint8_t *plan = section(f, DFG_SECTION_PLAN, &plan_size);
        assert_int_equal(plan_size, DFG_FILE_PLAN_BYTES);
        assert_int_equal(dfg_load_u32le(plan + DFG_FILE_PLAN_BYTES_WITHOUT_MATH),
                         DFG_MATH_F16);
        store_u32(plan + DFG_FILE_PLAN_BYTES_WITHOUT_MATH, bad[k]);
        fix_checksums_in(f, size);
        expect_rejected(f, size, "math flags");
        free(f);
    }
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
        cmocka_unit_test(test_invalid_programs_are_rejected),
        cmocka_unit_test(test_invalid_attribute_bytes),
        cmocka_unit_test(test_truncated_files),
        cmocka_unit_test(test_hostile_headers),
        cmocka_unit_test(test_math_flags),
        cmocka_unit_test(test_random_corruption),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
