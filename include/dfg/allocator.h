/* Host memory allocator passed to every creating call.
 *
 * A NULL allocator pointer means the C library's aligned allocation and
 * free(). The library copies the struct, so the caller's copy may go away;
 * ctx must outlive every object created with it. alloc returns NULL on
 * failure; free(ctx, NULL) must be harmless. */
#ifndef DFG_ALLOCATOR_H
#define DFG_ALLOCATOR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dfg_allocator {
    void *ctx;
    void *(*alloc)(void *ctx, size_t size, size_t alignment);
    void (*free)(void *ctx, void *ptr);
} dfg_allocator;

#ifdef __cplusplus
}
#endif
#endif
