/* A whole file read into memory, for tests and the conformance runner. */
#ifndef DFG_TEST_FILE_BYTES_H
#define DFG_TEST_FILE_BYTES_H

#include <stddef.h>

/* The bytes of the file at path, malloc'd (one spare byte after them),
 * their count in *size; NULL (and 0) if it cannot be opened or read
 * whole. */
void *file_bytes(const char *path, size_t *size);

#endif
