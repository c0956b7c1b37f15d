#include "util/byte_reader.h"

#include <string.h>

dfg_byte_reader dfg_byte_reader_make(const void *data, size_t size)
{
    return (dfg_byte_reader){data, data ? size : 0, 0, 0};
}

uint32_t dfg_load_u32le(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

uint64_t dfg_load_u64le(const uint8_t *p)
{
    return (uint64_t)dfg_load_u32le(p) | (uint64_t)dfg_load_u32le(p + 4) << 32;
}

const uint8_t *dfg_read_bytes(dfg_byte_reader *r, size_t n)
{
    if (r->failed || n > r->size - r->pos) {
        r->failed = 1;
        return NULL;
    }
    const uint8_t *p = r->data + r->pos;
    r->pos += n;
    return p;
}

uint32_t dfg_read_u32(dfg_byte_reader *r)
{
    const uint8_t *p = dfg_read_bytes(r, 4);
    return p ? dfg_load_u32le(p) : 0;
}

uint64_t dfg_read_u64(dfg_byte_reader *r)
{
    const uint8_t *p = dfg_read_bytes(r, 8);
    return p ? dfg_load_u64le(p) : 0;
}

int32_t dfg_read_i32(dfg_byte_reader *r)
{
    /* Two's complement conversion without implementation-defined casts. */
    uint32_t u = dfg_read_u32(r);
    return u <= INT32_MAX ? (int32_t)u : -(int32_t)(~u) - 1;
}

int64_t dfg_read_i64(dfg_byte_reader *r)
{
    uint64_t u = dfg_read_u64(r);
    return u <= INT64_MAX ? (int64_t)u : -(int64_t)(~u) - 1;
}

float dfg_read_f32(dfg_byte_reader *r)
{
    uint32_t bits = dfg_read_u32(r);
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}
