/* Bounds-checked little-endian reading from a byte buffer.
 *
 * A read past the end, or a value that does not fit, sets `failed` and
 * returns 0; later reads keep failing, so a decoder can read a whole
 * record and check `failed` once. The reader never owns the buffer. */
#ifndef DFG_BYTE_READER_H
#define DFG_BYTE_READER_H

#include <stddef.h>
#include <stdint.h>

typedef struct dfg_byte_reader {
    const uint8_t *data;
    size_t size;
    size_t pos;
    int failed;
} dfg_byte_reader;

dfg_byte_reader dfg_byte_reader_make(const void *data, size_t size);

static inline size_t dfg_byte_reader_left(const dfg_byte_reader *r)
{
    return r->failed ? 0 : r->size - r->pos;
}

uint32_t dfg_read_u32(dfg_byte_reader *r);
uint64_t dfg_read_u64(dfg_byte_reader *r);
int32_t dfg_read_i32(dfg_byte_reader *r);
int64_t dfg_read_i64(dfg_byte_reader *r);
float dfg_read_f32(dfg_byte_reader *r);
/* A pointer to the next n bytes (NULL and failed if fewer are left). */
const uint8_t *dfg_read_bytes(dfg_byte_reader *r, size_t n);

/* Little-endian loads from memory known to hold enough bytes. */
uint32_t dfg_load_u32le(const uint8_t *p);
uint64_t dfg_load_u64le(const uint8_t *p);

#endif
