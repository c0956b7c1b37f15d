/* Reference-counted, read-only bytes that graphs and programs share, so
 * that a model's weights exist once in the process: a block from an
 * allocator (filled by its creator before it is shared) or a read-only
 * private mapping of a file.
 *
 * Whoever stores a pointer into the bytes holds a reference
 * (dfg_shared_bytes_retain) and drops it with dfg_shared_bytes_release;
 * the last release frees the block or unmaps the file. The count is
 * atomic, so holders on different threads may retain and release. The
 * bytes themselves are never written once a second holder exists. */
#ifndef DFG_SHARED_BYTES_H
#define DFG_SHARED_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include "dfg/allocator.h"
#include "dfg/status.h"

typedef struct dfg_shared_bytes dfg_shared_bytes;

/* size bytes (64-byte aligned, uninitialized) with one reference; NULL when
 * out of memory. The creator fills them through dfg_shared_bytes_fill. */
dfg_shared_bytes *dfg_shared_bytes_alloc(const dfg_allocator *allocator,
                                         size_t size);
/* The writable bytes of a block from dfg_shared_bytes_alloc, for its
 * creator, before anyone else holds it. */
uint8_t *dfg_shared_bytes_fill(dfg_shared_bytes *bytes);

/* size zero bytes with one reference; NULL when out of memory. With the
 * default allocator a large block is an anonymous mapping, whose pages
 * take no memory until written (reads see the kernel's zero page); with
 * a caller's allocator, a block from it, zero-filled. Not a file mapping
 * (dfg_shared_bytes_is_mapped: 0), and not to be written: its users read
 * it. */
dfg_shared_bytes *dfg_shared_bytes_zeros(const dfg_allocator *allocator,
                                         size_t size);
/* Takes over block (size bytes from dfg_alloc with allocator) with one
 * reference; NULL when out of memory, block then freed. */
dfg_shared_bytes *dfg_shared_bytes_adopt(const dfg_allocator *allocator,
                                         void *block, size_t size);

/* Maps the regular file at path read-only, with one reference. Files
 * larger than max_bytes are refused (DFG_ERR_FORMAT) before mapping; an
 * empty file gives an empty block. The mapping is private: if the file
 * changes while it is mapped, what the process sees is undefined (pages
 * already read keep the old bytes, others may show the new ones), and a
 * file truncated under it makes reads past the new end fault
 * (docs/program-format.md). */
dfg_status dfg_shared_bytes_map(const char *path, uint64_t max_bytes,
                                const dfg_allocator *allocator,
                                dfg_shared_bytes **out);

const uint8_t *dfg_shared_bytes_data(const dfg_shared_bytes *bytes);
/* 1 if the caller's reference is the only one. */
int dfg_shared_bytes_held_once(const dfg_shared_bytes *bytes);
size_t dfg_shared_bytes_size(const dfg_shared_bytes *bytes);
/* 1 if the bytes are a file mapping. */
int dfg_shared_bytes_is_mapped(const dfg_shared_bytes *bytes);
/* 1 if the bytes are dfg_shared_bytes_zeros' anonymous mapping: pages
 * that take no memory while no one writes them (reading them maps the
 * kernel's zero page, not counted as resident). */
int dfg_shared_bytes_is_zero_pages(const dfg_shared_bytes *bytes);
/* 1 if the bytes are a block of the default allocator (the C library's
 * heap), not a mapping or a caller's allocator's block. */
int dfg_shared_bytes_is_heap(const dfg_shared_bytes *bytes);

/* Lets the system reclaim the memory behind [data, data + size), inside a
 * mapping, that the caller has copied and will not read soon: the pages
 * wholly inside leave the process's resident set (and come back from the
 * file if read again). Nothing happens for an allocated block. */
void dfg_shared_bytes_drop_pages(const dfg_shared_bytes *bytes,
                                 const void *data, size_t size);

/* The same for a caller that knows [data, data + size) either lies in a
 * read-only private file mapping (dropped pages come back from the file)
 * or is memory no one reads again (anonymous pages read back as zeros). */
void dfg_drop_pages(const void *data, size_t size);

void dfg_shared_bytes_retain(dfg_shared_bytes *bytes);
/* NULL is ignored. */
void dfg_shared_bytes_release(dfg_shared_bytes *bytes);

#endif
