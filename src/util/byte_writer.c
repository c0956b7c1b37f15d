#include "util/byte_writer.h"

#include <string.h>
#include "util/memory.h"

void dfg_byte_writer_init(dfg_byte_writer *w, const dfg_allocator *allocator)
{
    memset(w, 0, sizeof *w);
    w->allocator = dfg_allocator_or_default(allocator);
}

void dfg_byte_writer_dispose(dfg_byte_writer *w)
{
    dfg_free(&w->allocator, w->data);
    w->data = NULL;
    w->size = w->capacity = 0;
}

uint8_t *dfg_byte_writer_release(dfg_byte_writer *w, size_t *size)
{
    uint8_t *data = w->data;
    *size = w->size;
    w->data = NULL;
    w->size = w->capacity = 0;
    return data;
}

/* Room for n more bytes; 0 on success. */
static int reserve(dfg_byte_writer *w, size_t n)
{
    if (w->failed)
        return -1;
    if (n <= w->capacity - w->size)
        return 0;
    size_t capacity = w->capacity ? w->capacity : 4096;
    while (capacity - w->size < n) {
        if (capacity > SIZE_MAX / 2) {
            w->failed = 1;
            return -1;
        }
        capacity *= 2;
    }
    uint8_t *data = dfg_alloc(&w->allocator, capacity);
    if (!data) {
        w->failed = 1;
        return -1;
    }
    if (w->size)
        memcpy(data, w->data, w->size);
    dfg_free(&w->allocator, w->data);
    w->data = data;
    w->capacity = capacity;
    return 0;
}

void dfg_write_bytes(dfg_byte_writer *w, const void *data, size_t n)
{
    if (n == 0 || reserve(w, n) != 0)
        return;
    memcpy(w->data + w->size, data, n);
    w->size += n;
}

void dfg_write_zeros(dfg_byte_writer *w, size_t n)
{
    if (n == 0 || reserve(w, n) != 0)
        return;
    memset(w->data + w->size, 0, n);
    w->size += n;
}

static void store_u32le(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

void dfg_write_u32(dfg_byte_writer *w, uint32_t value)
{
    uint8_t bytes[4];
    store_u32le(bytes, value);
    dfg_write_bytes(w, bytes, 4);
}

void dfg_write_u64(dfg_byte_writer *w, uint64_t value)
{
    dfg_write_u32(w, (uint32_t)value);
    dfg_write_u32(w, (uint32_t)(value >> 32));
}

void dfg_write_i32(dfg_byte_writer *w, int32_t value) { dfg_write_u32(w, (uint32_t)value); }
void dfg_write_i64(dfg_byte_writer *w, int64_t value) { dfg_write_u64(w, (uint64_t)value); }

void dfg_write_f32(dfg_byte_writer *w, float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    dfg_write_u32(w, bits);
}

void dfg_write_align(dfg_byte_writer *w, size_t alignment)
{
    size_t rem = w->size % alignment;
    if (rem)
        dfg_write_zeros(w, alignment - rem);
}

void dfg_patch_u32(dfg_byte_writer *w, size_t pos, uint32_t value)
{
    if (!w->failed && pos <= w->size && w->size - pos >= 4)
        store_u32le(w->data + pos, value);
}
