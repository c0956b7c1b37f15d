/* malloc & co., wrapped at link time (libc_calls.h). */
#include <stddef.h>

#include "libc_calls.h"

static _Atomic long libc_calls;

void *__real_malloc(size_t size);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *ptr, size_t size);
void *__real_aligned_alloc(size_t alignment, size_t size);

void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t count, size_t size);
void *__wrap_realloc(void *ptr, size_t size);
void __wrap_free(void *ptr);
int __wrap_posix_memalign(void **ptr, size_t alignment, size_t size);
void *__wrap_aligned_alloc(size_t alignment, size_t size);

void *__wrap_malloc(size_t size) { libc_calls++; return __real_malloc(size); }
void *__wrap_calloc(size_t count, size_t size) { libc_calls++; return __real_calloc(count, size); }
void *__wrap_realloc(void *ptr, size_t size) { libc_calls++; return __real_realloc(ptr, size); }
void __wrap_free(void *ptr) { libc_calls++; __real_free(ptr); }
int __wrap_posix_memalign(void **ptr, size_t alignment, size_t size)
{
    libc_calls++;
    return __real_posix_memalign(ptr, alignment, size);
}
void *__wrap_aligned_alloc(size_t alignment, size_t size)
{
    libc_calls++;
    return __real_aligned_alloc(alignment, size);
}

long libc_calls_count(void) { return libc_calls; }
