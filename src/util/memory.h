/* Allocation through a dfg_allocator (NULL: the C library), and the one
 * byte-level rule every boundary shares (bool bytes as 0 or 1). */
#ifndef DFG_MEMORY_H
#define DFG_MEMORY_H

#include <stddef.h>
#include <stdint.h>
#include "dfg/allocator.h"

/* A copy of *allocator, or the C library's if allocator is NULL. */
dfg_allocator dfg_allocator_or_default(const dfg_allocator *allocator);
/* 1 if allocator is NULL or dfg_allocator_or_default(NULL)'s: the
 * library may then take memory from the system by other ways (a mapping)
 * without going behind a caller's allocator. */
int dfg_allocator_is_default(const dfg_allocator *allocator);

/* 64-byte aligned; NULL on failure or size 0 overflowing. */
void *dfg_alloc(const dfg_allocator *allocator, size_t size);
/* Zero-filled dfg_alloc of count * size bytes; NULL on overflow. */
void *dfg_calloc(const dfg_allocator *allocator, size_t count, size_t size);
void dfg_free(const dfg_allocator *allocator, void *ptr);
/* realloc on top of an allocator, which has none: a new block of new_size
 * bytes holding the first min(old_size, new_size) bytes of ptr (which may
 * be NULL with old_size 0), ptr freed. NULL on failure, ptr left as it
 * was, so the caller keeps its old capacity. */
void *dfg_realloc(const dfg_allocator *allocator, void *ptr, size_t old_size,
                  size_t new_size);
/* Gives the heap's free memory back to the system where the C library
 * can (glibc's malloc_trim): after work that freed much (memory first's
 * many programs), so that the process does not go on holding it. */
void dfg_heap_trim(void);
/* A copy of a NUL-terminated string. */
char *dfg_strdup(const dfg_allocator *allocator, const char *s);

/* n bool bytes of src as 0 or 1 into dst (any nonzero byte is true, as
 * ONNX Runtime reads them; dst may be src): the kernels assume 0 or 1. */
void dfg_bool_normalise(uint8_t *dst, const uint8_t *src, size_t n);

#endif
