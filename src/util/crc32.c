#include "util/crc32.h"

/* The byte-at-a-time table, computed by the preprocessor and compiler:
 * entry n is n shifted through the reflected polynomial eight times. */
#define STEP(c) (((c) >> 1) ^ (((c) & 1u) ? 0xedb88320u : 0u))
#define ENTRY(n) STEP(STEP(STEP(STEP(STEP(STEP(STEP(STEP((uint32_t)(n)))))))))
#define ROW4(n) ENTRY(n), ENTRY((n) + 1), ENTRY((n) + 2), ENTRY((n) + 3)
#define ROW16(n) ROW4(n), ROW4((n) + 4), ROW4((n) + 8), ROW4((n) + 12)
#define ROW64(n) ROW16(n), ROW16((n) + 16), ROW16((n) + 32), ROW16((n) + 48)

static const uint32_t table[256] = {
    ROW64(0), ROW64(64), ROW64(128), ROW64(192),
};

uint32_t dfg_crc32_extend(uint32_t crc, const void *data, size_t size)
{
    const uint8_t *p = data;
    crc ^= 0xffffffffu;
    for (size_t i = 0; i < size; i++)
        crc = (crc >> 8) ^ table[(crc ^ p[i]) & 0xffu];
    return crc ^ 0xffffffffu;
}

uint32_t dfg_crc32(const void *data, size_t size)
{
    return dfg_crc32_extend(0, data, size);
}
