/* A test's scratch folder (see scratch_dir.h). */
#include "tests/support/scratch_dir.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include <errno.h>

static char dir[256];

int scratch_dir_make(const char *prefix)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/%s.XXXXXX", tmp ? tmp : "/tmp", prefix);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return -1;
    }
    return 0;
}

const char *scratch_dir(void) { return dir; }

char *scratch_path(const char *name)
{
    static char paths[8][512];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, sizeof paths[0], "%s/%s", dir, name);
    return p;
}

void scratch_write(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
}

void scratch_dir_remove(void)
{
    char command[300];
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    if (system(command) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

int scratch_dir_setup(void **state)
{
    (void)state;
    char prefix[128];
    snprintf(prefix, sizeof prefix, "dfg-%s", program_invocation_short_name);
    return scratch_dir_make(prefix);
}

int scratch_dir_teardown(void **state)
{
    (void)state;
    scratch_dir_remove();
    return 0;
}
