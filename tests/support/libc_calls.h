/* Counts the calls to malloc & co. made by the objects linked into a test
 * with -Wl,--wrap=malloc,... (tests/meson.build's libc_wrap_args): the
 * library's own (libdfg is linked statically into the tests), not those
 * the C library, oneDNN or OpenMP make inside themselves. And a counting
 * dfg_allocator that bypasses the count. */
#ifndef DFG_TEST_LIBC_CALLS_H
#define DFG_TEST_LIBC_CALLS_H

#include <stddef.h>
#include "dfg/allocator.h"

/* Calls so far, from any thread. */
long libc_calls_count(void);
/* The return address of the latest counted call (NULL before any), to
 * name the caller in a failure message. */
void *libc_calls_last_caller(void);

/* The real ones, uncounted, for a test's own allocator. */
int __real_posix_memalign(void **ptr, size_t alignment, size_t size);
void __real_free(void *ptr);

/* A dfg_allocator counting its calls (through the real functions above,
 * so that libc_calls_count does not see them). */
typedef struct counting {
    _Atomic long allocs, frees, bytes;
} counting;

/* {counts, ...}: counts must outlive what is allocated with it. */
dfg_allocator counting_allocator(counting *counts);

#endif
