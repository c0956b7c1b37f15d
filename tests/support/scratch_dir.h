/* A test's scratch folder: made under $TMPDIR (else /tmp), its files
 * named within it, removed with everything in it at the end. */
#ifndef DFG_TEST_SCRATCH_DIR_H
#define DFG_TEST_SCRATCH_DIR_H

#include <stddef.h>

/* Makes the folder PREFIX.XXXXXX; 0, or -1 (perror says why). */
int scratch_dir_make(const char *prefix);
/* The folder's path. */
const char *scratch_dir(void);
/* DIR/NAME in one of 8 rotating buffers (valid for 8 more calls). */
char *scratch_path(const char *name);
/* Writes size bytes to path; fails the test if it cannot. */
void scratch_write(const char *path, const void *data, size_t size);
/* Removes the folder and what it holds. */
void scratch_dir_remove(void);
/* As cmocka group setup and teardown: the folder dfg-PROGRAM.XXXXXX
 * (PROGRAM: the test executable's name) made before the group's tests,
 * removed after them. */
int scratch_dir_setup(void **state);
int scratch_dir_teardown(void **state);

#endif
