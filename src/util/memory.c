#include "util/memory.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void *libc_alloc(void *ctx, size_t size, size_t alignment)
{
    (void)ctx;
    void *ptr = NULL;
    if (alignment < sizeof(void *))
        alignment = sizeof(void *);
    if (posix_memalign(&ptr, alignment, size ? size : 1) != 0)
        return NULL;
    return ptr;
}

static void libc_free(void *ctx, void *ptr)
{
    (void)ctx;
    free(ptr);
}

dfg_allocator dfg_allocator_or_default(const dfg_allocator *allocator)
{
    if (allocator)
        return *allocator;
    return (dfg_allocator){NULL, libc_alloc, libc_free};
}

int dfg_allocator_is_default(const dfg_allocator *allocator)
{
    return !allocator || allocator->alloc == libc_alloc;
}

void *dfg_alloc(const dfg_allocator *allocator, size_t size)
{
    if (!allocator)
        return libc_alloc(NULL, size, 64);
    return allocator->alloc(allocator->ctx, size ? size : 1, 64);
}

void *dfg_calloc(const dfg_allocator *allocator, size_t count, size_t size)
{
    if (size != 0 && count > SIZE_MAX / size)
        return NULL;
    void *ptr = dfg_alloc(allocator, count * size);
    if (ptr)
        memset(ptr, 0, count * size);
    return ptr;
}

void dfg_free(const dfg_allocator *allocator, void *ptr)
{
    if (!ptr)
        return;
    if (!allocator)
        libc_free(NULL, ptr);
    else
        allocator->free(allocator->ctx, ptr);
}

void *dfg_realloc(const dfg_allocator *allocator, void *ptr, size_t old_size,
                  size_t new_size)
{
    void *bigger = dfg_alloc(allocator, new_size);
    if (!bigger)
        return NULL;
    if (ptr)
        memcpy(bigger, ptr, old_size < new_size ? old_size : new_size);
    dfg_free(allocator, ptr);
    return bigger;
}

void dfg_heap_trim(void)
{
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

char *dfg_strdup(const dfg_allocator *allocator, const char *s)
{
    size_t n = strlen(s) + 1;
    char *copy = dfg_alloc(allocator, n);
    if (copy)
        memcpy(copy, s, n);
    return copy;
}

void dfg_bool_normalise(uint8_t *dst, const uint8_t *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = src[i] != 0;
}
