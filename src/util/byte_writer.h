/* A growable little-endian byte buffer, for writing program files.
 *
 * An allocation failure sets `failed`; later writes do nothing, so an
 * encoder writes everything and checks once. The buffer is owned by the
 * writer until dfg_byte_writer_release() hands it over (free it with the
 * same allocator) or dfg_byte_writer_dispose() frees it. */
#ifndef DFG_BYTE_WRITER_H
#define DFG_BYTE_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include "dfg/allocator.h"

typedef struct dfg_byte_writer {
    dfg_allocator allocator;
    uint8_t *data;
    size_t size;
    size_t capacity;
    int failed;
} dfg_byte_writer;

void dfg_byte_writer_init(dfg_byte_writer *w, const dfg_allocator *allocator);
void dfg_byte_writer_dispose(dfg_byte_writer *w);
/* The bytes written; the writer is left empty. */
uint8_t *dfg_byte_writer_release(dfg_byte_writer *w, size_t *size);

void dfg_write_bytes(dfg_byte_writer *w, const void *data, size_t n);
void dfg_write_zeros(dfg_byte_writer *w, size_t n);
void dfg_write_u32(dfg_byte_writer *w, uint32_t value);
void dfg_write_u64(dfg_byte_writer *w, uint64_t value);
void dfg_write_i32(dfg_byte_writer *w, int32_t value);
void dfg_write_i64(dfg_byte_writer *w, int64_t value);
void dfg_write_f32(dfg_byte_writer *w, float value);
/* Pads with zeros to a multiple of alignment. */
void dfg_write_align(dfg_byte_writer *w, size_t alignment);
/* Overwrites 4 bytes already written at pos. */
void dfg_patch_u32(dfg_byte_writer *w, size_t pos, uint32_t value);

#endif
