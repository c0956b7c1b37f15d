/* A whole file read into memory (see file_bytes.h). */
#include "tests/support/file_bytes.h"

#include <stdio.h>
#include <stdlib.h>

void *file_bytes(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    *size = 0;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *data = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (data && fread(data, 1, (size_t)n, f) != (size_t)n) {
        free(data);
        data = NULL;
    }
    fclose(f);
    if (data)
        *size = (size_t)n;
    return data;
}
