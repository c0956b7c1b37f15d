/* CRC-32 (IEEE 802.3, the zlib/PNG polynomial), for program file
 * sections. */
#ifndef DFG_CRC32_H
#define DFG_CRC32_H

#include <stddef.h>
#include <stdint.h>

uint32_t dfg_crc32(const void *data, size_t size);
/* The CRC-32 of bytes whose first part has CRC crc, followed by size more
 * at data: dfg_crc32_extend(dfg_crc32(a, n), b, m) is the CRC-32 of the
 * n + m bytes a then b, and dfg_crc32_extend(0, data, size) is
 * dfg_crc32(data, size). */
uint32_t dfg_crc32_extend(uint32_t crc, const void *data, size_t size);

#endif
