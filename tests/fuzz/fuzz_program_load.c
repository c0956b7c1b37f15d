/* libFuzzer target for dfg_program_load_memory and dfg_program_load, the
 * loader that maps a file (scripts/fuzz-program-load builds and runs it
 * with clang, AddressSanitizer and UBSan).
 *
 * Each input is loaded as it is, and with every checksum recomputed,
 * since a mutation caught by a CRC never reaches the decoder and the
 * validator behind it; the latter from memory and mapped from a file
 * (the loaders differ only past the checks). Whatever loads must pass the
 * plan verifier and serialise again. Any crash, hang, leak or sanitizer
 * report is a finding. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "dfg/dfg.h"
#include "program/program.h"
#include "program/program_format.h"
#include "util/byte_reader.h"
#include "util/crc32.h"

static void store_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Recomputes the section and table CRCs of a file whose table lies
 * inside it; leaves anything else alone. */
static void fix_checksums(uint8_t *f, size_t size)
{
    if (size < DFG_FILE_HEADER_BYTES)
        return;
    uint32_t n = dfg_load_u32le(f + 8);
    if (n > DFG_FILE_MAX_SECTIONS ||
        DFG_FILE_HEADER_BYTES + (size_t)n * DFG_FILE_SECTION_ENTRY_BYTES > size)
        return;
    for (uint32_t i = 0; i < n; i++) {
        uint8_t *e = f + DFG_FILE_HEADER_BYTES + i * DFG_FILE_SECTION_ENTRY_BYTES;
        uint64_t offset = dfg_load_u64le(e + 8), length = dfg_load_u64le(e + 16);
        if (offset <= size && length <= size - offset)
            store_u32(e + 24, dfg_crc32(f + offset, (size_t)length));
    }
    store_u32(f + 12, dfg_crc32(f + DFG_FILE_HEADER_BYTES,
                                (size_t)n * DFG_FILE_SECTION_ENTRY_BYTES));
}

/* dfg_program_load of the bytes, written to a file of this process. */
static dfg_status load_mapped(const uint8_t *data, size_t size,
                              dfg_program **out)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/dfg-fuzz-program-%ld.dfgp",
             (long)getpid());
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, data, size) != (ssize_t)size)
        abort();
    close(fd);
    dfg_status status = dfg_program_load(path, NULL, out);
    unlink(path);
    return status;
}

static void load_and_check(const uint8_t *data, size_t size, int mapped)
{
    dfg_program *program = NULL;
    dfg_status status = mapped ? load_mapped(data, size, &program)
                               : dfg_program_load_memory(data, size, NULL,
                                                         &program);
    if (status != DFG_OK) {
        if (status != DFG_ERR_FORMAT || program != NULL || !dfg_last_error()[0])
            abort();
        return;
    }
    if (dfg_program_verify(program) != DFG_OK)
        abort();
    uint8_t *again = NULL;
    size_t again_size = 0;
    if (dfg_program_serialize(program, NULL, &again, &again_size) != DFG_OK)
        abort();
    free(again);
    dfg_program_destroy(program);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Exactly `size` bytes, so that ASan sees any read past the end. */
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    load_and_check(copy, size, 0);
    fix_checksums(copy, size);
    for (int mapped = 0; mapped < 2; mapped++)
        load_and_check(copy, size, mapped);
    free(copy);
    return 0;
}
