/* What the program-file tests share: test_program_file.c (round trips,
 * older versions, hand-built programs) and test_program_corruption.c
 * (every malformed or hostile file rejected). Built into both test
 * executables with program_fixtures.c (tests/program/meson.build); a helper used
 * by only one of them stays in that file. Failures end the running cmocka
 * test; returned bytes and programs belong to the caller (free and
 * dfg_program_destroy). */
#ifndef DFG_TEST_PROGRAM_FILE_CHECK_H
#define DFG_TEST_PROGRAM_FILE_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "dfg/dfg.h"

/* --- bytes of a program file */

/* dfg_program_serialize, which must succeed (caller frees). */
uint8_t *serialize(const dfg_program *p, size_t *size);
/* A fresh malloc of exactly size bytes (at least 1), so that ASan sees a
 * read past the end (caller frees). */
uint8_t *copy_bytes(const uint8_t *data, size_t size);
/* Little-endian stores into file bytes. */
void store_u32(uint8_t *p, uint32_t v);
void store_u64(uint8_t *p, uint64_t v);
/* Entry i of the section table. */
uint8_t *entry(uint8_t *file, uint32_t i);
/* Where section `type` lies in a well-formed file; *size its length. */
uint8_t *section(uint8_t *file, uint32_t type, size_t *size);
/* Recomputes every checksum, so that a corruption reaches the decoder
 * and the validator instead of stopping at a CRC. */
void fix_checksums_in(uint8_t *file, size_t size);

/* --- loading */

/* An allocator that records its largest request and counts live blocks:
 * {&t, tracking_alloc, tracking_free}. */
typedef struct tracking {
    size_t largest, live;
} tracking;
void *tracking_alloc(void *ctx, size_t size, size_t alignment);
void tracking_free(void *ctx, void *ptr);

/* dfg_program_load of the bytes, written to a file first: the loader
 * that maps the file and reads the weights there. */
dfg_status load_mapped(const uint8_t *data, size_t size,
                       const dfg_allocator *allocator, dfg_program **out);
/* Loads bytes that must be rejected, from memory and mapped from a file:
 * DFG_ERR_FORMAT, a message (containing needle unless it is NULL), no
 * allocation much larger than the file, nothing leaked. */
void expect_rejected(const uint8_t *data, size_t size, const char *needle);

/* --- programs */

/* Runs a program on seeded random inputs (any dtype: raw random bytes
 * would give NaNs, so floats get [-1, 1) and the rest zeros); returns 0
 * on success. outputs may be NULL; else outputs[i] is a malloc'd copy of
 * output i (caller frees). */
int run_program(const dfg_program *p, uint64_t seed, uint8_t **outputs);
/* "fixture" (program_fixtures.h, seed 42), or the bundled model name,
 * compiled. */
dfg_program *compiled(const char *name);
/* The same without fusion (every step's attributes fit file version 1;
 * without fusion the layout pass does not run either). */
dfg_program *compiled_unfused(const char *name);
/* The same with every tensor plain (no layout pass): what file versions
 * before 5 can hold. */
dfg_program *compiled_plain(const char *name);
/* y = x + w over [2, 3] f32, with x an input and w a weight, built field
 * by field without the compiler: one add step, a no-reuse plan with x at
 * offset 0 and y at 256 of a 512-byte arena. It verifies; the tests
 * mutate it. */
dfg_program *hand_built(void);

#endif
