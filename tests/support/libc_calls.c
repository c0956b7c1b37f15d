/* malloc & co., wrapped at link time (libc_calls.h). */
#include <stddef.h>

#include "tests/support/libc_calls.h"

static _Atomic long libc_calls;
static void *_Atomic last_caller;

#define COUNT_CALL() \
    do { \
        libc_calls++; \
        last_caller = __builtin_return_address(0); \
    } while (0)

void *__real_malloc(size_t size);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *ptr, size_t size);
void *__real_aligned_alloc(size_t alignment, size_t size);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);

void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t count, size_t size);
void *__wrap_realloc(void *ptr, size_t size);
void __wrap_free(void *ptr);
int __wrap_posix_memalign(void **ptr, size_t alignment, size_t size);
void *__wrap_aligned_alloc(size_t alignment, size_t size);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

void *__wrap_malloc(size_t size) { COUNT_CALL(); return __real_malloc(size); }
void *__wrap_calloc(size_t count, size_t size) { COUNT_CALL(); return __real_calloc(count, size); }
void *__wrap_realloc(void *ptr, size_t size) { COUNT_CALL(); return __real_realloc(ptr, size); }
void __wrap_free(void *ptr) { COUNT_CALL(); __real_free(ptr); }
int __wrap_posix_memalign(void **ptr, size_t alignment, size_t size)
{
    COUNT_CALL();
    return __real_posix_memalign(ptr, alignment, size);
}
void *__wrap_aligned_alloc(size_t alignment, size_t size)
{
    COUNT_CALL();
    return __real_aligned_alloc(alignment, size);
}
char *__wrap_strdup(const char *s) { COUNT_CALL(); return __real_strdup(s); }
char *__wrap_strndup(const char *s, size_t n)
{
    COUNT_CALL();
    return __real_strndup(s, n);
}

long libc_calls_count(void) { return libc_calls; }
void *libc_calls_last_caller(void) { return last_caller; }

static void *counting_alloc(void *ctx, size_t size, size_t alignment)
{
    ((counting *)ctx)->allocs++;
    ((counting *)ctx)->bytes += (long)size;
    void *ptr = NULL;
    return __real_posix_memalign(&ptr, alignment < sizeof(void *) ? sizeof(void *) : alignment,
                                 size ? size : 1) == 0 ? ptr : NULL;
}

static void counting_free(void *ctx, void *ptr)
{
    if (ptr)
        ((counting *)ctx)->frees++;
    __real_free(ptr);
}

dfg_allocator counting_allocator(counting *counts)
{
    return (dfg_allocator){counts, counting_alloc, counting_free};
}
