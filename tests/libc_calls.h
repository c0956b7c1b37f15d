/* Counts the calls to malloc & co. made by the objects linked into a test
 * with -Wl,--wrap=malloc,... (tests/meson.build's libc_wrap_args): the
 * library's own, which a session run must not make. */
#ifndef DFG_TEST_LIBC_CALLS_H
#define DFG_TEST_LIBC_CALLS_H

#include <stddef.h>

/* Calls so far, from any thread. */
long libc_calls_count(void);

/* The real ones, uncounted, for a test's own allocator. */
int __real_posix_memalign(void **ptr, size_t alignment, size_t size);
void __real_free(void *ptr);

#endif
