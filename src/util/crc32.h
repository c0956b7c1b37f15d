/* CRC-32 (IEEE 802.3, the zlib/PNG polynomial), for program file
 * sections. */
#ifndef DFG_CRC32_H
#define DFG_CRC32_H

#include <stddef.h>
#include <stdint.h>

uint32_t dfg_crc32(const void *data, size_t size);

#endif
